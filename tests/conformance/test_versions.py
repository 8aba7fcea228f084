"""Versions and history: every change is a new immutable version; compare-and-swap
never loses one, not even between processes."""

import multiprocessing
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from engram import (
    ConflictError,
    FakeHashEmbedder,
    InvalidValueError,
    Memory,
    Operation,
    PermissionDeniedError,
    Status,
)

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)


def test_updates_append_versions_with_snapshots(memory, alice, clock):
    first = memory.remember("likes green tea", alice, tags=["drinks"], metadata={"n": 1})
    clock.advance(hours=1)
    second = memory.update(first.id, alice, content="likes black tea", reason="corrected", actor="alice")
    clock.advance(hours=1)
    third = memory.update(second.id, alice, importance=0.9, metadata={"n": 2})
    history = memory.history(first.id, alice)
    assert [(v.version, v.operation) for v in history] == [
        (1, Operation.CREATE), (2, Operation.UPDATE), (3, Operation.UPDATE)]
    assert [v.record for v in history] == [first, second, third]
    assert history[1].reason == "corrected" and history[1].actor == "alice"
    assert history[1].at == first.created_at + timedelta(hours=1)
    assert memory.get(first.id, alice) == third
    assert dict(third.metadata) == {"n": 2} and third.tags == ("drinks",)


def test_records_round_trip_exactly(memory, alice):
    moment = datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
    record = memory.remember(
        "a fully specified memory", alice, kind="rule", importance=0.123456789, confidence=0.5, category="ops",
        tags=["a", "b", "中文"], metadata={"nested": {"deep": [1, 2.5, "x", True, None]}, "big": 2**62,
                                          "unicode": "é中🧠"},
        sensitivity="personal", valid_from=moment, valid_to=moment + timedelta(days=3),
        expires_at=moment + timedelta(days=2), read_only=True, pinned=True, subject="other:wife sarah",
        slot="allergies",
    )
    assert record.pinned is True and (record.subject, record.slot) == ("other:wife sarah", "allergies")
    assert memory._store.query("acme", _everything(alice)) == [record]
    # reads show it as search sees it: its expiry (2025) has passed
    assert memory.get(record.id, alice) == replace(record, status=Status.EXPIRED)


def test_pinning_is_a_version_and_round_trips_all_three_states(memory, alice):
    record = memory.remember("allergic to shellfish", alice)
    assert record.pinned is None  # engram decides
    out = memory.update(record.id, alice, pinned=False, reason="not for every prompt")
    back = memory.update(record.id, alice, pinned=None)
    assert [v.record.pinned for v in memory.history(record.id, alice)] == [None, False, None]
    assert memory.get(record.id, alice) == back and out.pinned is False
    with pytest.raises(InvalidValueError):
        memory.update(record.id, alice, pinned="yes")
    assert memory.get(record.id, alice).version == 3


def test_subject_and_slot_are_versioned_and_checked(memory, alice):
    record = memory.remember("lives in Austin", alice, slot="residence")
    assert (record.subject, record.slot) == ("user", "residence")
    moved = memory.update(record.id, alice, subject="other:son leo", slot="school", reason="it was his school")
    assert [(v.record.subject, v.record.slot) for v in memory.history(record.id, alice)] == [
        ("user", "residence"), ("other:son leo", "school")]
    assert memory.get(record.id, alice) == moved
    for bad in ({"slot": "favourite colour"}, {"subject": "sarah"}, {"subject": "other: "}, {"subject": ""}):
        with pytest.raises(InvalidValueError):
            memory.update(record.id, alice, **bad)
    with pytest.raises(InvalidValueError):
        memory.remember("x", alice, subject="everyone")
    assert memory.get(record.id, alice) == moved  # nothing written by the refusals


def _everything(scope):
    from engram.store.base import RecordFilter

    return RecordFilter(namespace=scope.namespace, statuses=())


def test_compare_and_swap_refuses_a_stale_version(memory, alice):
    record = memory.remember("v1", alice)
    memory.update(record.id, alice, content="v2")
    with pytest.raises(ConflictError):
        memory.update(record.id, alice, content="stale", expected_version=1)
    assert memory.get(record.id, alice).content == "v2"
    assert [v.version for v in memory.history(record.id, alice)] == [1, 2]


def test_supersede_links_old_and_new(memory, alice, clock):
    old = memory.remember("lives in Paris", alice)
    clock.advance(days=1)
    retired, new = memory.supersede(old.id, alice, "lives in Berlin", reason="moved")
    assert retired.status is Status.SUPERSEDED and retired.superseded_by == new.id
    assert retired.valid_to == clock.now() and new.supersedes == old.id
    assert [h.record.content for h in memory.search("lives", alice)] == ["lives in Berlin"]
    assert [v.operation for v in memory.history(old.id, alice)] == [Operation.CREATE, Operation.SUPERSEDE]


def test_read_only_memories_need_an_override(memory, alice):
    record = memory.remember("the policy", alice, read_only=True)
    with pytest.raises(PermissionDeniedError):
        memory.update(record.id, alice, content="changed")
    with pytest.raises(PermissionDeniedError):
        memory.forget(record.id, alice)
    assert memory.update(record.id, alice, content="changed", override_read_only=True).version == 2


def test_forget_keeps_history_and_leaves_search(memory, alice):
    record = memory.remember("temporary note", alice)
    forgotten = memory.forget(record.id, alice, reason="asked")
    assert forgotten.status is Status.DELETED and forgotten.version == 2
    assert memory.search("temporary note", alice) == []
    assert memory.list(alice).items == ()
    assert [r.id for r in memory.list(alice, statuses=["deleted"]).items] == [record.id]
    assert memory.forget(record.id, alice) == forgotten  # idempotent
    assert [v.version for v in memory.history(record.id, alice)] == [1, 2]


def _update_many(target: str, record_id: str, tenant: str, namespace: tuple, worker: int, count: int) -> int:
    from engram import Scope

    scope = Scope(tenant, namespace)
    conflicts = 0
    with Memory.open(target, embedder=FakeHashEmbedder()) as memory:
        done = 0
        while done < count:
            current = memory.get(record_id, scope)
            try:
                memory.update(record_id, scope, metadata={"worker": worker, "step": done},
                              expected_version=current.version)
                done += 1
            except ConflictError:
                conflicts += 1
    return conflicts


def test_concurrent_updates_from_many_processes_never_lose_a_version(backend, alice):
    backend.require("multi_process")
    memory = backend.memory()
    record = memory.remember("contended", alice)
    workers, each = 4, 8
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        pool.starmap(
            _update_many, [(backend.target, record.id, alice.tenant, alice.namespace, w, each) for w in range(workers)]
        )
    history = memory.history(record.id, alice)
    assert [v.version for v in history] == list(range(1, 2 + workers * each))
    steps = sorted((v.record.metadata["worker"], v.record.metadata["step"]) for v in history[1:])
    assert steps == sorted((w, s) for w in range(workers) for s in range(each))
    updates = memory.audit.list(alice, record_id=record.id, operation="update", limit=1000)
    assert sorted(e.version for e in updates) == list(range(2, 2 + workers * each))
