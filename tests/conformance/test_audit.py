"""Audit and history are written in the same transaction as the change: a batch
lands entirely or not at all."""

import numpy as np
import pytest

from engram import ConflictError, Operation
from engram.model import Version
from engram.store.base import AuditDraft, RecordWrite, WriteBatch

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)


def test_every_change_has_its_audit_event(memory, alice):
    record = memory.remember("audited", alice, actor="alice")
    memory.update(record.id, alice, content="audited twice", reason="typo")
    memory.forget(record.id, alice)
    events = memory.audit.list(alice, record_id=record.id)
    assert [(e.operation, e.version, e.actor) for e in events] == [
        (Operation.CREATE, 1, "alice"), (Operation.UPDATE, 2, "app"), (Operation.FORGET, 3, "app")]
    assert events[1].detail["reason"] == "typo"
    assert all(e.namespace == alice.namespace and e.tenant == "acme" for e in events)
    assert [e.id for e in events] == sorted(e.id for e in events)
    assert memory.audit.list(alice, operation="update")[0].record_id == record.id
    assert memory.audit.list(alice, since=events[-1].at)[-1].operation is Operation.FORGET


def test_a_failing_batch_rolls_back_entirely(memory, alice):
    first = memory.remember("first", alice)
    second = memory.remember("second", alice)
    before = memory.stats("acme")
    good = RecordWrite(first, "first", np.zeros(64, np.float32), expected_version=1)
    stale = RecordWrite(second, "second", None, expected_version=7)  # wrong version
    version = Version(first.id, 2, Operation.UPDATE, "test", first.updated_at, None, first)
    audit = AuditDraft("test", Operation.UPDATE, first.updated_at, first.id, 2, alice.namespace)
    with pytest.raises(ConflictError):
        memory._store.apply(WriteBatch("acme", records=(good, stale), versions=(version,), audit=(audit,)))
    assert [v.version for v in memory.history(first.id, alice)] == [1]
    assert memory.get(first.id, alice) == first
    after = memory.stats("acme")
    assert (after.versions, after.audit_events, after.records) == (before.versions, before.audit_events,
                                                                   before.records)


def test_a_duplicate_version_rolls_back_the_record_too(memory, alice):
    record = memory.remember("original", alice)
    from dataclasses import replace

    changed = replace(record, content="changed", version=2)
    write = RecordWrite(changed, "changed", None, expected_version=1)
    duplicate = Version(record.id, 1, Operation.UPDATE, "test", record.updated_at, None, changed)
    with pytest.raises(ConflictError):
        memory._store.apply(WriteBatch("acme", records=(write,), versions=(duplicate,)))
    assert memory.get(record.id, alice).content == "original"


def test_inserting_an_existing_id_is_a_conflict(memory, alice):
    record = memory.remember("original", alice)
    with pytest.raises(ConflictError, match="already exists"):
        memory._store.apply(WriteBatch("acme", records=(RecordWrite(record, "x", None, None),)))


def test_recalls_are_audited_and_counted(memory, alice):
    record = memory.remember("the launch is on Tuesday", alice)
    block = memory.context("when is the launch", alice, answer_id="answer-1", thread_id="t-1")
    assert [h.record.id for h in block.hits] == [record.id]
    recall = memory.audit.list(alice, operation="recall")
    assert [(e.record_id, e.detail["answer_id"], e.detail["thread_id"]) for e in recall] == [
        (record.id, "answer-1", "t-1")]
    touched = memory.get(record.id, alice)
    assert touched.access_count == 1 and touched.last_accessed_at == memory.clock.now()
    assert touched.version == 1  # a read that counts is not a new version


def test_the_latest_events_newest_first(memory, alice):
    written = [memory.remember(f"fact {i}", alice).id for i in range(4)]
    latest = memory.audit.list(alice, limit=2, newest_first=True)
    assert [e.record_id for e in latest] == written[:1:-1]  # the last two, the newest first
    assert [e.record_id for e in memory.audit.list(alice, limit=2)] == written[:2]  # default: the oldest, in order


def test_audit_leaves_out_operations_and_recent_recalls_come_newest_first(memory, alice):
    tea = memory.remember("Prefers green tea", alice)
    memory.update(tea.id, alice, content="Prefers jasmine tea")
    first = memory.recall("tea", alice).id
    memory.clock.advance(seconds=1)  # newest first is by time
    last = memory.recall("what tea?", alice).id
    changes = memory.audit.list(alice, newest_first=True, exclude=["recall"])
    assert [e.operation for e in changes] == [Operation.UPDATE, Operation.CREATE]
    recent = memory.audit.recent_recalls(alice, limit=5)
    assert [t.recall.id for t in recent] == [last, first]
    assert recent[0].memories[0].record.content == "Prefers jasmine tea"
    assert [t.recall.id for t in memory.audit.recent_recalls(alice, limit=1)] == [last]
