"""What a producer proposes to the write core (``Change``) and what a policy hook
(``PolicyHook``) sees before a write (``WriteIntent``). Value types only: the write core (core.py)
and the approval rules (approval_rules.py) both read them, so they sit below both."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InvalidValueError
from .model import MemoryRecord, Operation, Scope, Version


@dataclass(frozen=True, slots=True)
class WriteIntent:
    """What a policy hook sees before a write; raise PermissionDeniedError to refuse."""

    operation: Operation
    actor: str
    scope: Scope
    record: MemoryRecord | None  # the state after the write, as it will be stored (None for purge)
    previous: MemoryRecord | None


# A policy hook: a callable the write core asks before every write (after the PII policy,
# before the approval rules); it refuses a write by raising PermissionDeniedError.
PolicyHook = Callable[[WriteIntent], None]
Policy = PolicyHook  # its first name, kept for callers (engram.Policy)


@dataclass(frozen=True, slots=True)
class Change:
    """One logical change to one record, as a producer proposes it."""

    operation: Operation
    record: MemoryRecord | None  # the state after the change; None for a purge
    previous: MemoryRecord | None = None  # the stored state it replaces (compare-and-swap on its version)
    actor: str = "app"
    reason: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)
    # an embedding the producer already has, and the exact text it embeds
    vector: np.ndarray | None = None
    vector_text: str | None = None
    # import only: the record's own history, written instead of a new version
    history: tuple[Version, ...] = ()
    # the pending change a reviewer approved: this change carries it out (rules are not asked again)
    approved: str | None = None

    @property
    def scope(self) -> Scope:
        subject = self.record or self.previous
        if subject is None:
            raise InvalidValueError("a change needs a record or the record it replaces")
        return subject.scope
