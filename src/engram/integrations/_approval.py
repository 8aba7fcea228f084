"""Waiting for a person inside a LangGraph graph: the payload a node hands to
``interrupt()`` for pending changes, and how the value of ``Command(resume=...)``
decides them.

A resume value decides every pending change of the interrupt, or each by id:

    "approve" | "reject" | True | False
    {"action": "approve" | "reject" | "edit", "reason": ..., "reviewer": ..., "content": ...,
     "edit": {field: value, ...}}
    {"decisions": {pending_id: <one of the above>, ...}}

``edit`` (or ``content``) approves with the record's fields changed. A pending change
the value does not mention stays pending (a reviewer may decide it later, elsewhere).
Decisions are applied idempotently: a change already decided (e.g. the node re-ran
after a crash) is reported as it stands, not decided again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConflictError, InvalidValueError
from ..memory import Memory
from ..model import Scope
from ..values.governance import PendingChange, PendingStatus

INTERRUPT_TYPE = "engram.approval"
_ACTIONS = {"approve": "approve", "approved": "approve", "accept": "approve", "edit": "approve",
            "reject": "reject", "rejected": "reject", "deny": "reject"}


@dataclass(frozen=True, slots=True)
class Decision:
    action: str  # approve | reject
    reviewer: str
    reason: str | None = None
    edit: Mapping[str, Any] = field(default_factory=dict)


def summary(pending: PendingChange) -> dict[str, Any]:
    """What a person sees in the interrupt: JSON, small, no ciphertexts."""
    return {"id": pending.id, "proposed_by": pending.actor, "rule": pending.rule, "reason": pending.reason,
            "expires_at": pending.expires_at.isoformat(),
            "changes": [{"operation": c.operation.value, "kind": c.record.kind.value, "content": c.record.content,
                         "namespace": list(c.record.scope.namespace), "path": _written_path(c.record.metadata)}
                        for c in pending.changes]}


def _written_path(metadata: Mapping[str, Any]) -> str | None:
    """A Deep Agents file's path as the agent wrote it: its route's mount + the path inside."""
    path, mount = metadata.get("path"), metadata.get("mount")
    if isinstance(path, str) and isinstance(mount, str) and mount.strip("/"):
        return mount.rstrip("/") + path
    return path if isinstance(path, str) else None


def payload(pending: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {"type": INTERRUPT_TYPE, "pending": list(pending),
            "resume_with": "'approve' | 'reject' | {'action', 'reason', 'reviewer', 'content'} | "
                           "{'decisions': {pending_id: ...}}"}


def decisions(answer: Any, ids: Sequence[str], reviewer: str) -> dict[str, Decision]:
    """The decision per pending id that a resume value gives."""
    if isinstance(answer, Mapping) and "decisions" in answer:
        per_id = answer["decisions"]
        if not isinstance(per_id, Mapping):
            raise InvalidValueError("resume 'decisions' must map pending ids to decisions")
        return {i: _one(per_id[i], reviewer) for i in ids if i in per_id}
    if isinstance(answer, Mapping) and answer and set(answer) <= set(ids):
        return {i: _one(answer[i], reviewer) for i in ids if i in answer}
    decision = _one(answer, reviewer)
    return dict.fromkeys(ids, decision)


def _one(value: Any, reviewer: str) -> Decision:
    if isinstance(value, bool):
        return Decision("approve" if value else "reject", reviewer)
    if isinstance(value, str):
        value = {"action": value}
    if not isinstance(value, Mapping):
        raise InvalidValueError(f"a resume decision is 'approve', 'reject' or a mapping, got {value!r}")
    action = _ACTIONS.get(str(value.get("action", "approve" if value.get("edit") or "content" in value else "")))
    if action is None:
        raise InvalidValueError(f"a resume decision needs an action: approve, reject or edit; got {value!r}")
    edit = dict(value.get("edit") or {})
    if "content" in value:
        edit["content"] = value["content"]
    who = value.get("reviewer") or reviewer
    if not isinstance(who, str) or not who.strip():
        raise InvalidValueError("the reviewer must be a non-empty string")
    return Decision(action, who, value.get("reason"), edit)


def apply(memory: Memory, scope: Scope, chosen: Mapping[str, Decision]) -> list[dict[str, Any]]:
    """Carry out decisions; returns one outcome per pending id (written contents on approval)."""
    outcomes: list[dict[str, Any]] = []
    for pending_id, decision in chosen.items():
        current = memory.approvals.get(pending_id, scope)
        if current.status is not PendingStatus.PENDING:
            outcomes.append({"id": pending_id, "decision": current.status.value, "by": current.decided_by,
                             "written": []})
            continue
        try:
            if decision.action == "approve":
                written = memory.approvals.approve(pending_id, scope, reviewer=decision.reviewer,
                                                   reason=decision.reason, edit=decision.edit or None)
                outcomes.append({"id": pending_id, "decision": "approved", "by": decision.reviewer,
                                 "written": [r.content for r in written],
                                 "records": [{"id": r.id, "version": r.version} for r in written]})
            else:
                memory.approvals.reject(pending_id, scope, reviewer=decision.reviewer, reason=decision.reason)
                outcomes.append({"id": pending_id, "decision": "rejected", "by": decision.reviewer,
                                 "reason": decision.reason, "written": []})
        except ConflictError as exc:
            outcomes.append({"id": pending_id, "decision": "conflict", "error": str(exc), "written": []})
    return outcomes
