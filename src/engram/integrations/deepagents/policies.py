"""File policies: callables run before every file write an agent (or the app) makes.

A policy receives a ``FileWriteIntent`` and raises ``engram.PermissionDeniedError``
with a reason to refuse; the agent's tool then returns that reason as its error,
and nothing is written. Engram's own ``Memory.policies`` run too (they see the
record being written).
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from ...errors import PermissionDeniedError
from ...model import Scope

FileOperation = Literal["write", "edit", "delete", "upload"]


@dataclass(frozen=True, slots=True)
class FileWriteIntent:
    operation: FileOperation
    path: str  # as the agent sees it (route prefix included)
    content: str | None  # the file after the write; None for delete
    previous: str | None  # the file before; None when it did not exist
    actor: str
    scope: Scope
    application: bool  # True for writes made by application code, not by the agent


FilePolicy = Callable[[FileWriteIntent], None]


def rate_limit(max_writes: int, per_seconds: float, *, clock: Callable[[], float] = time.monotonic) -> FilePolicy:
    """At most ``max_writes`` agent writes per actor in any ``per_seconds`` window."""
    windows: dict[str, deque[float]] = {}
    lock = threading.Lock()

    def policy(intent: FileWriteIntent) -> None:
        if intent.application:
            return
        now = clock()
        with lock:
            window = windows.setdefault(intent.actor, deque())
            while window and now - window[0] >= per_seconds:
                window.popleft()
            if len(window) >= max_writes:
                raise PermissionDeniedError(
                    f"rate limit: at most {max_writes} file writes per {per_seconds:g} s; try again later"
                )
            window.append(now)

    return policy


def forbid_patterns(patterns: Iterable[str], *, reason: str = "content matches a forbidden pattern") -> FilePolicy:
    """Refuse content matching any regex (e.g. API keys, passwords)."""
    compiled = [re.compile(p) for p in patterns]

    def policy(intent: FileWriteIntent) -> None:
        if intent.content is None:
            return
        for pattern in compiled:
            if pattern.search(intent.content):
                raise PermissionDeniedError(f"{reason} ({pattern.pattern!r})")

    return policy


def require_approval(approve: Callable[[FileWriteIntent], bool | str]) -> FilePolicy:
    """Ask ``approve`` (a human, a queue, a classifier); False or a string refuses
    (the string is the reason)."""

    def policy(intent: FileWriteIntent) -> None:
        if intent.application:
            return
        verdict = approve(intent)
        if verdict is True:
            return
        raise PermissionDeniedError(verdict if isinstance(verdict, str) and verdict else "not approved")

    return policy


__all__ = ["FileOperation", "FilePolicy", "FileWriteIntent", "forbid_patterns", "rate_limit", "require_approval"]
