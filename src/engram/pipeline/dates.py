"""Relative time in a memory's words, made absolute at the moment it was said.

"Last month we switched to two-level approval" is true next year too, but "last
month" is not: read then, it names the wrong month. A memory keeps the date the
words meant — "In February 2026 we switched…", "2026年2月改成了两级审批",
"starts on 1 April 2026" — while ``stated_time`` (stated_time.py) still gives the
record its ``valid_from`` from the same words. Days, weeks, months and years,
before and after, in English and Chinese; an expression that names no single
period ("recently", "最近", a bare weekday) is left as said.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

_EN_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December")
_WEEKDAYS_EN = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_WEEKDAY_NAMES = "一二三四五六日"
_COUNT_EN = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "a couple of": 2,
             "a few": 3}
_COUNT_ZH = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
             "半": 0}


def _day(moment: datetime, days: int = 0) -> datetime:
    return (moment + timedelta(days=days)).replace(hour=0, minute=0, second=0, microsecond=0)


def _month(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 + months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def _monday(moment: datetime, weeks: int) -> datetime:
    return _day(moment, -moment.weekday() + 7 * weeks)


def _en_day(d: datetime) -> str:
    return f"{d.day} {_EN_MONTHS[d.month - 1]} {d.year}"


def _zh_day(d: datetime) -> str:
    return f"{d.year}年{d.month}月{d.day}日"


def _en(now: datetime) -> list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]:
    def weekday(match: re.Match[str]) -> str:
        target = _WEEKDAYS_EN[match.group(2).lower()]
        weeks = 1 if match.group(1).lower() == "next" else -1 if match.group(1).lower() == "last" else 0
        return f"on {match.group(2).capitalize()} {_en_day(_day(_monday(now, weeks), target))}"

    def ago(match: re.Match[str]) -> str:
        count = _COUNT_EN.get(match.group(1).lower()) or int(match.group(1))
        unit = match.group(2).lower().rstrip("s")
        if unit == "day":
            return f"on {_en_day(_day(now, -count))}"
        if unit == "week":
            return f"in the week of {_en_day(_monday(now, -count))}"
        if unit == "month":
            m = _month(now, -count)
            return f"in {_EN_MONTHS[m.month - 1]} {m.year}"
        return f"in {now.year - count}"

    def month(offset: int) -> Callable[[re.Match[str]], str]:
        m = _month(now, offset)
        return lambda match: f"{match.group('prep') or 'in'} {_EN_MONTHS[m.month - 1]} {m.year}"

    def year(offset: int) -> Callable[[re.Match[str]], str]:
        return lambda match: f"{match.group('prep') or 'in'} {now.year + offset}"

    def week(offset: int) -> Callable[[re.Match[str]], str]:
        return lambda match: f"{match.group('prep') or 'in'} the week of {_en_day(_monday(now, offset))}"

    prep = r"\b(?:(?P<prep>in|from|by|since|until|till|of|for|before|after|during)\s+)?(?:the\s+)?"

    return [
        (re.compile(r"\b(next|last|this|coming)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
                    re.I), weekday),
        (re.compile(r"\b(\d{1,2}|a couple of|a few|an?|one|two|three|four|five|six)\s+(days?|weeks?|months?|years?)"
                    r"\s+ago\b", re.I), ago),
        (re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b", re.I), lambda _: f"on {_en_day(_day(now, -2))}"),
        (re.compile(r"\b(?:the\s+)?day\s+after\s+tomorrow\b", re.I), lambda _: f"on {_en_day(_day(now, 2))}"),
        (re.compile(r"\byesterday\b", re.I), lambda _: f"on {_en_day(_day(now, -1))}"),
        (re.compile(r"\btoday\b", re.I), lambda _: f"on {_en_day(_day(now))}"),
        (re.compile(r"\btomorrow\b", re.I), lambda _: f"on {_en_day(_day(now, 1))}"),
        (re.compile(prep + r"last\s+week\b", re.I), week(-1)),
        (re.compile(prep + r"next\s+week\b", re.I), week(1)),
        (re.compile(prep + r"last\s+month\b", re.I), month(-1)),
        (re.compile(prep + r"this\s+month\b", re.I), month(0)),
        (re.compile(prep + r"next\s+month\b", re.I), month(1)),
        (re.compile(prep + r"last\s+year\b", re.I), year(-1)),
        (re.compile(prep + r"this\s+year\b", re.I), year(0)),
        (re.compile(prep + r"next\s+year\b", re.I), year(1)),
    ]


def _zh(now: datetime) -> list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]:
    def weekday(match: re.Match[str]) -> str:
        weeks = {"下": 1, "上": -1}.get(match.group(1), 0)
        target = _WEEKDAYS_ZH[match.group(3)]
        day = _day(_monday(now, weeks), target)
        return f"{_zh_day(day)}（周{_ZH_WEEKDAY_NAMES[target]}）"

    def ago(match: re.Match[str]) -> str:
        raw, unit = match.group(1), match.group(2)
        count = int(raw) if raw.isdigit() else _COUNT_ZH.get(raw, 0)
        if not count:
            return match.group(0)
        if unit in ("天", "日"):
            return _zh_day(_day(now, -count))
        if unit in ("周", "星期", "个星期", "礼拜", "个礼拜"):
            return f"{_zh_day(_monday(now, -count))}那周"
        if unit in ("个月", "月"):
            m = _month(now, -count)
            return f"{m.year}年{m.month}月"
        return f"{now.year - count}年"

    def month(offset: int) -> Callable[[re.Match[str]], str]:
        return lambda _: f"{_month(now, offset).year}年{_month(now, offset).month}月"

    return [
        (re.compile(r"(下|上|这|本)(?:个)?(周|星期|礼拜)([一二三四五六日天])"), weekday),
        (re.compile(r"(\d{1,2}|[一两二三四五六七八九十])\s*(天|日|个星期|星期|周|个礼拜|礼拜|个月|年)前"), ago),
        (re.compile(r"前天"), lambda _: _zh_day(_day(now, -2))),
        (re.compile(r"后天"), lambda _: _zh_day(_day(now, 2))),
        (re.compile(r"昨天|昨儿"), lambda _: _zh_day(_day(now, -1))),
        (re.compile(r"今天|今儿"), lambda _: _zh_day(_day(now))),
        (re.compile(r"明天|明儿"), lambda _: _zh_day(_day(now, 1))),
        (re.compile(r"上(?:个)?(?:周|星期|礼拜)"), lambda _: f"{_zh_day(_monday(now, -1))}那周"),
        (re.compile(r"下(?:个)?(?:周|星期|礼拜)"), lambda _: f"{_zh_day(_monday(now, 1))}那周"),
        (re.compile(r"上个?月"), month(-1)),
        (re.compile(r"(?:这个|本)月"), month(0)),
        (re.compile(r"下个?月"), month(1)),
        (re.compile(r"去年"), lambda _: f"{now.year - 1}年"),
        (re.compile(r"前年"), lambda _: f"{now.year - 2}年"),
        (re.compile(r"今年"), lambda _: f"{now.year}年"),
        (re.compile(r"明年"), lambda _: f"{now.year + 1}年"),
    ]


def resolve_relative(text: str, said_at: datetime) -> str:
    """``text`` with its relative days, weeks, months and years as the dates they meant
    when said at ``said_at`` (UTC)."""
    now = said_at.astimezone(UTC)
    for pattern, write in _zh(now) + _en(now):
        text = pattern.sub(write, text)
    return text
