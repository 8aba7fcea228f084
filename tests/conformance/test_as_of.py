"""Time: a change's stated time becomes its validity ("last month" → valid_from in that
month, and the fact it replaces ends then); as-of reads answer what was valid at T,
superseded versions then current included."""

from datetime import UTC, datetime

import pytest

from engram import FakeClock, Scope

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)

ALICE = Scope.for_user("acme", "alice")


def test_a_stated_change_is_valid_from_the_month_it_names(backend):
    clock = FakeClock(datetime(2026, 6, 15, 10, tzinfo=UTC))
    memory = backend.memory(clock=clock)
    result = memory.add([{"role": "user", "content": "We switched to two-level approval last month"}], ALICE)
    record = memory.get(result.events[0].record_id, ALICE)
    assert record.valid_from == datetime(2026, 5, 1, tzinfo=UTC)
    assert record.created_at == clock.now()
    zh = memory.add([{"role": "user", "content": "我们上个月改成了两级审批"}], Scope.for_user("acme", "li"))
    assert memory.get(zh.events[0].record_id, Scope.for_user("acme", "li")).valid_from == datetime(
        2026, 5, 1, tzinfo=UTC)
    moved = memory.add([{"role": "user", "content": "I moved to Berlin in March 2024"}], Scope.for_user("acme", "b"))
    assert memory.get(moved.events[0].record_id, Scope.for_user("acme", "b")).valid_from == datetime(
        2024, 3, 1, tzinfo=UTC)  # the extracted fact drops the date; the message it came from names it


def test_search_and_context_as_of_answer_what_was_valid_then(backend):
    clock = FakeClock(datetime(2026, 1, 10, tzinfo=UTC))
    memory = backend.memory(clock=clock)
    old = memory.remember("Expense approval is single-level", ALICE)
    clock.advance(days=156)  # 2026-06-15
    retired, _new = memory.supersede(old.id, ALICE, "Expense approval is two-level",
                                    valid_from=datetime(2026, 5, 1, tzinfo=UTC))
    assert retired.valid_to == datetime(2026, 5, 1, tzinfo=UTC)  # the old rule ended when the new one began

    def found(moment):
        return [h.record.content for h in memory.search("expense approval", ALICE, as_of=moment)]

    assert found(datetime(2026, 3, 1, tzinfo=UTC)) == ["Expense approval is single-level"]
    assert found(datetime(2026, 5, 20, tzinfo=UTC)) == ["Expense approval is two-level"]
    assert found(datetime(2025, 12, 1, tzinfo=UTC)) == []  # nothing was known to hold then
    assert [h.record.content for h in memory.search("expense approval", ALICE)] == ["Expense approval is two-level"]
    block = memory.context("expense approval", ALICE, as_of=datetime(2026, 3, 1, tzinfo=UTC))
    assert "single-level" in block.text and "two-level" not in block.text
    forgotten = memory.remember("Expense approval needs a receipt", ALICE)
    memory.forget(forgotten.id, ALICE)
    assert "Expense approval needs a receipt" not in found(clock.now())
