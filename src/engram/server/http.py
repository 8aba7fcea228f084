"""The HTTP API: a FastAPI app over one Memory.

    from engram import Memory
    from engram.server.http import create_app
    app = create_app(Memory.open("memory.db"), api_keys={"k-acme": "acme"})

The tenant of every request is the tenant of its API key (``Authorization: Bearer``);
with ``api_keys=None`` the app is single-tenant and needs no key. Errors are JSON
``{error, message}`` with the status of their kind (``STATUS_OF_ERROR``)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException

from .. import __version__
from ..errors import (
    ConfigError,
    ConflictError,
    EmbeddingError,
    EngramError,
    LLMError,
    NotFoundError,
    PermissionDeniedError,
    StorageError,
    ValidationError,
)
from ..memory import Memory
from . import episodes, governance
from .auth import DEFAULT_TENANT, Tenancy, Unauthorized
from .inspector import add_docs, add_inspector
from .responses import HealthOut
from .routes import v1_router
from .views import mask_json

log = logging.getLogger("engram.server")

STATUS_OF_ERROR: tuple[tuple[type[EngramError], int], ...] = (
    (ValidationError, 422),
    (NotFoundError, 404),
    (ConflictError, 409),
    (PermissionDeniedError, 403),
    (StorageError, 503),
    (LLMError, 502),  # the model provider failed: a bad gateway, not the caller's fault
    (EmbeddingError, 502),
    (ConfigError, 500),
    (EngramError, 400),
)
BEARER = HTTPBearer(auto_error=False, description="An API key: Authorization: Bearer <key>")
NOT_AN_OBJECT = frozenset({"model_attributes_type", "model_type", "dict_type"})


def create_app(
    memory: Memory, *, api_keys: Mapping[str, str] | None, tenant: str = DEFAULT_TENANT, ui: bool = True,
) -> FastAPI:
    """The app. ``api_keys`` maps each key to its tenant; None runs single-tenant as
    ``tenant``. ``ui`` serves the memory inspector at /ui. The caller keeps ownership
    of ``memory`` (and closes it)."""
    tenancy = Tenancy(api_keys, tenant)
    app = FastAPI(
        title="engram",
        version=__version__,
        description="Long-term memory for AI agents. " + tenancy.describe() + ".",
        docs_url=None,
        redoc_url=None,
    )
    app.state.memory = memory
    app.state.tenancy = tenancy
    app.state.permissions_of = _permissions_dependency(tenancy)
    app.include_router(v1_router(memory, _tenant_dependency(tenancy), app.state.permissions_of,
                                 api_keys=not tenancy.single_tenant))
    add_docs(app)
    if ui:
        add_inspector(app)
    governance.install(app, memory, tenancy, BEARER)  # approvals, recalls, quality (samples, report), /metrics, reveal
    episodes.install(app, memory, tenancy, BEARER)  # past conversations (threads), consolidation
    _add_error_handlers(app)
    _add_masked_view(app)
    app.add_middleware(BodyLimit, max_bytes=memory.settings.max_request_bytes)

    @app.get("/healthz", response_model=HealthOut, tags=["ops"])
    def healthz() -> dict[str, Any]:
        """Liveness: the process answers (no key needed)."""
        return {"status": "ok", "version": __version__}

    return app


def _permissions_dependency(tenancy: Tenancy):
    """What the caller may do beyond reading and writing its tenant's memories
    (``review``, ``reveal``: auth.py), as ``GET /v1/me`` reports it to the inspector."""
    if tenancy.single_tenant:
        def every_permission() -> list[str]:
            return sorted(tenancy.caller_for(None).permissions)

        return every_permission

    def permissions_of_key(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]) -> list[str]:
        return sorted(tenancy.caller_for(credentials.credentials if credentials else None).permissions)

    return permissions_of_key


def _tenant_dependency(tenancy: Tenancy):
    if tenancy.single_tenant:
        def fixed_tenant() -> str:
            return tenancy.default_tenant

        return fixed_tenant

    def tenant_of_key(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]) -> str:
        return tenancy.tenant_for(credentials.credentials if credentials else None)

    return tenant_of_key


class BodyLimit:
    """Refuse a request body over ``max_bytes`` with 413 before it is parsed: by its
    Content-Length at once, or while it streams in (chunked) as soon as it is over (the
    body read so far is then handed to the app as it arrived)."""

    def __init__(self, app: Any, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _refuse(self, scope: Any, receive: Any, send: Any) -> None:
        message = f"the request body is over {self.max_bytes} bytes (Settings.max_request_bytes)"
        await JSONResponse(error_body("RequestEntityTooLarge", message), status_code=413)(scope, receive, send)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        if declared is not None:  # a declared length within the limit: the server enforces it
            await self.app(scope, receive, send)
            return
        received: list[Any] = []
        size = 0
        while True:  # a streamed body: counted before the app sees any of it
            message = await receive()
            received.append(message)
            if message.get("type") != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Any:
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, send)


def _add_masked_view(app: FastAPI) -> None:
    """``?mask=true`` on any endpoint: the JSON answer with every field's personal data
    masked (views.mask_json); what the web inspector always asks for."""

    @app.middleware("http")
    async def masked_view(request: Request, call_next: Any) -> Any:
        response = await call_next(request)
        wanted = request.query_params.get("mask", "").lower() in ("true", "1", "yes")
        if not wanted or not response.headers.get("content-type", "").startswith("application/json"):
            return response
        body = b"".join([chunk async for chunk in response.body_iterator])
        headers = {k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "content-type")}
        return JSONResponse(mask_json(json.loads(body)), status_code=response.status_code, headers=headers)


# -- errors → status codes -----------------------------------------------------------------


def error_body(error: str, message: str, details: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"error": error, "message": message}
    if details is not None:
        body["details"] = details
    return body


def status_of(exc: EngramError) -> int:
    return next(status for kind, status in STATUS_OF_ERROR if isinstance(exc, kind))


def _add_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(EngramError, _engram_error)
    app.add_exception_handler(Unauthorized, _unauthorized)
    app.add_exception_handler(RequestValidationError, _bad_request)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)


async def _engram_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, EngramError)
    status = status_of(exc)
    if status >= 500:
        log.warning("%s %s: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    return JSONResponse(error_body(type(exc).__name__, str(exc)), status_code=status)


async def _unauthorized(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(error_body("Unauthorized", str(exc)), status_code=401,
                        headers={"WWW-Authenticate": "Bearer"})


async def _bad_request(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = [_detail(error) for error in exc.errors()]
    message = "; ".join(f"{d['field']}: {d['message']}" if d["field"] else d["message"] for d in details)
    return JSONResponse(error_body("ValidationError", message or "invalid request", details), status_code=422)


def _detail(error: Mapping[str, Any]) -> dict[str, Any]:
    """One pydantic error without its input (it may be large, or secret)."""
    loc = [str(part) for part in error.get("loc", ())]
    if loc and loc[0] in ("body", "query", "path", "header"):
        where, loc = loc[0], loc[1:]
    else:
        where = ""
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    if where == "body" and not loc and error.get("type") in NOT_AN_OBJECT:
        message = "the body must be a JSON object (Content-Type: application/json)"
    if error.get("type") == "json_invalid":
        reason = (error.get("ctx") or {}).get("error")
        message = f"the body is not valid JSON ({reason}, at character {loc[0] if loc else '?'})"
        loc = []
    field = ".".join(loc)
    return {"in": where, "field": field, "message": message, "type": str(error.get("type", ""))}


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    try:
        name = HTTPStatus(exc.status_code).phrase.replace(" ", "")
    except ValueError:
        name = "HTTPError"
    return JSONResponse(error_body(name, str(exc.detail)), status_code=exc.status_code, headers=exc.headers)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    # The HTTP edge: a bug must not hand the caller a stack trace. Starlette re-raises the
    # exception after this answer, so the server logs it with its traceback, and the server
    # then drops the connection: "Connection: close" tells the client so, instead of its next
    # request on a keep-alive connection being reset.
    return JSONResponse(error_body("InternalServerError", "internal error; see the server log"), status_code=500,
                        headers={"Connection": "close"})
