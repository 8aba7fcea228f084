"""The governance tables on every backend: pending changes, recalls and write samples
written through WriteBatch.governance (in the batch's transaction) and read back by
the Store protocol's three governance reads."""

from datetime import timedelta

import pytest

from engram import ConflictError, InvalidValueError, NotFoundError, Scope
from engram.model import Kind, MemoryRecord, Operation, Source, freeze_mapping
from engram.store.base import WriteBatch
from engram.values.governance import (
    AnswerLink,
    GovernanceWrites,
    PendingChange,
    PendingDecision,
    PendingQuery,
    PendingStatus,
    ProposedChange,
    RecalledMemory,
    RecallEvent,
    RecallQuery,
    SampleQuery,
    SampleVerdict,
    Verdict,
    WriteSample,
)

pytestmark = [pytest.mark.governance_reads]  # the store roles it checks (conftest.py, ROLE_MARKERS)


def _record(record_id: str, scope: Scope, at, content="Quarterly reports go to finance@acme.example") -> MemoryRecord:
    return MemoryRecord(record_id, scope, Kind.RULE, content, 0.8, 1.0, at, at, at, category="policy",
                        metadata=freeze_mapping({"path": "/policies/reports.md"}), source=Source("agent", "t1", "m1"))


def _pending(pending_id: str, scope: Scope, at, *, record_id="r1", hours=72) -> PendingChange:
    record = _record(record_id, scope, at)
    return PendingChange(pending_id, scope.tenant, scope.namespace, PendingStatus.PENDING, at,
                         at + timedelta(hours=hours), "agent", "ADD: new fact", "org policies: namespace orgs/acme",
                         (ProposedChange(Operation.CREATE, record, None, "new", {"event": "ADD"}),),
                         {"thread_id": "t1"})


def test_pending_changes_round_trip_and_are_decided_once(memory, clock):
    store, now = memory._store, clock.now()
    org, other = Scope("acme", ("orgs", "acme")), Scope("acme", ("users", "bob"))
    store.apply(WriteBatch("acme", governance=GovernanceWrites(pending=(
        _pending("p1", org, now), _pending("p2", other, now + timedelta(seconds=1), record_id="r2", hours=1)))))
    store.apply(WriteBatch("globex", governance=GovernanceWrites(pending=(
        _pending("p3", Scope("globex", ("orgs", "g")), now),))))
    found = store.pending_changes("acme", PendingQuery())
    assert [p.id for p in found] == ["p1", "p2"]
    first = found[0]
    assert first == _pending("p1", org, now)
    assert first.record.content.startswith("Quarterly") and first.changes[0].detail == {"event": "ADD"}
    assert [p.id for p in store.pending_changes("acme", PendingQuery(namespace=("orgs",)))] == ["p1"]
    assert [p.id for p in store.pending_changes("acme", PendingQuery(record_id="r2"))] == ["p2"]
    assert [p.id for p in store.pending_changes("acme", PendingQuery(ids=("p2", "nope")))] == ["p2"]
    due = store.pending_changes("acme", PendingQuery(expires_before=now + timedelta(hours=2)))
    assert [p.id for p in due] == ["p2"]
    assert {p.id for p in store.pending_changes(None, PendingQuery())} == {"p1", "p2", "p3"}
    decided = PendingDecision("p1", PendingStatus.APPROVED, "reviewer", now, "fine")
    store.apply(WriteBatch("acme", governance=GovernanceWrites(decisions=(decided,))))
    again = PendingDecision("p1", PendingStatus.REJECTED, "other", now, "no")
    with pytest.raises(ConflictError, match="no longer pending"):
        store.apply(WriteBatch("acme", governance=GovernanceWrites(decisions=(again,))))
    stored = store.pending_changes("acme", PendingQuery(ids=("p1",)))[0]
    assert (stored.status, stored.decided_by, stored.decided_at, stored.decision_reason) == (
        PendingStatus.APPROVED, "reviewer", now, "fine")
    pending_only = store.pending_changes("acme", PendingQuery(statuses=(PendingStatus.PENDING,)))
    assert [p.id for p in pending_only] == ["p2"]


def test_a_decision_on_another_tenants_change_touches_nothing(memory, clock):
    store, now = memory._store, clock.now()
    store.apply(WriteBatch("globex", governance=GovernanceWrites(pending=(
        _pending("p1", Scope("globex", ("orgs", "g")), now),))))
    with pytest.raises(ConflictError):
        store.apply(WriteBatch("acme", governance=GovernanceWrites(
            decisions=(PendingDecision("p1", PendingStatus.APPROVED, "x", now),))))
    assert store.pending_changes("globex", PendingQuery())[0].status is PendingStatus.PENDING


def test_recalls_record_the_memories_and_later_the_answer(memory, clock):
    store, now = memory._store, clock.now()
    recall = RecallEvent("rc1", "acme", now, "graph", (RecalledMemory("a", 1, 0.9), RecalledMemory("b", 3, 0.4)),
                         12.5, "t1")
    store.apply(WriteBatch("acme", governance=GovernanceWrites(recalls=(
        recall, RecallEvent("rc2", "acme", now + timedelta(minutes=5), "graph", (), 3.0, "t2")))))
    assert store.recalls("acme", RecallQuery(ids=("rc1",))) == [recall]
    assert store.recalls("globex", RecallQuery(ids=("rc1",))) == []
    link = AnswerLink("rc1", "msg-42", now + timedelta(seconds=2), ("a",))
    store.apply(WriteBatch("acme", governance=GovernanceWrites(answers=(link,))))
    answered = store.recalls("acme", RecallQuery(answer_id="msg-42"))
    assert [(r.id, r.answer_id, r.answered_at, r.used) for r in answered] == [("rc1", "msg-42", link.at, ("a",))]
    assert [r.id for r in store.recalls("acme", RecallQuery(thread_id="t2"))] == ["rc2"]
    assert [r.id for r in store.recalls("acme", RecallQuery(since=now + timedelta(minutes=1)))] == ["rc2"]
    with pytest.raises(NotFoundError):
        store.apply(WriteBatch("acme", governance=GovernanceWrites(answers=(AnswerLink("nope", "m", now, ()),))))


def test_write_samples_are_queued_once_and_judged(memory, clock):
    store, now = memory._store, clock.now()
    sample = WriteSample("s1", "acme", "r1", 2, ("users", "alice"), "pipeline", now - timedelta(hours=1), now)
    twin = WriteSample("s2", "acme", "r1", 2, ("users", "alice"), "pipeline", now - timedelta(hours=1), now)
    store.apply(WriteBatch("acme", governance=GovernanceWrites(samples=(sample,))))
    store.apply(WriteBatch("acme", governance=GovernanceWrites(samples=(twin,))))  # the same version: ignored
    assert store.write_samples("acme", SampleQuery()) == [sample]
    verdict = SampleVerdict("s1", Verdict.SHOULD_NOT_STORE, "reviewer", now, "a one-off remark")
    store.apply(WriteBatch("acme", governance=GovernanceWrites(verdicts=(verdict,))))
    judged = store.write_samples("acme", SampleQuery(reviewed=True))
    assert [(s.verdict, s.reviewer, s.reviewed_at, s.note) for s in judged] == [
        (Verdict.SHOULD_NOT_STORE, "reviewer", now, "a one-off remark")]
    assert store.write_samples("acme", SampleQuery(reviewed=False)) == []
    assert store.write_samples("acme", SampleQuery(namespace=("users", "bob"))) == []
    assert store.write_samples("acme", SampleQuery(written_after=now)) == []
    with pytest.raises(NotFoundError):
        store.apply(WriteBatch("acme", governance=GovernanceWrites(
            verdicts=(SampleVerdict("s9", Verdict.WRONG, "r", now),))))


def test_a_purge_drops_the_records_proposals_and_samples(memory, clock, alice):
    record = memory.remember("Likes hiking", alice)
    store, now = memory._store, clock.now()
    proposal = _pending("p1", alice, now, record_id=record.id)
    elsewhere = _pending("p2", Scope("acme", ("users", "alice", "drafts")), now, record_id="r-new")
    untouched = _pending("p3", Scope("acme", ("users", "bob")), now, record_id="r-bob")
    sample = WriteSample("s1", "acme", record.id, 1, alice.namespace, "app", now, now)
    store.apply(WriteBatch("acme", governance=GovernanceWrites(pending=(proposal, elsewhere, untouched),
                                                               samples=(sample,))))
    memory.purge(record.id, alice)
    assert {p.id for p in store.pending_changes("acme", PendingQuery())} == {"p2", "p3"}
    assert store.write_samples("acme", SampleQuery()) == []
    memory.purge_scope(alice)  # nothing stored there any more; its proposals go too
    assert {p.id for p in store.pending_changes("acme", PendingQuery())} == {"p3"}


def test_governance_rows_a_backend_cannot_store_are_refused_everywhere(memory, clock):
    store, now = memory._store, clock.now()
    bad = _pending("p1", Scope("acme", ("orgs", "a")), now)
    bad = PendingChange(bad.id, bad.tenant, bad.namespace, bad.status, bad.created_at, bad.expires_at, "agent\x00",
                        bad.reason, bad.rule, bad.changes)
    with pytest.raises(InvalidValueError):
        store.apply(WriteBatch("acme", governance=GovernanceWrites(
            pending=(bad,), recalls=(RecallEvent("rc", "acme", now, "x", ()),))))
    assert store.pending_changes("acme", PendingQuery()) == [] and store.recalls("acme", RecallQuery()) == []
