"""Shared CLI plumbing: options → Memory/Scope, JSON output, error → exit code."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console

from ..config import Settings
from ..errors import (
    ConfigError,
    ConflictError,
    EngramError,
    NotFoundError,
    PermissionDeniedError,
    StorageError,
    ValidationError,
)
from ..memory import Memory
from ..model import Scope
from ..values.governance import PendingApprovalError

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
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (the HTTP API's shape) instead of tables")]


def scope_from(tenant: str, user: str | None, agent: str | None, ns: list[str] | None) -> Scope:
    """The scope the options name. An empty --user/--agent/--ns label is refused (as over
    HTTP), never read as "not given"."""
    if ns is not None and ns != []:
        return Scope(tenant, tuple(ns))
    if user is not None:
        return Scope.for_user(tenant, user, agent=agent)
    if agent is not None:
        return Scope.for_agent(tenant, agent)
    return Scope(tenant)


def database_file(target: str) -> Path | None:
    """The SQLite file a --db value names; None for PostgreSQL and in-memory databases."""
    if target.startswith(("postgresql://", "postgres://")) or target == ":memory:":
        return None
    return Path(target.removeprefix("sqlite:///")).expanduser()


@contextmanager
def opened(db: str | None, *, create: bool = False, all_or_nothing: bool = False,
           **settings: Any) -> Iterator[Memory]:
    """Open the database. Read commands (``create=False``) never create a file or its
    folder: a missing SQLite file is an error. Write commands create it and say so.
    ``all_or_nothing``: the command writes in one transaction (import), so when it fails
    nothing was written and the file it created is removed again."""
    configured = Settings(**settings) if settings else Settings()
    target = db or configured.db
    path = database_file(target)
    missing = path is not None and not path.exists()
    if missing and not create:
        fail(f"no engram database at {path} (write commands such as `engram remember` create one; "
             "pick another with --db or ENGRAM_DB)", 3)
    memory = run(lambda: Memory.open(target, settings=configured))
    if missing and not all_or_nothing:
        errors.print(f"created a new engram database at {path}", highlight=False, soft_wrap=True)
    done = False
    try:
        yield memory
        done = True
    finally:
        memory.close()
        if missing and all_or_nothing and path is not None:
            if done:
                errors.print(f"created a new engram database at {path}", highlight=False, soft_wrap=True)
            else:
                _remove_database(path)


def _remove_database(path: Path) -> None:
    """The SQLite file this command created, with its journal files."""
    for file in (path, *(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal"))):
        file.unlink(missing_ok=True)


def run(action: Callable[[], T]) -> T:
    """Map engram errors to a message and an exit code; anything else is a bug and
    keeps its traceback."""
    try:
        return action()
    except EngramError as exc:
        code = next(code for kind, code in EXIT_CODES if isinstance(exc, kind))
        fail(f"{type(exc).__name__}: {exc}", code)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one error line to stderr and exit with ``code``."""
    errors.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def say(message: str) -> None:
    """A plain line on stdout (no markup, no highlighting: ids and content print as they are)."""
    console.print(message, markup=False, highlight=False, soft_wrap=True)


__all__ = [
    "AgentOption", "DbOption", "JsonOption", "NsOption", "TenantOption", "UserOption", "console",
    "database_file", "errors", "fail", "opened", "print_json", "run", "say", "scope_from",
]


def key_values(pairs: list[str] | None) -> dict[str, str]:
    """``--set key=value`` options as a dict."""
    out = {}
    for pair in pairs or []:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"--set takes key=value, got {pair!r}")
        out[key.strip()] = value.strip()
    return out
