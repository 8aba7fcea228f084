"""Governance over HTTP: approvals, recalls and answers, provenance, write-accuracy
review, quality metrics (JSON, and Prometheus text at ``GET /metrics``) and reveal.

Deciding pending changes and judging samples needs the ``review`` permission on the
API key, revealing encrypted personal data the ``reveal`` permission (auth.py); in
single-tenant mode the one caller has both. Every decision is audited with the
caller (``http:<key fingerprint>``) or, when given, the reviewer named in the body
after it (``http:<key>:<reviewer>``). (No ``from __future__ import annotations``:
FastAPI reads the dependencies at definition time.)"""

from collections.abc import Callable
from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import Field

from ..errors import PermissionDeniedError
from ..governance.prometheus import CONTENT_TYPE, exposition
from ..limits import MAX_OFFSET
from ..memory import Memory
from ..shapes import hit_data as _hit_data
from ..shapes import record_data
from ..shapes.governance import (
    pending_data,
    provenance_data,
    recall_data,
    report_data,
    revealed_data,
    sample_data,
    trace_data,
)
from ..values.governance import PendingApprovalError, Verdict
from .auth import Caller, Tenancy
from .requests import MAX_K, Body, ScopeIn
from .routes import ERROR_RESPONSES, QueryScope

ACTOR = "http"
DEFAULT_HOURS = 24.0


_Body = Body  # every body refuses lone surrogates and unknown fields alike (requests.Body)


class EditIn(_Body):
    content: str | None = None
    kind: str | None = None
    importance: float | None = None
    confidence: float | None = None
    category: str | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None

    def fields(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


class ApproveIn(_Body):
    reviewer: str | None = Field(None, description="The person deciding (audited after the key's fingerprint)")
    reason: str | None = None
    edit: EditIn | None = None


class RejectIn(_Body):
    reviewer: str | None = None
    reason: str | None = None


class RecallIn(_Body):
    query: str
    scope: ScopeIn = Field(default_factory=ScopeIn)
    k: int = Field(10, ge=1, le=MAX_K)
    min_score: float = 0.0
    thread_id: str | None = None
    answer_id: str | None = None


class AnswerIn(_Body):
    answer_id: str = Field(description="The id of the message that answered")
    answer: str | None = Field(None, description="Its text, to judge which memories it used (not stored)")
    used: list[str] | None = Field(None, description="The memory ids the model cited, if it does")


class SampleIn(_Body):
    scope: ScopeIn = Field(default_factory=ScopeIn)
    n: int = Field(20, ge=1, le=10_000)
    days: float = Field(7.0, gt=0, le=36_600, description="how far back (at most 100 years)")
    actor: str | None = Field(None, description="Only writes by actors matching this pattern")


class VerdictIn(_Body):
    verdict: Verdict
    note: str | None = None
    reviewer: str | None = None


class RevealIn(_Body):
    reason: str = Field(min_length=1, description="Why (audited)")


def install(app: FastAPI, memory: Memory, tenancy: Tenancy, bearer: Any) -> None:
    """The governance routes, ``GET /metrics`` and the 202 answer of a held write."""
    caller_of = _caller_dependency(tenancy, bearer)
    errors = {status: answer for status, answer in ERROR_RESPONSES.items()
              if not tenancy.single_tenant or status != 401}
    app.include_router(governance_router(memory, caller_of), responses=errors)
    app.add_exception_handler(PendingApprovalError, _held)

    @app.get("/metrics", response_class=PlainTextResponse, tags=["ops"],
             responses={**errors, 200: {"content": {CONTENT_TYPE: {}}, "description": "Prometheus text exposition"}})
    def metrics(caller: Annotated[Caller, Depends(caller_of)],
                hours: Annotated[float, Query(gt=0, le=24 * 366)] = DEFAULT_HOURS) -> PlainTextResponse:
        """Quality figures of the caller's tenant over the last ``hours`` (Prometheus text format)."""
        report = memory.quality.report(caller.tenant, window=timedelta(hours=hours))
        return PlainTextResponse(exposition([report]), media_type=CONTENT_TYPE)


async def _held(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PendingApprovalError)
    return JSONResponse({"status": "pending", "message": str(exc), "pending": pending_data(exc.pending)},
                        status_code=202)


def _caller_dependency(tenancy: Tenancy, bearer: Any) -> Callable[..., Caller]:
    if tenancy.single_tenant:  # no key asked, none documented
        def only_caller() -> Caller:
            return tenancy.caller_for(None)

        return only_caller

    def caller_of(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> Caller:
        return tenancy.caller_for(credentials.credentials if credentials else None)

    return caller_of


def _needs(caller: Caller, permission: str) -> None:
    if permission not in caller.permissions:
        raise PermissionDeniedError(f"this API key lacks the {permission!r} permission (ENGRAM_API_KEYS: "
                                    f"key=tenant[{permission}])")


def _actor(caller: Caller, reviewer: str | None) -> str:
    return f"{caller.actor}:{reviewer}" if reviewer else caller.actor


def governance_router(memory: Memory, caller_of: Callable[..., Caller]) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["governance"])
    Who = Annotated[Caller, Depends(caller_of)]

    @router.get("/approvals")
    def approvals(
        who: Who, scope: QueryScope,
        status: Annotated[str, Query(description="pending, approved, rejected, expired, or all")] = "pending",
        limit: Annotated[int, Query(ge=1, le=MAX_K)] = 100, offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    ) -> dict[str, Any]:
        """Changes held by an approval rule in a scope and below it, oldest first."""
        _needs(who, "review")
        found = memory.approvals.list(scope.resolve(who.tenant), status=None if status == "all" else status,
                                      limit=limit, offset=offset)
        return {"items": [pending_data(p) for p in found]}

    @router.get("/approvals/{pending_id}")
    def pending_change(pending_id: str, who: Who) -> dict[str, Any]:
        _needs(who, "review")
        return pending_data(memory.approvals.get(pending_id, ScopeIn().resolve(who.tenant)))

    @router.post("/approvals/{pending_id}/approve")
    def approve(pending_id: str, who: Who, body: ApproveIn | None = None) -> dict[str, Any]:
        """Write a pending change (optionally edited) as the reviewer; 409 when its record
        changed since it was proposed, or when it was decided or expired meanwhile."""
        _needs(who, "review")
        body = body or ApproveIn()
        written = memory.approvals.approve(pending_id, ScopeIn().resolve(who.tenant),
                                           reviewer=_actor(who, body.reviewer), reason=body.reason,
                                           edit=body.edit.fields() if body.edit else None)
        return {"items": [record_data(r) for r in written]}

    @router.post("/approvals/{pending_id}/reject")
    def reject(pending_id: str, who: Who, body: RejectIn | None = None) -> dict[str, Any]:
        """Refuse a pending change; the audit keeps the reason."""
        _needs(who, "review")
        body = body or RejectIn()
        return pending_data(memory.approvals.reject(pending_id, ScopeIn().resolve(who.tenant),
                                                    reviewer=_actor(who, body.reviewer), reason=body.reason))

    @router.post("/recall")
    def recall(body: RecallIn, who: Who) -> dict[str, Any]:
        """Search for an answer: the hits and a recall id to link the answer with."""
        found = memory.recall(body.query, body.scope.resolve(who.tenant), k=body.k, min_score=body.min_score,
                              thread_id=body.thread_id, answer_id=body.answer_id, actor=ACTOR)
        return {"recall_id": found.id, "hits": [_hit_data(h) for h in found.hits]}

    @router.post("/recalls/{recall_id}/answer")
    def answered(recall_id: str, body: AnswerIn, who: Who) -> dict[str, Any]:
        """Record the answer a recall (or a context) served, and which memories it used."""
        return recall_data(memory.audit.link_answer(recall_id, ScopeIn().resolve(who.tenant), answer_id=body.answer_id,
                                                    answer=body.answer, used=body.used))

    @router.get("/recalls")
    def recent_recalls(who: Who, scope: QueryScope,
                       limit: Annotated[int, Query(ge=1, le=MAX_K)] = 5) -> dict[str, Any]:
        """The latest recalls that served memories of the scope (or below it), newest first,
        each with those memories as they are now: what the inspector's first screen shows."""
        return {"items": [trace_data(t) for t in memory.audit.recent_recalls(scope.resolve(who.tenant), limit=limit)]}

    @router.get("/recalls/{ident}")
    def answer_trace(ident: str, who: Who) -> dict[str, Any]:
        """The memories behind an answer id (or one recall id), with scores and use."""
        return {"items": [trace_data(t) for t in memory.audit.answer(ident, ScopeIn().resolve(who.tenant))]}

    @router.get("/memories/{record_id}/why")
    def why(record_id: str, who: Who, scope: QueryScope) -> dict[str, Any]:
        """Where a memory came from: thread, messages, extractor, versions, approvals, answers."""
        return provenance_data(memory.audit.why(record_id, scope.resolve(who.tenant)))

    @router.post("/memories/{record_id}/reveal")
    def reveal(record_id: str, body: RevealIn, who: Who, scope: QueryScope) -> dict[str, Any]:
        """The memory with its encrypted personal data decrypted (``reveal`` permission; audited)."""
        _needs(who, "reveal")
        found = memory.keys.reveal(record_id, scope.resolve(who.tenant), actor=who.actor, reason=body.reason)
        return revealed_data(found)

    @router.post("/quality/sample")
    def quality_sample(body: SampleIn, who: Who) -> dict[str, Any]:
        """Queue a random sample of recent writes for review (write accuracy)."""
        _needs(who, "review")
        scope = body.scope.resolve(who.tenant)
        since = memory.clock.now() - timedelta(days=body.days)
        return {"items": [sample_data(s) for s in memory.quality.sample(scope, n=body.n, since=since,
                                                                         actor=body.actor)]}

    @router.get("/quality/samples")
    def quality_list(
        who: Who, scope: QueryScope, reviewed: bool = False, limit: Annotated[int, Query(ge=1, le=MAX_K)] = 100,
    ) -> dict[str, Any]:
        """Sampled writes awaiting a verdict (or judged ones), each with the version as written."""
        _needs(who, "review")
        found = memory.quality.list(scope.resolve(who.tenant), reviewed=reviewed, limit=limit)
        return {"items": [sample_data(s) for s in found]}

    @router.post("/quality/samples/{sample_id}")
    def quality_mark(sample_id: str, body: VerdictIn, who: Who) -> dict[str, Any]:
        """Judge a sampled write: correct, wrong or should_not_store."""
        _needs(who, "review")
        return sample_data(memory.quality.mark(sample_id, ScopeIn().resolve(who.tenant), body.verdict,
                                               reviewer=_actor(who, body.reviewer), note=body.note))

    @router.get("/quality")
    def quality_report(who: Who, hours: Annotated[float, Query(gt=0, le=24 * 366)] = DEFAULT_HOURS) -> dict[str, Any]:
        """Write accuracy, recall hit rate, repeat rate, writes, skips, PII actions, approvals, latency."""
        return report_data(memory.quality.report(who.tenant, window=timedelta(hours=hours)))

    return router
