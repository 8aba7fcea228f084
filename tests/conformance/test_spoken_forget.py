"""Spoken forgets on every backend: "forget that" reaches only the thread's previous user
turn (the turns and records of one thread, read back from the store), and a pinned or
application-written memory is held with the reason on the event."""

from __future__ import annotations

import pytest

from engram import FakeClock, Scope, Settings

from .conftest import Backend

pytestmark = [pytest.mark.records, pytest.mark.episodes]  # the store roles it checks (conftest.py, ROLE_MARKERS)
ALICE = Scope.for_user("acme", "alice")


def _say(memory, clock: FakeClock, text: str, thread: str | None):
    clock.advance(minutes=2)
    return memory.add([{"role": "user", "content": text}], ALICE, thread_id=thread)


def _active(memory) -> set[str]:
    return {r.content for r in memory.scan(ALICE)}


def test_forget_that_reaches_only_what_the_previous_turn_of_the_thread_stored(backend: Backend):
    clock = FakeClock()
    memory = backend.memory(clock=clock, settings=Settings(auto_worker=False))
    _say(memory, clock, "I work at a bakery in Leeds.", "t1")
    other_thread = _say(memory, clock, "forget that", "t2")
    assert not other_thread.of("FORGET") and any("Leeds" in t for t in _active(memory))
    _say(memory, clock, "what's a good recipe for sourdough", "t1")
    after_a_question = _say(memory, clock, "forget that", "t1")
    assert not after_a_question.of("FORGET") and any("Leeds" in t for t in _active(memory))
    _say(memory, clock, "I play the cello on Sundays.", "t1")
    taken_back = _say(memory, clock, "forget that", "t1")
    assert [e.content for e in taken_back.of("FORGET")] and not any("cello" in t for t in _active(memory))
    assert any("Leeds" in t for t in _active(memory))


def test_pinned_and_application_memories_are_held_with_a_reason(backend: Backend):
    clock = FakeClock()
    memory = backend.memory(clock=clock, settings=Settings(auto_worker=False))
    pinned = memory.remember("Severe penicillin allergy", ALICE, kind="fact", pinned=True)
    app = memory.remember("Allergic to peanuts", ALICE, kind="fact")
    no_thread = _say(memory, clock, "Forget that.", None)
    assert not no_thread.of("FORGET")
    named = _say(memory, clock, "please forget everything about my allergies", "t1")
    reasons = {e.record_id: e.reason for e in named.of("NOOP") if e.record_id}
    assert not named.of("FORGET") and "pinned" in reasons[pinned.id] and "application" in reasons[app.id]
    assert {pinned.content, app.content} <= _active(memory)
