"""Human approval on every backend: a write an approval rule matches is held as a
pending change (not visible to recall), decided by a reviewer through the facade, and
carried out through the write core as a compare-and-swap; rejections and expiries
are audited."""

from datetime import timedelta

import pytest

from engram import (
    ConflictError,
    InvalidValueError,
    Kind,
    NotFoundError,
    Operation,
    PendingApprovalError,
    PIIPolicy,
    Scope,
    Settings,
)
from engram.approval_rules import ApprovalRule, ApprovalRules
from engram.values.governance import PendingStatus

pytestmark = [pytest.mark.governance_reads]  # the store roles it checks (conftest.py, ROLE_MARKERS)

ORG = Scope("acme", ("orgs", "acme"))
RULES = ApprovalRules((ApprovalRule("org memory", namespaces=("orgs/*",)),))


@pytest.fixture
def governed(backend, clock):
    return backend.memory(clock=clock, approvals=RULES)


def _held(call):
    with pytest.raises(PendingApprovalError) as caught:
        call()
    return caught.value.pending


def test_a_matching_write_is_held_invisible_and_approved_by_a_reviewer(governed, clock):
    pending = _held(lambda: governed.remember("Expenses above 500 EUR need two signatures", ORG, kind="rule",
                                              actor="agent:helper"))
    assert (pending.status, pending.actor, pending.record.content) == (
        PendingStatus.PENDING, "agent:helper", "Expenses above 500 EUR need two signatures")
    assert pending.rule == "org memory: namespace orgs/acme matches 'orgs/*'"
    assert pending.expires_at == clock.now() + timedelta(hours=72)
    assert governed.list(ORG).items == () and governed.search("expenses signatures", ORG) == []
    assert "Expenses" not in governed.context("expenses", ORG).text
    assert [p.id for p in governed.approvals.list(Scope("acme"))] == [pending.id]
    assert governed.approvals.list(Scope("acme", ("users",))) == []
    clock.advance(minutes=5)
    written = governed.approvals.approve(pending.id, ORG, reviewer="lead@acme", reason="matches the finance handbook")
    assert [r.content for r in written] == ["Expenses above 500 EUR need two signatures"]
    assert [h.record.id for h in governed.search("expenses signatures", ORG)] == [written[0].id]
    [version] = governed.history(written[0].id, ORG)
    assert (version.actor, version.operation) == ("lead@acme", Operation.CREATE)
    trail = [(e.operation, e.actor) for e in governed.audit.list(ORG, record_id=written[0].id)]
    assert trail == [(Operation.PROPOSE, "agent:helper"), (Operation.CREATE, "lead@acme"),
                     (Operation.APPROVE, "lead@acme")]
    create = governed.audit.list(ORG, record_id=written[0].id, operation="create")[0]
    assert create.detail["pending_id"] == pending.id and create.detail["proposed_by"] == "agent:helper"
    decided = governed.approvals.get(pending.id, ORG)
    assert (decided.status, decided.decided_by, decided.decision_reason) == (
        PendingStatus.APPROVED, "lead@acme", "matches the finance handbook")
    with pytest.raises(ConflictError, match="is approved by lead@acme"):
        governed.approvals.approve(pending.id, ORG, reviewer="someone-else")


def test_a_reviewer_may_edit_before_approving_and_the_edit_is_screened(governed):
    pending = _held(lambda: governed.remember("Support line: call the desk", ORG))
    written = governed.approvals.approve(pending.id, ORG, reviewer="lead",
                                         edit={"content": "Support line: call 13812345678", "importance": 0.9})
    assert written[0].content == "Support line: call [PHONE]" and written[0].importance == 0.9
    approve = governed.audit.list(ORG, operation="approve")[0]
    assert approve.detail["edited"] == ["content", "importance"]
    with pytest.raises(InvalidValueError, match="cannot edit"):
        governed.approvals.approve(_held(lambda: governed.remember("x y z", ORG)).id, ORG, reviewer="lead",
                                   edit={"scope": "elsewhere"})


def test_a_rejection_writes_nothing_and_keeps_the_reason(governed, clock):
    pending = _held(lambda: governed.remember("Everyone may skip code review", ORG, actor="agent"))
    rejected = governed.approvals.reject(pending.id, ORG, reviewer="lead", reason="contradicts policy P-7")
    assert (rejected.status, rejected.decision_reason) == (PendingStatus.REJECTED, "contradicts policy P-7")
    assert governed.list(ORG, statuses=None).items == ()
    [event] = governed.audit.list(ORG, operation="reject")
    assert (event.actor, event.detail["reason"], event.detail["proposed_by"]) == ("lead", "contradicts policy P-7",
                                                                                 "agent")
    assert governed.approvals.list(ORG) == [] and [p.id for p in governed.approvals.list(ORG, status="rejected")] == [pending.id]
    with pytest.raises(ConflictError):
        governed.approvals.approve(pending.id, ORG, reviewer="lead")
    with pytest.raises(InvalidValueError, match="reviewer"):
        governed.approvals.reject(pending.id, ORG, reviewer=" ")


def test_a_record_changed_since_the_proposal_is_a_conflict(backend, clock):
    rules = ApprovalRules((ApprovalRule("rules", kinds=("rule",)),))
    memory = backend.memory(clock=clock, approvals=rules)
    scope = Scope("acme", ("teams", "ops"))
    record = memory.remember("Deploys happen on Tuesdays", scope, kind="fact")
    pending = _held(lambda: memory.update(record.id, scope, kind="rule", content="Deploys happen on Thursdays"))
    memory.update(record.id, scope, importance=0.9)  # not substantive for the rule: written at once
    with pytest.raises(ConflictError, match="changed since this change was proposed"):
        memory.approvals.approve(pending.id, scope, reviewer="lead")
    current = memory.get(record.id, scope)
    assert (current.content, current.version) == ("Deploys happen on Tuesdays", 2)
    assert memory.approvals.get(pending.id, scope).status is PendingStatus.PENDING


def test_unreviewed_changes_expire(governed, clock):
    pending = _held(lambda: governed.remember("Office closes at 18:00", ORG))
    clock.advance(hours=73)
    assert governed.approvals.list(ORG) == []
    assert governed.approvals.list(ORG, status="expired")[0].id == pending.id
    with pytest.raises(ConflictError, match="expired"):
        governed.approvals.approve(pending.id, ORG, reviewer="lead")
    assert governed.approvals.expire() == 1 and governed.approvals.expire() == 0
    stored = governed.approvals.get(pending.id, ORG)
    assert (stored.status, stored.decided_by) == (PendingStatus.EXPIRED, "engram:expiry")
    [event] = governed.audit.list(ORG, operation="reject")
    assert event.detail["expired"] is True


def test_add_reports_a_held_candidate_as_pending_and_writes_the_rest(backend, clock, alice):
    rules = ApprovalRules((ApprovalRule("preferences", kinds=(Kind.PREFERENCE,)),))
    memory = backend.memory(clock=clock, approvals=rules)
    result = memory.add(["I live in Lisbon and I prefer green tea over coffee."], alice, thread_id="t1")
    events = {e.event: e for e in result.events}
    assert set(events) == {"ADD", "PENDING"}
    held = events["PENDING"]
    assert held.pending_id and held.kind is Kind.PREFERENCE and held.reason.startswith("ADD awaits approval")
    assert [r.content for r in memory.list(alice).items] == ["Lives in Lisbon"]
    pending = memory.approvals.get(held.pending_id, alice)
    assert pending.detail["thread_id"] == "t1" and pending.detail["event"] == "ADD"
    extract = memory.audit.list(alice, operation="extract")[0]
    assert extract.detail["events"] == {"ADD": 1, "PENDING": 1}
    memory.approvals.approve(held.pending_id, alice, reviewer="alice")
    assert {r.content for r in memory.list(alice).items} == {"Lives in Lisbon", "Prefers green tea over coffee"}


def test_a_supersede_is_held_whole_and_carried_out_whole(backend, clock):
    memory = backend.memory(clock=clock, approvals=ApprovalRules((ApprovalRule("org", namespaces=("orgs/*",)),)))
    with pytest.raises(PendingApprovalError):
        memory.remember("Travel budget is 1000 EUR", ORG)
    first = memory.approvals.approve(memory.approvals.list(ORG)[0].id, ORG, reviewer="lead")[0]
    pending = _held(lambda: memory.supersede(first.id, ORG, "Travel budget is 1500 EUR"))
    assert [c.operation for c in pending.changes] == [Operation.CREATE, Operation.SUPERSEDE]
    assert memory.get(first.id, ORG).status.value == "active"
    new, old = memory.approvals.approve(pending.id, ORG, reviewer="lead")
    assert (new.content, new.supersedes, old.id, old.status.value) == (
        "Travel budget is 1500 EUR", first.id, first.id, "superseded")


def test_rules_match_sensitivity_after_pii_screening_paths_actors_and_callables(backend, clock):
    personal = ApprovalRule("personal data", sensitivities=("personal", "secret"))
    files = ApprovalRule("policy files", paths=("/policies/*",), actors=("agent*",))
    forgets = ApprovalRule("forgetting rules", kinds=("rule",), operations=("forget",))
    late = ApprovalRule("callable", when=lambda intent: "urgent" in intent.record.content)
    memory = backend.memory(clock=clock, pii=PIIPolicy(), approvals=ApprovalRules((personal, files, forgets, late)))
    scope = Scope("acme", ("users", "alice"))
    assert _held(lambda: memory.remember("Call me on 13812345678", scope)).rule.startswith("personal data")
    memory.remember("A note", scope, metadata={"path": "/policies/a.md"}, actor="app")  # the app: not held
    held = _held(lambda: memory.remember("A note", scope, metadata={"path": "/policies/b.md"}, actor="agent:x"))
    assert held.rule == "policy files: path /policies/b.md matches '/policies/*'; actor agent:x matches 'agent*'"
    rule = memory.remember("Be polite", scope, kind="rule")
    assert _held(lambda: memory.forget(rule.id, scope)).changes[0].operation is Operation.FORGET
    assert _held(lambda: memory.remember("urgent: reply today", scope)).rule == "callable: its condition holds"


def test_rules_from_configuration(backend, clock, tmp_path):
    config = tmp_path / "approvals.toml"
    config.write_text('expire_after_hours = 2\n[[rules]]\nname = "org"\nnamespaces = ["orgs/*"]\n'
                      '[[tenants.globex]]\nname = "secrets"\nsensitivity = ["secret"]\n', encoding="utf-8")
    memory = backend.memory(clock=clock, settings=Settings(approvals=str(config)))
    held = _held(lambda: memory.remember("Office in Berlin", ORG))
    assert held.expires_at - held.created_at == timedelta(hours=2)
    memory.remember("Card 4111 1111 1111 1111 on file", Scope("acme", ("users", "a")))  # acme: no secrets rule
    with pytest.raises(PendingApprovalError):
        memory.remember("Card 4111 1111 1111 1111 on file", Scope("globex", ("users", "a")))


def test_unknown_pending_ids_and_scopes_are_not_found(governed):
    pending = _held(lambda: governed.remember("Fiscal year starts in April", ORG))
    with pytest.raises(NotFoundError):
        governed.approvals.get("nope", ORG)
    with pytest.raises(NotFoundError):
        governed.approvals.approve(pending.id, Scope("acme", ("users", "alice")), reviewer="lead")
    with pytest.raises(NotFoundError):
        governed.approvals.reject(pending.id, Scope("globex", ("orgs", "acme")), reviewer="lead")
    assert governed.approvals.get(pending.id, ORG).status is PendingStatus.PENDING
