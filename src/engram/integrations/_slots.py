"""Keyed records: one engram record per (namespace, key).

A LangGraph item or a Deep Agents file is addressed by a key, not by an engram
id. The record id is derived from (space, tenant, namespace, key), so a read is
a primary-key lookup and two writers creating the same key collide inside the
store: one wins, the other sees ConflictError and retries as an update. Every
write goes through ``Memory`` (policies, versions, audit in one transaction).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..contention import last_writer_wins
from ..errors import ConflictError, NotFoundError
from ..memory import Memory
from ..model import Kind, MemoryRecord, Scope, Status
from ..writes import MemoryDraft


def slot_id(space: str, scope: Scope, key: str) -> str:
    """32 hex characters, stable for the same (space, tenant, namespace, key)."""
    payload = json.dumps([space, scope.tenant, list(scope.namespace), key], ensure_ascii=False)
    return hashlib.blake2b(payload.encode("utf-8"), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class SlotValue:
    """The state a keyed write asks for."""

    content: str
    metadata: Mapping[str, Any]
    kind: Kind = Kind.FACT
    tags: Sequence[str] = ()
    expires_at: datetime | None = None
    read_only: bool = False
    importance: float = 0.5


class Slots:
    """Get / put / delete records by key inside one ``space`` (e.g. "langgraph")."""

    def __init__(self, memory: Memory, space: str) -> None:
        self.memory = memory
        self.space = space

    def id(self, scope: Scope, key: str) -> str:
        return slot_id(self.space, scope, key)

    def stored(self, scope: Scope, key: str) -> MemoryRecord | None:
        """The record whatever its status (a forgotten key leaves a tombstone)."""
        try:
            return self.memory.get(self.id(scope, key), scope)
        except NotFoundError:
            return None

    def live(self, scope: Scope, key: str, now: datetime | None = None) -> MemoryRecord | None:
        """The record when it is active and not expired, else None."""
        record = self.stored(scope, key)
        moment = now or self.memory.clock.now()
        return record if record is not None and record.is_valid_at(moment) else None

    def put(
        self,
        scope: Scope,
        key: str,
        value: SlotValue,
        *,
        actor: str,
        expected_version: int | None = None,
        override_read_only: bool = False,
        reason: str | None = None,
    ) -> MemoryRecord:
        """Create or replace the record of ``key``. ``expected_version`` (0 = must not
        exist) makes it a compare-and-swap; without it, concurrent writers retry
        until their write lands (last writer wins, nothing is half-written)."""

        def attempt() -> MemoryRecord:
            current = self.stored(scope, key)
            if expected_version is not None:
                now = self.memory.clock.now()
                seen = current.version if current is not None and current.is_valid_at(now) else 0
                if seen != expected_version:
                    raise ConflictError(
                        f"{key!r} in {scope} is at version {seen}, expected {expected_version}: it changed meanwhile"
                    )
            if current is None:
                return self._create(scope, key, value, actor)
            if current.status is not Status.ACTIVE:
                return self._revive(current, scope, value, actor, reason)
            return self.memory.update(
                current.id, scope, actor=actor, reason=reason, expected_version=current.version,
                override_read_only=override_read_only, content=value.content, metadata=dict(value.metadata),
                kind=value.kind, tags=list(value.tags), expires_at=value.expires_at, read_only=value.read_only,
                importance=value.importance,
            )

        return last_writer_wins(attempt, budget_s=self._budget_s, compare_and_swap=expected_version is not None)

    def delete(
        self,
        scope: Scope,
        key: str,
        *,
        actor: str,
        expected_version: int | None = None,
        override_read_only: bool = False,
        reason: str | None = None,
    ) -> bool:
        """Soft-delete (forget) the record of ``key``; True when a live one existed.
        Its versions and audit stay; writing the key again continues the same history.
        ``expected_version`` makes it a compare-and-swap; without it, a delete racing
        concurrent writers retries until it lands, as ``put`` does."""

        def attempt() -> bool:
            current = self.stored(scope, key)
            if current is None or current.status is not Status.ACTIVE:
                if expected_version not in (None, 0):
                    raise ConflictError(f"{key!r} in {scope} does not exist, expected version {expected_version}")
                return False
            was_live = current.is_valid_at(self.memory.clock.now())
            if expected_version is not None and (current.version if was_live else 0) != expected_version:
                raise ConflictError(
                    f"{key!r} in {scope} is at version {current.version}, expected {expected_version}")
            try:
                self.memory.forget(current.id, scope, actor=actor, reason=reason,
                                   override_read_only=override_read_only)
            except NotFoundError:  # purged meanwhile
                return False
            return was_live

        return last_writer_wins(attempt, budget_s=self._budget_s, compare_and_swap=expected_version is not None)

    @property
    def _budget_s(self) -> float:
        return max(self.memory.settings.busy_timeout_ms / 1000.0, 1.0)

    def _create(self, scope: Scope, key: str, value: SlotValue, actor: str) -> MemoryRecord:
        draft = MemoryDraft(
            value.content, kind=value.kind, importance=value.importance, tags=list(value.tags),
            metadata=dict(value.metadata), expires_at=value.expires_at, read_only=value.read_only,
            id=self.id(scope, key),
        )
        return self.memory.remember_many([draft], scope, actor=actor)[0]

    def _revive(
        self, tombstone: MemoryRecord, scope: Scope, value: SlotValue, actor: str, reason: str | None
    ) -> MemoryRecord:
        """Write a key again after it was deleted: a restore of the tombstone as a
        compare-and-swap on its version, so history stays one line (create, forget,
        restore) and versions never repeat."""
        return self.memory.restore(
            tombstone.id, scope, actor=actor, reason=reason, expected_version=tombstone.version,
            override_read_only=True, content=value.content, metadata=dict(value.metadata), kind=value.kind,
            tags=list(value.tags), expires_at=value.expires_at, read_only=value.read_only,
            importance=value.importance,
        )
