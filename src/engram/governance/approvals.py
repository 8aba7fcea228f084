"""Deciding pending changes: list, approve (optionally edited), reject, expire.

An approved change is carried out through the write core with the reviewer as actor:
each proposed change is a compare-and-swap against the version it was proposed on
(a record changed meanwhile is a ConflictError, nothing written), passes the PII
policy and the policy hooks again (an edit may add text), and is written together
with the decision in ONE transaction; the decision itself only applies while the
change is still pending, so two reviewers never both carry it out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..changes import Change
from ..core import WriteCore
from ..errors import ConflictError, InvalidValueError, NotFoundError
from ..model import MemoryRecord, Operation, Scope
from ..reads import ReadContext
from ..store.base import AuditDraft
from ..values.governance import (
    GovernanceWrites,
    PendingChange,
    PendingDecision,
    PendingQuery,
    PendingStatus,
    ProposedChange,
)
from ..writes import EDITABLE, revise

EXPIRY_ACTOR = "engram:expiry"
EDITS = EDITABLE - {"read_only"}


def seen(pending: PendingChange, now: datetime) -> PendingChange:
    """As reads show it: a pending change past its expiry is expired (maintenance writes it so)."""
    if pending.status is PendingStatus.PENDING and pending.expires_at <= now:
        return replace(pending, status=PendingStatus.EXPIRED)
    return pending


def listing(
    reads: ReadContext, scope: Scope, statuses: Sequence[PendingStatus], *, limit: int, offset: int = 0,
    record_id: str | None = None,
) -> list[PendingChange]:
    """Pending changes in a scope and below it, oldest first; ``statuses`` () means any."""
    now = reads.clock.now()
    wanted = tuple(statuses)
    asked = wanted
    if PendingStatus.EXPIRED in wanted and PendingStatus.PENDING not in wanted:
        asked = (*wanted, PendingStatus.PENDING)  # unswept ones are expired too
    query = PendingQuery(namespace=scope.namespace, statuses=asked, record_id=record_id, limit=limit, offset=offset)
    found = [seen(p, now) for p in reads.store.pending_changes(scope.tenant, query)]
    return [p for p in found if not wanted or p.status in wanted]


def get(reads: ReadContext, scope: Scope, pending_id: str) -> PendingChange:
    if not isinstance(pending_id, str) or not pending_id:
        raise InvalidValueError(f"a pending change id must be a non-empty string, got {pending_id!r}")
    found = reads.store.pending_changes(scope.tenant, PendingQuery(namespace=scope.namespace, ids=(pending_id,)))
    if not found:
        raise NotFoundError(f"no pending change {pending_id!r} in scope {scope}")
    return seen(found[0], reads.clock.now())


def _open(core: WriteCore, scope: Scope, pending_id: str) -> PendingChange:
    pending = get(core.reads, scope, pending_id)
    if pending.status is not PendingStatus.PENDING:
        by = f" by {pending.decided_by}" if pending.decided_by else ""
        raise ConflictError(f"pending change {pending_id} is {pending.status.value}{by}; only a pending one is decided")
    return pending


def _reviewer(reviewer: Any) -> str:
    if not isinstance(reviewer, str) or not reviewer.strip():
        raise InvalidValueError("a decision needs the reviewer's name (the actor it is audited under)")
    return reviewer


def approve(
    core: WriteCore, scope: Scope, pending_id: str, *, reviewer: str, reason: str | None = None,
    edit: Mapping[str, Any] | None = None,
) -> list[MemoryRecord]:
    """Carry out a pending change as ``reviewer``; ``edit`` changes fields of its record
    first (content, kind, importance, …). Returns the records written."""
    reviewer = _reviewer(reviewer)
    edit = dict(edit or {})
    unknown = set(edit) - EDITS
    if unknown:
        raise InvalidValueError(f"cannot edit {', '.join(sorted(unknown))}; editable: {', '.join(sorted(EDITS))}")
    pending = _open(core, scope, pending_id)
    now = core.clock.now()
    stored = {r.id: r for r in core.store.get(pending.tenant, [c.record.id for c in pending.changes])}
    changes = [_carried_out(core, pending, proposed, stored.get(proposed.record.id), reviewer, now,
                            edit if i == 0 else {}) for i, proposed in enumerate(pending.changes)]
    admitted = [core.admit(change) for change in changes]
    first = admitted[0].record
    assert first is not None
    audit = AuditDraft(reviewer, Operation.APPROVE, now, first.id, first.version, pending.namespace,
                       first.source.message_id, _detail(pending, reason, edited=sorted(edit)))
    decision = PendingDecision(pending.id, PendingStatus.APPROVED, reviewer, now, reason)
    return core.commit(admitted, tenant=pending.tenant, audit=[audit],
                       governance=GovernanceWrites(decisions=(decision,)))


def _carried_out(
    core: WriteCore, pending: PendingChange, proposed: ProposedChange, current: MemoryRecord | None, reviewer: str,
    now: datetime, edit: Mapping[str, Any],
) -> Change:
    base = current.version if current is not None else None
    if base != proposed.base_version:
        was = "absent" if proposed.base_version is None else f"version {proposed.base_version}"
        raise ConflictError(
            f"memory {proposed.record.id} changed since this change was proposed (proposed on {was}, now "
            f"{'absent' if base is None else f'version {base}'}); reject it and propose it again"
        )
    record = replace(proposed.record, updated_at=now)
    if edit:
        record = replace(revise(record, edit, now, core.limits), version=record.version)
    detail = {**proposed.detail, "pending_id": pending.id, "proposed_by": pending.actor}
    return Change(proposed.operation, record, current, reviewer, proposed.reason, detail, approved=pending.id)


def reject(
    core: WriteCore, scope: Scope, pending_id: str, *, reviewer: str, reason: str | None = None,
) -> PendingChange:
    """Decide a pending change no: nothing of it is written; the audit keeps why."""
    reviewer = _reviewer(reviewer)
    pending = _open(core, scope, pending_id)
    now = core.clock.now()
    record = pending.record
    audit = AuditDraft(reviewer, Operation.REJECT, now, record.id, record.version, pending.namespace,
                       record.source.message_id, _detail(pending, reason))
    decision = PendingDecision(pending.id, PendingStatus.REJECTED, reviewer, now, reason)
    core.commit([], tenant=pending.tenant, audit=[audit], governance=GovernanceWrites(decisions=(decision,)))
    return replace(pending, status=PendingStatus.REJECTED, decided_by=reviewer, decided_at=now,
                   decision_reason=reason)


def expire_due(core: WriteCore, *, batch: int = 500) -> int:
    """Mark every pending change past its expiry as expired (audited as a rejection by
    ``engram:expiry``), in every tenant. Returns how many."""
    now = core.clock.now()
    total = 0
    while True:
        due = core.store.pending_changes(None, PendingQuery(statuses=(PendingStatus.PENDING,), expires_before=now,
                                                            limit=batch))
        if not due:
            return total
        by_tenant: dict[str, list[PendingChange]] = {}
        for pending in due:
            by_tenant.setdefault(pending.tenant, []).append(pending)
        for tenant, group in by_tenant.items():
            total += _expire(core, tenant, group, now)
        if len(due) < batch:
            return total


def _expire(core: WriteCore, tenant: str, group: Sequence[PendingChange], now: datetime) -> int:
    done = 0
    for pending in group:  # one by one: a reviewer deciding one meanwhile must not stop the rest
        record = pending.record
        audit = AuditDraft(EXPIRY_ACTOR, Operation.REJECT, now, record.id, record.version, pending.namespace,
                           record.source.message_id, _detail(pending, "expired unreviewed", expired=True))
        decision = PendingDecision(pending.id, PendingStatus.EXPIRED, EXPIRY_ACTOR, now, "expired unreviewed")
        try:
            core.commit([], tenant=tenant, audit=[audit], governance=GovernanceWrites(decisions=(decision,)))
            done += 1
        except ConflictError:
            continue
    return done


def _detail(pending: PendingChange, reason: str | None, **extra: Any) -> dict[str, Any]:
    detail: dict[str, Any] = {"pending_id": pending.id, "proposed_by": pending.actor, "rule": pending.rule,
                              "operations": [c.operation.value for c in pending.changes]}
    if reason:
        detail["reason"] = reason
    return {**detail, **{k: v for k, v in extra.items() if v}}
