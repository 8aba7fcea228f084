"""Episodic memory on every backend: turns kept in threads by add(), searched by
words and meaning within the caller's scope only, screened by the PII policy before
they reach disk, purged with their user, dropped by retention."""

from __future__ import annotations

from datetime import timedelta

import pytest

from engram import InvalidValueError, NotFoundError, PIIPolicy, Scope, Settings
from engram.errors import ConflictError
from engram.store.base import WriteBatch
from engram.values.episodes import EpisodeWrites, TurnDraft, WatermarkMove

pytestmark = [pytest.mark.episodes, pytest.mark.store_admin]  # the store roles it checks (conftest.py, ROLE_MARKERS)

PRINTER = [
    {"role": "user", "content": "My printer shows error E42 whenever I print a PDF"},
    {"role": "assistant", "content": "Reset the fuser unit from the service menu"},
    {"role": "user", "content": "That fixed it, thanks"},
]


def test_add_keeps_the_turns_in_their_thread(memory, alice, clock):
    memory.add(PRINTER, alice, thread_id="t1")
    clock.advance(minutes=1)
    memory.add([{"role": "user", "content": "One more question about invoices"}], alice, thread_id="t2")
    threads = memory.threads.list(alice)
    assert [t.id for t in threads] == ["t2", "t1"]  # most recent first
    assert (threads[1].turns, threads[1].started_at) == (3, clock.now() - timedelta(minutes=1))
    assert dict(threads[1].metadata) == {"user": "alice", "surface": "pipeline"}  # who it belongs to, who kept it
    assert memory.stats("acme").extra["episodes"] == {"threads": 2, "turns": 4}
    assert memory.stats("globex").extra["episodes"] == {"threads": 0, "turns": 0}
    turns = memory.threads.turns("t1", alice)
    assert [(t.role, t.content) for t in turns] == [(m["role"], m["content"]) for m in PRINTER]
    assert [t.seq for t in turns] == sorted(t.seq for t in turns)
    with pytest.raises(NotFoundError):
        memory.threads.turns("t1", Scope.for_user("acme", "bob"))


def test_turns_without_a_thread_continue_the_last_automatic_thread_until_idle(memory, alice, clock):
    first = memory.threads.record(["hello there"], alice)
    clock.advance(minutes=10)
    assert memory.threads.record(["still here"], alice) == first
    clock.advance(hours=2)
    third = memory.threads.record(["back again"], alice)
    assert third != first and third.startswith("auto-")
    assert {t.id: t.turns for t in memory.threads.list(alice)} == {first: 2, third: 1}


def test_search_past_conversations_finds_the_thread_with_its_neighbours(memory, alice, bob):
    memory.add(PRINTER, alice, thread_id="printer")
    memory.add([{"role": "user", "content": "Book a table for two in Lisbon on Friday"}], alice, thread_id="food")
    memory.add([{"role": "user", "content": "My printer is out of toner"}], bob, thread_id="bob-printer")
    found = memory.threads.search("printer error E42", alice, k=3)
    assert found[0].thread_id == "printer"
    assert [t.content for t in found[0].turns][:2] == [PRINTER[0]["content"], PRINTER[1]["content"]]
    assert found[0].turns[0].matched is True
    assert all(e.thread_id != "bob-printer" for e in found)  # another user's conversations never show
    assert all(e.thread_id != "bob-printer" for e in memory.threads.search("toner", alice))


def test_an_org_search_covers_every_user_below_it(memory):
    org = Scope("acme", ("orgs", "acme"))
    memory.threads.record(["The VPN needs the new certificate"], org.child("users", "ann"), thread_id="a")
    memory.threads.record(["Install the VPN certificate from the portal"], org.child("users", "ben"), thread_id="b")
    assert memory.threads.search("VPN certificate", org) == []  # the org scope itself holds none
    wide = memory.threads.search("VPN certificate", org, include_descendants=True)
    assert {e.thread_id for e in wide} == {"a", "b"}


def test_bad_search_arguments_are_refused(memory, alice):
    with pytest.raises(InvalidValueError):
        memory.threads.search("  ", alice)
    with pytest.raises(InvalidValueError):
        memory.threads.search("x", alice, k=0)
    with pytest.raises(InvalidValueError):
        memory.threads.search("x", alice, window=-1)


def test_turns_are_screened_by_the_pii_policy_before_they_reach_disk(backend, clock, alice):
    memory = backend.memory(clock=clock, pii=PIIPolicy(actions={"email": "mask", "secret": "forbid"}))
    memory.threads.record(["write to alice@example.com", "my password is hunter2secret"], alice, thread_id="t")
    stored = [row[0] for row in backend.raw("SELECT content FROM turns ORDER BY seq")]
    assert stored[0] == "write to [EMAIL]"
    assert "hunter2secret" not in stored[1]
    terms = " ".join(row[0] for row in backend.raw("SELECT terms FROM turns"))
    assert "example" not in terms and "hunter2secret" not in terms
    assert memory.threads.search("write", alice)[0].turns[0].content == "write to [EMAIL]"


def test_a_purge_of_the_user_takes_their_conversations(memory, alice, bob):
    memory.add(PRINTER, alice, thread_id="t1")
    memory.threads.record(["bob's turn"], bob, thread_id="b")
    memory.purge_scope(alice, reason="right to be forgotten")
    assert memory.threads.list(alice) == []
    assert memory.threads.search("printer", alice) == []
    assert [t.id for t in memory.threads.list(bob)] == ["b"]


def test_episodes_can_be_switched_off(backend, clock, alice):
    memory = backend.memory(clock=clock, settings=Settings(episodes=False, embedder="fake-hash"))
    memory.add(PRINTER, alice, thread_id="t1")
    assert memory.threads.list(alice) == []
    assert memory.threads.record(["x"], alice) is None


def test_retention_drops_old_turns_per_tenant(backend, clock):
    settings = Settings(episode_retention='{"default": 30, "tenants": {"globex": null}}', embedder="fake-hash")
    memory = backend.memory(clock=clock, settings=settings)
    acme, globex = Scope.for_user("acme", "a"), Scope.for_user("globex", "g")
    memory.threads.record(["old acme turn"], acme, thread_id="old")
    memory.threads.record(["old globex turn"], globex, thread_id="old")
    clock.advance(days=40)
    memory.threads.record(["new acme turn"], acme, thread_id="new")
    memory.remember("a fact", acme)
    memory.remember("a fact", globex)
    memory.maintenance.run()
    assert [t.id for t in memory.threads.list(acme)] == ["new"]
    assert [t.id for t in memory.threads.list(globex)] == ["old"]  # kept forever


def test_the_watermark_moves_by_compare_and_swap(memory, alice, clock):
    store, now = memory._store, clock.now()
    store.apply(WriteBatch("acme", episodes=EpisodeWrites(turns=(TurnDraft(alice.namespace, "t", "user", "x", now,
                                                                            terms="x"),))))
    store.apply(WriteBatch("acme", episodes=EpisodeWrites(watermarks=(WatermarkMove(alice.namespace, 0, 1, now),))))
    assert store.watermark("acme", alice.namespace) == 1
    with pytest.raises(ConflictError):
        store.apply(WriteBatch("acme", episodes=EpisodeWrites(
            watermarks=(WatermarkMove(alice.namespace, 0, 1, now),))))
    assert store.watermark("acme", alice.namespace) == 1


def test_one_lease_holder_per_scope(memory, alice, clock):
    store, now = memory._store, clock.now()
    with store.scope_lease("acme", alice.namespace, "w1", now, 60) as first:
        assert first is True
        with store.scope_lease("acme", alice.namespace, "w2", now, 60) as second:
            assert second is False
        with store.scope_lease("acme", ("users", "bob"), "w2", now, 60) as other_scope:
            assert other_scope is True
    with store.scope_lease("acme", alice.namespace, "w2", now, 60) as after_release:
        assert after_release is True
