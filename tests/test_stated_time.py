"""The time a statement names (English and Chinese, relative and absolute) as the
start of the period, anchored at when it was said; the future and no date give None."""

from datetime import UTC, datetime

import pytest

from engram.pipeline.stated_time import stated_time

SAID = datetime(2026, 6, 15, 10, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize(("text", "expected"), [
    ("we switched to two-level approval last month", datetime(2026, 5, 1)),
    ("我们上个月改成了两级审批", datetime(2026, 5, 1)),
    ("上月起报销要两级审批", datetime(2026, 5, 1)),
    ("去年三月换了供应商", datetime(2025, 3, 1)),
    ("今年3月开始远程办公", datetime(2026, 3, 1)),
    ("2024年5月开始用新系统", datetime(2024, 5, 1)),
    ("2024年5月3日上线", datetime(2024, 5, 3)),
    ("in March 2024 we moved", datetime(2024, 3, 1)),
    ("on 3 February 2025 it started", datetime(2025, 2, 3)),
    ("since 2025-02-03", datetime(2025, 2, 3)),
    ("last March", datetime(2026, 3, 1)),
    ("in July we hired two people", datetime(2025, 7, 1)),  # July has not come yet this year
    ("since 2023", datetime(2023, 1, 1)),
    ("we moved 3 weeks ago", datetime(2026, 5, 25)),
    ("two months ago", datetime(2026, 4, 1)),
    ("三天前", datetime(2026, 6, 12)),
    ("两个月前离职了", datetime(2026, 4, 1)),
    ("yesterday", datetime(2026, 6, 14)),
    ("前天", datetime(2026, 6, 13)),
    ("last week", datetime(2026, 6, 8)),
    ("上周", datetime(2026, 6, 8)),
    ("last year", datetime(2025, 1, 1)),
    ("去年", datetime(2025, 1, 1)),
    ("前年", datetime(2024, 1, 1)),
])
def test_a_stated_past_moment(text, expected):
    assert stated_time(text, SAID) == expected.replace(tzinfo=UTC)


@pytest.mark.parametrize("text", ["I live in Berlin", "next month we will switch", "2027年1月上线",
                                  "in 2031 we retire", "Room 2024 is free"])
def test_no_date_or_the_future_is_none(text):
    assert stated_time(text, SAID) is None
