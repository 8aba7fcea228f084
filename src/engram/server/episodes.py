"""Past conversations over HTTP: list threads, read one, search them, and run a
consolidation of the caller's tenant. The tenant comes from the API key; the scope
(whose conversations) from the request, as for every /v1 route. (No ``from
__future__ import annotations``: FastAPI reads the dependencies at definition time.)"""

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Query
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import Field

from ..memory import Memory
from ..shapes.episodes import consolidation_data, excerpts_data, threads_data, turns_data
from .auth import Tenancy
from .requests import MAX_K, Body, ScopeIn
from .routes import ERROR_RESPONSES, QueryScope

Limit = Annotated[int, Query(ge=1, le=1000)]


_Body = Body  # every body refuses lone surrogates and unknown fields alike (requests.Body)


class PastSearchIn(_Body):
    query: str = Field(min_length=1, description="What to look for")
    scope: ScopeIn = Field(default_factory=ScopeIn)
    k: int = Field(5, ge=1, le=MAX_K, description="How many threads at most")
    window: int = Field(1, ge=0, le=20, description="Neighbouring turns on each side of a match")
    include_descendants: bool = Field(False, description="Every scope below too (e.g. a whole org)")


class ConsolidateIn(_Body):
    scope: ScopeIn | None = Field(None, description="Only this scope and below (default: the whole tenant)")
    dry_run: bool = Field(False, description="Report the diff; write nothing")
    budget_tokens: int | None = Field(None, ge=1, description="Turn tokens read per scope at most")


def episodes_router(memory: Memory, tenant_of: Callable[..., str]) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["conversations"])
    Tenant = Annotated[str, Depends(tenant_of)]

    @router.get("/threads")
    def threads(tenant: Tenant, scope: QueryScope, limit: Limit = 50,
                include_descendants: bool = False) -> dict[str, Any]:
        """The scope's conversations (threads), most recent first."""
        return threads_data(memory.threads.list(scope.resolve(tenant), limit=limit,
                                                include_descendants=include_descendants))

    @router.get("/threads/{thread_id}/turns")
    def turns(thread_id: str, tenant: Tenant, scope: QueryScope, limit: Limit = 1000) -> dict[str, Any]:
        """Every turn of one thread of the scope, in order."""
        return turns_data(memory.threads.turns(thread_id, scope.resolve(tenant), limit=limit))

    @router.post("/threads/search")
    def search(body: PastSearchIn, tenant: Tenant) -> dict[str, Any]:
        """Search past conversations by words and meaning: thread excerpts, best first."""
        return excerpts_data(memory.threads.search(
 body.query, body.scope.resolve(tenant), k=body.k, window=body.window,
 include_descendants=body.include_descendants))

    @router.post("/consolidate")
    def consolidate(body: ConsolidateIn, tenant: Tenant) -> dict[str, Any]:
        """Consolidate the tenant's new turns into memories and idle threads into episodes now."""
        scope = body.scope.resolve(tenant) if body.scope is not None else None
        report = memory.consolidation.run(tenant=tenant, scope=scope, dry_run=body.dry_run,
                                          budget_tokens=body.budget_tokens)
        return consolidation_data(report)

    return router


def install(app: FastAPI, memory: Memory, tenancy: Tenancy, bearer: Any) -> None:
    errors = {status: answer for status, answer in ERROR_RESPONSES.items()
              if not tenancy.single_tenant or status != 401}
    app.include_router(episodes_router(memory, _tenant_dependency(tenancy, bearer)), responses=errors)


def _tenant_dependency(tenancy: Tenancy, bearer: Any) -> Callable[..., str]:
    if tenancy.single_tenant:
        def only_tenant() -> str:
            return tenancy.caller_for(None).tenant

        return only_tenant

    def tenant_of(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> str:
        return tenancy.caller_for(credentials.credentials if credentials else None).tenant

    return tenant_of
