"""Dates named in a query ("on 16 June, 2023", "in July 2023", "2023年6月", "last
month") turned into a time window, without an LLM.

Retrieval uses the window to fetch memories whose ``valid_from`` falls inside it
and to lift them: a question about a day is most often answered by what was said
that day. A year alone ("in 2023") is too broad to help and is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_MONTHS = {
    name: number
    for number, names in enumerate(
        (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")),
        start=1,
    )
    for name in names
}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr" \
         r"|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d{2})"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ymd", re.compile(rf"\b{_YEAR}[-/.](\d{{1,2}})[-/.](\d{{1,2}})\b")),
    ("dmy", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)),
    ("mdy", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)),
    ("my", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE)),
    ("zh_ymd", re.compile(r"((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")),
    ("zh_ym", re.compile(r"((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月")),
)
_RELATIVE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\byesterday\b|昨天", re.IGNORECASE), "yesterday"),
    (re.compile(r"\btoday\b|今天", re.IGNORECASE), "today"),
    (re.compile(r"\b(?:last|past|previous)\s+week\b|上周|上个星期|上星期", re.IGNORECASE), "week"),
    (re.compile(r"\b(?:last|past|previous)\s+(?:few\s+)?months?\b|上个月", re.IGNORECASE), "month"),
)


@dataclass(frozen=True, slots=True)
class TimeWindow:
    start: datetime  # inclusive
    end: datetime  # exclusive

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


def _day(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None


def _month_window(year: int, month: int) -> TimeWindow | None:
    start = _day(year, month, 1)
    if start is None:
        return None
    end = _day(year + (month == 12), month % 12 + 1, 1)
    # a month's events are still told in the first days of the next one
    return TimeWindow(start, end + timedelta(days=7)) if end else None


def _day_window(moment: datetime | None) -> TimeWindow | None:
    if moment is None:
        return None
    # one day either side: dates in text and timestamps disagree across time zones
    return TimeWindow(moment - timedelta(days=1), moment + timedelta(days=2))


def _absolute(kind: str, groups: tuple[str, ...]) -> TimeWindow | None:
    if kind in ("ymd", "zh_ymd"):
        year, month, day = (int(g) for g in groups)
        return _day_window(_day(year, month, day))
    if kind == "dmy":
        day_text, month_name, year_text = groups
        return _day_window(_day(int(year_text), _MONTHS[month_name.lower()], int(day_text)))
    if kind == "mdy":
        month_name, day_text, year_text = groups
        return _day_window(_day(int(year_text), _MONTHS[month_name.lower()], int(day_text)))
    if kind == "my":
        month_name, year_text = groups
        return _month_window(int(year_text), _MONTHS[month_name.lower()])
    year, month = (int(g) for g in groups)
    return _month_window(year, month)


def time_window(query: str, now: datetime) -> TimeWindow | None:
    """The period the query names, if any: the first absolute date (day or month),
    else a relative one anchored at ``now``."""
    for kind, pattern in _PATTERNS:
        match = pattern.search(query)
        if match:
            window = _absolute(kind, match.groups())
            if window is not None:
                return window
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    for pattern, kind in _RELATIVE:
        if pattern.search(query):
            if kind == "yesterday":
                return TimeWindow(today - timedelta(days=1), today)
            if kind == "today":
                return TimeWindow(today, today + timedelta(days=1))
            if kind == "week":
                return TimeWindow(today - timedelta(days=14), now + timedelta(seconds=1))
            return TimeWindow(today - timedelta(days=62), now + timedelta(seconds=1))
    return None
