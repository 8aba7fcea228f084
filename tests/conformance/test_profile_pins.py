"""A pin stays (issue 28, item 2): a memory pinned into the profile is in profile() and
context() however many memories outrank it, within the profile's share of the budget."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram import FakeClock, MemoryDraft, Scope

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)

ALICE = Scope.for_user("acme", "alice")


def _seed(memory, count: int) -> str:
    pin = memory.remember("Call her Sasha, never Alexandra", ALICE, importance=0.1, pinned=True)
    memory.remember_many([MemoryDraft(f"Likes board game number {n}", kind="preference", importance=0.9)
                          for n in range(count)], ALICE)
    return pin.id


def test_a_low_importance_pin_stays_in_the_profile_under_600_more_important_memories(backend):
    clock = FakeClock(datetime(2026, 3, 1, tzinfo=UTC))
    memory = backend.memory(clock=clock)
    pin = _seed(memory, 600)
    assert memory.settings.profile_scan < 600  # the pin is outside the most important ones read
    profile = memory.profile(ALICE)
    assert profile[0].id == pin
    block = memory.context("what should I order for dinner?", ALICE, budget_tokens=400)
    assert pin in block.profile and "Call her Sasha" in block.text
    clock.advance(days=1)
    assert pin in [r.id for r in memory.profile(ALICE, as_of=clock.now())]


def test_unpinning_takes_it_out_again(backend):
    memory = backend.memory()
    pin = _seed(memory, 20)
    memory.update(pin, ALICE, pinned=False)
    assert pin not in [r.id for r in memory.profile(ALICE)]
