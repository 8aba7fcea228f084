"""Governance tools of the MCP server: ``answered`` (link an answer to the recall it
used) always; ``pending_approvals``, ``approve`` and ``reject`` only for a server
started for a reviewer (``create_mcp_server(..., reviewer="name")``, ``engram mcp
--reviewer NAME``), acting within the server's scope and below it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ..errors import EngramError
from ..memory import Memory
from ..model import Scope
from ..shapes.governance import pending_data

T = TypeVar("T")


def add_governance_tools(server: MCPServer, memory: Memory, scope: Scope, *, reviewer: str | None = None) -> None:
    @server.tool()
    def answered(recall_id: str, answer_id: str, answer: str | None = None,
                 used: list[str] | None = None) -> dict[str, Any]:
        """After answering with memories from `context` or `search`, report it: the recall id
        they gave, an id for your answer, and either your answer's text or the ids of the
        memories you used. This is how engram learns which memories help."""
        linked = _call(lambda: memory.audit.link_answer(recall_id, scope, answer_id=answer_id, answer=answer,
                                                        used=used))
        return {"recall_id": linked.id, "answer_id": linked.answer_id, "used": list(linked.used or ())}

    if reviewer is None:
        return

    @server.tool()
    def pending_approvals(limit: int = 20) -> dict[str, Any]:
        """Changes to memory held for a reviewer: who proposed what, and why it needs approval."""
        found = _call(lambda: memory.approvals.list(scope, limit=limit))
        return {"items": [_pending_summary(pending_data(p)) for p in found]}

    @server.tool()
    def approve(pending_id: str, reason: str | None = None, content: str | None = None) -> dict[str, Any]:
        """Approve a pending change (optionally with corrected content); it is written at once."""
        edit = {"content": content} if content is not None else None
        written = _call(lambda: memory.approvals.approve(pending_id, scope, reviewer=reviewer, reason=reason,
                                                         edit=edit))
        return {"written": [{"id": r.id, "version": r.version, "content": r.content} for r in written]}

    @server.tool()
    def reject(pending_id: str, reason: str) -> dict[str, Any]:
        """Reject a pending change; nothing of it is written and the reason is kept."""
        rejected = _call(lambda: memory.approvals.reject(pending_id, scope, reviewer=reviewer, reason=reason))
        return {"id": rejected.id, "status": rejected.status.value}


def recall_note(recall_id: str | None) -> str:
    """The line the `context` tool adds so the model can report its answer."""
    return f"\n\n(recall id: {recall_id} — pass it to `answered` after you answer)" if recall_id else ""


def _pending_summary(data: dict[str, Any]) -> dict[str, Any]:
    return {"id": data["id"], "proposed_by": data["actor"], "rule": data["rule"], "reason": data["reason"],
            "expires_at": data["expires_at"],
            "changes": [{"operation": c["operation"], "content": c["record"]["content"],
                         "kind": c["record"]["kind"], "namespace": c["record"]["namespace"]} for c in data["changes"]]}


def _call(action: Callable[[], T]) -> T:
    try:
        return action()
    except EngramError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc
