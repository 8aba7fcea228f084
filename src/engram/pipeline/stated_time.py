"""When a statement says a change happened: "we switched to two-level approval last
month" became true last month, not when it was written down. ``stated_time`` finds
the moment a text names (English and Chinese, relative and absolute) and returns
the start of that period, anchored at when the text was said; the pipeline uses it
as the memory's ``valid_from``. Only the past counts: a plan ("next month") or a
date after the reference moment is not a validity start, and None means "now".

    last month / 上个月 / 上月        → the first day of the previous month
    last week / 上周                  → the Monday of the previous week
    last year / 去年, 前年            → 1 January of that year
    yesterday / 昨天, 前天            → that day
    3 days|weeks|months|years ago / 3天前, 两个月前, 三年前
    in March 2024 / March 2024 / 2024年5月 / 2024年5月3日 / 2024-05-03
    last March / 去年三月 / 今年3月   → that month (the most recent one before now)
    in 2023 / 2023年                  → 1 January 2023
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_MONTHS = {name: i for i, names in enumerate(
    (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")), start=1) for name in names}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar" \
         r"|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9, "十": 10}
_ZH_NUM = r"(\d{1,2}|[一二两三四五六七八九十]{1,3})"
_UNITS = {"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
          "year": "year", "years": "year", "天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week",
          "个月": "month", "月": "month", "年": "year"}
_WORD_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3}

_ABSOLUTE = (
    ("ymd", re.compile(r"\b((?:19|20)\d{2})[-/.](\d{1,2})[-/.](\d{1,2})\b")),
    ("zh_ymd", re.compile(r"((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")),
    ("zh_ym", re.compile(r"((?:19|20)\d{2})\s*年\s*(\d{1,2}|[一二三四五六七八九十]{1,3})\s*月")),
    ("dmy", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\.?,?\s+((?:19|20)\d{{2}})\b", re.I)),
    ("mdy", re.compile(rf"\b{_MONTH}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{{2}})\b", re.I)),
    ("my", re.compile(rf"\b{_MONTH}\.?,?\s+(?:of\s+)?((?:19|20)\d{{2}})\b", re.I)),
    ("zh_rel_month", re.compile(rf"(去年|前年|今年)\s*{_ZH_NUM}\s*月")),
    ("en_rel_month", re.compile(rf"\b(last|this)\s+{_MONTH}\b", re.I)),
    ("en_in_month", re.compile(rf"\b(?:in|since|from)\s+{_MONTH}\b(?!\s*\d)", re.I)),
    ("year", re.compile(r"\b(?:in|since|from)\s+((?:19|20)\d{2})\b", re.I)),
    ("zh_year", re.compile(r"((?:19|20)\d{2})\s*年(?!\s*\d)")),
)
_AGO = (
    re.compile(r"\b(\d{1,3}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
               r"\s+(days?|weeks?|months?|years?)\s+ago\b", re.I),
    re.compile(rf"{_ZH_NUM}\s*(天|日|个星期|星期|周|个月|年)(?:以)?前"),
)
_RELATIVE = (
    (re.compile(r"\byesterday\b|昨天", re.I), ("day", 1)),
    (re.compile(r"前天"), ("day", 2)),
    (re.compile(r"\blast\s+week\b|上周|上个星期|上星期|上个礼拜", re.I), ("week", 1)),
    (re.compile(r"\blast\s+month\b|上个月|上月", re.I), ("month", 1)),
    (re.compile(r"\blast\s+year\b|去年", re.I), ("year", 1)),
    (re.compile(r"前年"), ("year", 2)),
)


def _zh_number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if text.startswith("十"):
        return 10 + _ZH_DIGITS.get(text[1:], 0)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return _ZH_DIGITS.get(tens, 0) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0)
    return _ZH_DIGITS.get(text)


def _date(year: int, month: int = 1, day: int = 1) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None


def _months_back(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 - months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def _back(now: datetime, unit: str, count: int) -> datetime:
    """The start of the period ``count`` units before ``now``."""
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        return today - timedelta(days=count)
    if unit == "week":
        return today - timedelta(days=today.weekday() + 7 * count)
    if unit == "month":
        return _months_back(today, count)
    return datetime(today.year - count, 1, 1, tzinfo=UTC)


def _latest_month(now: datetime, month: int, this_year: bool = False) -> datetime | None:
    """The most recent ``month`` that has begun by ``now`` (this year's, else last year's)."""
    start = _date(now.year, month)
    if start is None:
        return None
    return start if start <= now or this_year else _date(now.year - 1, month)


def _absolute(kind: str, groups: tuple[str, ...], now: datetime) -> datetime | None:
    if kind in ("ymd", "zh_ymd"):
        return _date(*(int(g) for g in groups))
    if kind == "zh_ym":
        month = _zh_number(groups[1])
        return _date(int(groups[0]), month) if month else None
    if kind == "dmy":
        return _date(int(groups[2]), _MONTHS[groups[1].lower()], int(groups[0]))
    if kind == "mdy":
        return _date(int(groups[2]), _MONTHS[groups[0].lower()], int(groups[1]))
    if kind == "my":
        return _date(int(groups[1]), _MONTHS[groups[0].lower()])
    if kind == "zh_rel_month":
        month = _zh_number(groups[1])
        offset = {"今年": 0, "去年": 1, "前年": 2}[groups[0]]
        return _date(now.year - offset, month) if month else None
    if kind == "en_rel_month":
        month = _MONTHS[groups[1].lower()]
        if groups[0].lower() == "this":
            return _date(now.year, month)
        latest = _latest_month(now, month)
        # "last March" said in March means the March of last year
        return _date(now.year - 1, month) if latest and latest.year == now.year and month == now.month else latest
    if kind == "en_in_month":
        return _latest_month(now, _MONTHS[groups[0].lower()])
    return _date(int(groups[0]))  # year, zh_year


def stated_time(text: str, now: datetime) -> datetime | None:
    """The start of the past moment ``text`` names, anchored at ``now`` (when it was
    said), or None when it names none (or only the future)."""
    now = now.astimezone(UTC)
    found: datetime | None = None
    for kind, pattern in _ABSOLUTE:
        match = pattern.search(text)
        if match:
            found = _absolute(kind, match.groups(), now)
            if found is not None:
                break
    if found is None:
        found = _relative(text, now)
    return found if found is not None and found <= now else None


def _relative(text: str, now: datetime) -> datetime | None:
    for pattern in _AGO:
        match = pattern.search(text)
        if match:
            raw, unit = match.group(1), match.group(2)
            count = _WORD_NUMBERS.get(raw.lower()) or (_zh_number(raw) if not raw.isascii() else int(raw)
                                                        if raw.isdigit() else None)
            if count:
                return _back(now, _UNITS[unit.lower()], count)
    for pattern, (unit, count) in _RELATIVE:
        if pattern.search(text):
            return _back(now, unit, count)
    return None
