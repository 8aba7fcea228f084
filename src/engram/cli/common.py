"""Shared CLI plumbing: options → Memory/Scope, output formatting, error → exit code."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from ..config import Settings
from ..errors import (
    ConflictError,
    EngramError,
    NotFoundError,
    PendingApprovalError,
    PermissionDeniedError,
    StorageError,
    ValidationError,
)
from ..memory import Memory
from ..model import MemoryRecord, Scope, SearchHit, Version
from ..store.codec import record_to_data, version_to_data

console = Console()
errors = Console(stderr=True)
T = TypeVar("T")

EXIT_CODES: tuple[tuple[type[EngramError], int], ...] = (
    (ValidationError, 2),
    (NotFoundError, 3),
    (ConflictError, 4),
    (PermissionDeniedError, 5),
    (PendingApprovalError, 7),  # held for a reviewer: `engram approvals`
    (StorageError, 6),
    (EngramError, 1),
)

DbOption = Annotated[str | None, typer.Option("--db", envvar="ENGRAM_DB", help="SQLite path or postgresql:// URL")]
TenantOption = Annotated[str, typer.Option("--tenant", "-t", envvar="ENGRAM_TENANT", help="Tenant id")]
UserOption = Annotated[str | None, typer.Option("--user", "-u", help="User id (scope users/<id>)")]
AgentOption = Annotated[str | None, typer.Option("--agent", "-a", help="Agent id (scope agents/<id>)")]
NsOption = Annotated[
    list[str] | None, typer.Option("--ns", help="Namespace label, repeatable: --ns users --ns alice")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables")]


def scope_from(tenant: str, user: str | None, agent: str | None, ns: list[str] | None) -> Scope:
    if ns:
        return Scope(tenant, tuple(ns))
    if user:
        return Scope.for_user(tenant, user, agent=agent)
    if agent:
        return Scope.for_agent(tenant, agent)
    return Scope(tenant)


@contextmanager
def opened(db: str | None, **settings: Any) -> Iterator[Memory]:
    memory = run(lambda: Memory.open(db, settings=Settings(**settings) if settings else None))
    try:
        yield memory
    finally:
        memory.close()


def run(action: Callable[[], T]) -> T:
    """Map engram errors to a message and an exit code; anything else is a bug and
    keeps its traceback."""
    try:
        return action()
    except EngramError as exc:
        code = next(code for kind, code in EXIT_CODES if isinstance(exc, kind))
        errors.print(f"[red]error:[/red] {type(exc).__name__}: {exc}")
        raise typer.Exit(code) from None


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def records_table(records: list[MemoryRecord], title: str | None = None) -> Table:
    table = Table(title=title)
    for column in ("id", "kind", "content", "importance", "status", "v", "namespace"):
        table.add_column(column, overflow="fold")
    for r in records:
        table.add_row(r.id[:12], r.kind.value, r.content, f"{r.importance:.2f}", r.status.value, str(r.version),
                      "/".join(r.scope.namespace))
    return table


def hits_table(hits: list[SearchHit]) -> Table:
    table = Table()
    for column in ("score", "kind", "content", "lexical", "vector", "recency", "importance", "id"):
        table.add_column(column, overflow="fold")
    for h in hits:
        s = h.signals
        table.add_row(f"{h.score:.3f}", h.record.kind.value, h.record.content, f"{s.lexical:.2f}", f"{s.vector:.2f}",
                      f"{s.recency:.2f}", f"{s.importance:.2f}", h.record.id[:12])
    return table


def versions_table(versions: list[Version]) -> Table:
    table = Table()
    for column in ("v", "operation", "at", "actor", "reason", "status", "content"):
        table.add_column(column, overflow="fold")
    for v in versions:
        record = v.record
        table.add_row(str(v.version), v.operation.value, v.at.isoformat(timespec="seconds"), v.actor,
                      v.reason or "", record.status.value if record else "", record.content if record else "")
    return table


def hit_data(hit: SearchHit) -> dict[str, Any]:
    s = hit.signals
    return {"score": hit.score, "signals": {"lexical": s.lexical, "vector": s.vector, "relevance": s.relevance,
            "recency": s.recency, "importance": s.importance, "validity": s.validity},
            "record": record_to_data(hit.record)}


__all__ = [
    "AgentOption", "DbOption", "JsonOption", "NsOption", "TenantOption", "UserOption", "console", "errors",
    "hit_data", "hits_table", "opened", "print_json", "record_to_data", "records_table", "run", "scope_from",
    "version_to_data", "versions_table",
]
