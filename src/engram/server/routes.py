"""The /v1 routes: each parses its request, calls one Memory method, formats the answer.

Endpoints are plain ``def`` functions: Memory is synchronous, and FastAPI runs them in
its thread pool. (No ``from __future__ import annotations`` here: FastAPI reads the
``Annotated`` dependencies built inside ``v1_router`` at definition time.)"""

import io
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from pydantic import AwareDatetime
from pydantic import ValidationError as PydanticValidationError

from .. import __version__
from ..errors import ConflictError, ImportConflictError, InvalidValueError, PermissionDeniedError
from ..jsonl import ImportResult, OnConflict, parse_lines
from ..limits import MAX_OFFSET
from ..memory import Memory
from ..model import JobStatus, Kind, Operation, Status
from ..shapes import (
    add_data,
    audits_data,
    context_data,
    history_data,
    hits_data,
    import_data,
    jobs_data,
    page_data,
    purged_data,
    record_data,
    records_data,
    stats_data,
)
from .requests import (
    MAX_K,
    AddIn,
    BatchIn,
    ChangeIn,
    ContextIn,
    PurgeScopeIn,
    ReasonIn,
    RememberIn,
    ScopeIn,
    SearchIn,
)
from .responses import (
    AddOut,
    AuditListOut,
    ContextOut,
    ErrorOut,
    HistoryOut,
    ImportOut,
    JobsOut,
    MeOut,
    NamespacesOut,
    PageOut,
    PurgedOut,
    RecordOut,
    RecordsOut,
    SearchOut,
    StatsOut,
)
from .streaming import stream_export
from .views import View, shown, shown_hit, shown_version

ACTOR = "http"
NDJSON = "application/x-ndjson"

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": text}
    for status, text in (
        (400, "Another engram error (embedding, LLM, configuration)"),
        (401, "Missing or unknown API key"),
        (403, "Refused: read-only memory or a policy hook"),
        (404, "No such memory in the caller's tenant and scope"),
        (409, "Compare-and-swap lost, or the record already exists"),
        (422, "Bad input: the message says which field and why"),
        (503, "The database failed; nothing half-written"),
    )
}


def scope_query(
    namespace: Annotated[list[str] | None, Query(description="Namespace labels, repeatable")] = None,
    user: Annotated[str | None, Query(description="Shortcut for namespace users/<user>")] = None,
    agent: Annotated[str | None, Query(description="agents/<agent> (with user: agents/<agent>/users/<user>)")] = None,
    org: Annotated[str | None, Query(description="Shortcut for namespace orgs/<org>")] = None,
) -> ScopeIn:
    try:
        return ScopeIn(namespace=namespace, user=user, agent=agent, org=org)
    except PydanticValidationError as exc:
        errors = [{**error, "loc": ("query", *error["loc"])} for error in exc.errors(include_url=False)]
        raise RequestValidationError(errors) from None


QueryScope = Annotated[ScopeIn, Depends(scope_query)]
Limit = Annotated[int, Query(ge=1, le=MAX_K)]


def v1_router(memory: Memory, tenant_of: Callable[..., str], permissions_of: Callable[..., list[str]], *,
              api_keys: bool) -> APIRouter:
    """``tenant_of`` is the dependency naming the caller's tenant (``permissions_of``:
    what else it may do); ``api_keys`` says whether they ask for a key (so that 401 is
    documented only where it can happen)."""
    errors = {status: answer for status, answer in ERROR_RESPONSES.items() if api_keys or status != 401}
    router = APIRouter(prefix="/v1", responses=errors)
    Tenant = Annotated[str, Depends(tenant_of)]
    Permissions = Annotated[list[str], Depends(permissions_of)]

    def view_of(
        mask: Annotated[bool, Query(description="Show personal data in the text as [EMAIL], [PHONE] … and leave "
                                                "the encrypted originals out")] = False,
    ) -> View:
        return View.MASKED if mask else View.STORED

    Shown = Annotated[View, Depends(view_of)]

    @router.get("/me", response_model=MeOut, tags=["ops"])
    def me(tenant: Tenant, permissions: Permissions) -> dict[str, Any]:
        """Who the caller is: the key's tenant and what else it may do."""
        return {"tenant": tenant, "permissions": permissions, "single_tenant": not api_keys, "version": __version__}

    @router.get("/namespaces", response_model=NamespacesOut, tags=["memories"])
    def namespaces(tenant: Tenant, scope: QueryScope) -> dict[str, Any]:
        """The namespaces at or below a scope that hold memories."""
        return {"items": [list(ns) for ns in memory.scopes.namespaces(scope.resolve(tenant))]}

    @router.post("/memories", status_code=201, response_model=RecordOut, tags=["memories"])
    def remember(body: RememberIn, tenant: Tenant) -> dict[str, Any]:
        """Store one memory as given (no extraction, no reconciliation)."""
        return record_data(memory.remember(**body.fields(), scope=body.scope.resolve(tenant), actor=ACTOR))

    @router.post("/memories/batch", status_code=201, response_model=RecordsOut, tags=["memories"])
    def remember_many(body: BatchIn, tenant: Tenant) -> dict[str, Any]:
        """Store many memories in one transaction (all or none)."""
        records = memory.remember_many([item.draft() for item in body.items], body.scope.resolve(tenant),
                                       actor=ACTOR)
        return records_data(records)

    @router.get("/profile", response_model=RecordsOut, tags=["retrieval"])
    def profile(tenant: Tenant, scope: QueryScope, view: Shown) -> dict[str, Any]:
        """The user's profile, best first: what context() gives whatever the query (pinned
        memories, constraints, identity, standing rules and preferences). Pin a memory in
        or out with PATCH /v1/memories/{id} {"pinned": true | false | null}."""
        return records_data(shown(r, view) for r in memory.profile(scope.resolve(tenant)))

    @router.get("/memories", response_model=PageOut, tags=["memories"])
    def list_memories(
        tenant: Tenant, scope: QueryScope, view: Shown,
        offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
        limit: Limit = 50,
        include_descendants: bool = False,
        kind: Annotated[list[Kind] | None, Query(description="Repeatable")] = None,
        status: Annotated[list[Status] | None, Query(description="Repeatable; default active")] = None,
        category: str | None = None,
        tag: Annotated[list[str] | None, Query(description="Repeatable; every tag must be present")] = None,
        created_after: AwareDatetime | None = None,
        created_before: AwareDatetime | None = None,
    ) -> dict[str, Any]:
        """Memories in a scope, a page at a time (next_offset is null on the last page)."""
        page = memory.list(scope.resolve(tenant), offset=offset, limit=limit, include_descendants=include_descendants,
                           kinds=kind, statuses=status or (Status.ACTIVE,), category=category, tags=tag,
                           created_after=created_after, created_before=created_before)
        return page_data(replace(page, items=tuple(shown(r, view) for r in page.items)))

    @router.get("/memories/{record_id}", response_model=RecordOut, tags=["memories"])
    def get(record_id: str, tenant: Tenant, scope: QueryScope, view: Shown) -> dict[str, Any]:
        """One memory, any status (404 outside the caller's tenant or the given scope)."""
        return record_data(shown(memory.get(record_id, scope.resolve(tenant)), view))

    @router.patch("/memories/{record_id}", response_model=RecordOut, tags=["memories"])
    def update(record_id: str, body: ChangeIn, tenant: Tenant, scope: QueryScope) -> dict[str, Any]:
        """Write a new version with the fields sent changed; expected_version makes it a
        compare-and-swap (409 when the record moved on)."""
        record = memory.update(record_id, scope.resolve(tenant), actor=ACTOR, reason=body.reason,
                               expected_version=body.expected_version, override_read_only=body.override_read_only,
                               **body.changes())
        return record_data(record)

    @router.delete("/memories/{record_id}", response_model=RecordOut, tags=["memories"])
    def forget(
        record_id: str, tenant: Tenant, scope: QueryScope, reason: str | None = None,
        override_read_only: bool = False,
    ) -> dict[str, Any]:
        """Soft delete: the memory leaves search and context; its history stays (restore undoes it)."""
        record = memory.forget(record_id, scope.resolve(tenant), reason=reason, actor=ACTOR,
                               override_read_only=override_read_only)
        return record_data(record)

    @router.post("/memories/{record_id}/restore", response_model=RecordOut, tags=["memories"])
    def restore(record_id: str, tenant: Tenant, scope: QueryScope, body: ChangeIn | None = None) -> dict[str, Any]:
        """Bring a forgotten, superseded or expired memory back, optionally with changed fields."""
        body = body or ChangeIn()
        record = memory.restore(record_id, scope.resolve(tenant), actor=ACTOR, reason=body.reason,
                                expected_version=body.expected_version, override_read_only=body.override_read_only,
                                **body.changes())
        return record_data(record)

    @router.post("/memories/{record_id}/purge", response_model=PurgedOut, tags=["memories"])
    def purge(record_id: str, tenant: Tenant, scope: QueryScope, body: ReasonIn | None = None) -> dict[str, Any]:
        """Hard delete, versions included. The audit keeps that it happened, never the content."""
        return purged_data(memory.purge(record_id, scope.resolve(tenant), reason=(body or ReasonIn()).reason,
                                        actor=ACTOR))

    @router.post("/purge", response_model=PurgedOut, tags=["memories"])
    def purge_scope(body: PurgeScopeIn, tenant: Tenant) -> dict[str, Any]:
        """Hard delete everything in a scope and below it (e.g. one user). Never a whole tenant."""
        scope = body.scope.resolve(tenant)
        if not scope.namespace:
            raise InvalidValueError("refusing to purge a whole tenant; give a namespace or a user/agent/org")
        return purged_data(memory.purge_scope(scope, reason=body.reason, actor=ACTOR))

    @router.get("/memories/{record_id}/history", response_model=HistoryOut, tags=["memories"])
    def history(record_id: str, tenant: Tenant, scope: QueryScope, view: Shown) -> dict[str, Any]:
        """Every version of a memory: who changed it, when and why."""
        return history_data(shown_version(v, view) for v in memory.history(record_id, scope.resolve(tenant)))

    @router.post("/search", response_model=SearchOut, tags=["retrieval"])
    def search(body: SearchIn, tenant: Tenant, view: Shown) -> dict[str, Any]:
        """Hybrid search inside a scope; each hit carries its score and the signals behind it."""
        hits = memory.search(body.query, body.scope.resolve(tenant), **body.options())
        return hits_data(shown_hit(h, view) for h in hits)

    @router.post("/context", response_model=ContextOut, tags=["retrieval"])
    def context(body: ContextIn, tenant: Tenant) -> dict[str, Any]:
        """The memory block to inject into a prompt, from one scope or several, within a token budget."""
        block = memory.context(body.query, body.resolve(tenant), budget_tokens=body.budget_tokens, k=body.k,
                               min_score=body.min_score, answer_id=body.answer_id, thread_id=body.thread_id,
                               actor=ACTOR, language=body.language, as_of=body.as_of)
        return context_data(block)

    @router.post("/add", response_model=AddOut, tags=["pipeline"],
                 responses={202: {"model": AddOut, "description": "Queued (background): poll /v1/jobs"}})
    def add(body: AddIn, tenant: Tenant, response: Response) -> dict[str, Any]:
        """Turn conversation turns into memories (extract → gate → PII → reconcile → write)."""
        result = memory.add([m.model_dump() for m in body.messages], body.scope.resolve(tenant),
                            thread_id=body.thread_id, background=body.background, force=body.force, actor=ACTOR)
        if result.job_id is not None:
            response.status_code = 202
        return add_data(result)

    @router.get("/jobs", response_model=JobsOut, tags=["pipeline"])
    def jobs(
        tenant: Tenant,
        status: Annotated[list[JobStatus] | None, Query(description="Repeatable")] = None,
        limit: Limit = 100,
    ) -> dict[str, Any]:
        """The caller's background add() jobs, newest first."""
        return jobs_data(memory.jobs.list(tenant, status or (), limit))

    @router.get("/audit", response_model=AuditListOut, tags=["governance"])
    def audit(
        tenant: Tenant, scope: QueryScope,
        record_id: str | None = None,
        operation: Operation | None = None,
        since: AwareDatetime | None = None,
        limit: Limit = 100,
        newest_first: bool = False,
        exclude: Annotated[list[Operation] | None, Query(description="Operations left out; repeatable")] = None,
    ) -> dict[str, Any]:
        """Audit events in a scope and below it, oldest first (``newest_first``: the latest, newest first)."""
        events = memory.audit.list(scope.resolve(tenant), record_id=record_id, operation=operation, since=since,
                                   limit=limit, newest_first=newest_first, exclude=exclude or ())
        return audits_data(events)

    @router.get("/stats", response_model=StatsOut, tags=["governance"])
    def stats(tenant: Tenant) -> dict[str, Any]:
        """Counts for the caller's tenant, with background jobs and LLM tokens spent."""
        return stats_data(memory.stats(tenant), server_details=False)

    @router.get("/export", tags=["governance"], response_class=StreamingResponse,
                responses={200: {"content": {NDJSON: {"schema": {"type": "string"}}},
                                 "description": "A header line, then one line per record with its versions"}})
    def export(tenant: Tenant, scope: QueryScope) -> StreamingResponse:
        """Every record in a scope and below it (any status, versions included) as JSONL, streamed."""
        resolved = scope.resolve(tenant)
        chunks = stream_export(lambda stream: memory.transfer.export_to(stream, resolved))
        return StreamingResponse(chunks, media_type=NDJSON,
                                 headers={"Content-Disposition": 'attachment; filename="engram-export.jsonl"'})

    @router.post("/import", response_model=ImportOut, tags=["governance"], openapi_extra={
        "requestBody": {"required": True, "content": {NDJSON: {"schema": {"type": "string"}}},
                        "description": "A JSONL export of the caller's tenant"}})
    async def import_(
        request: Request, tenant: Tenant,
        on_conflict: Annotated[OnConflict, Query(description="When an id exists: error (409), skip or replace")]
        = "error",
    ) -> dict[str, Any]:
        """Import a JSONL export into the caller's tenant: validated whole, then one transaction."""
        text = _utf8(await request.body())
        result = await run_in_threadpool(_import_own_tenant, memory, text, tenant, on_conflict)
        return import_data(result)

    return router


def _utf8(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidValueError(f"the body is not UTF-8 text (byte {exc.start})") from None


def _import_own_tenant(memory: Memory, text: str, tenant: str, on_conflict: OnConflict) -> ImportResult:
    """An export names its tenant in its header (and engram checks every record against
    it); that tenant must be the caller's. The header is read by engram's own parser,
    the same one the import runs, so the check and the import cannot disagree."""
    header, _ = parse_lines(io.StringIO(text))
    if header["tenant"] != tenant:
        raise PermissionDeniedError("the export belongs to another tenant; it can only be imported there")
    try:
        return memory.transfer.import_from(io.StringIO(text), on_conflict=on_conflict, actor=ACTOR)
    except ImportConflictError as exc:
        raise ConflictError(exc.worded("add ?on_conflict=skip or ?on_conflict=replace to the request")) from None
