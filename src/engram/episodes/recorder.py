"""Persist conversation turns: every surface that sees a conversation (Memory.add,
the memory graph, engram chat, HTTP, MCP, Deep Agents) records it here, through the
write core (which screens each turn with the tenant's PII policy before it is stored)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ..core import WriteCore
from ..errors import InvalidValueError
from ..model import Message, Scope, check_label, utc
from ..pii import mask_identifier
from ..reads import ReadContext
from ..values.episodes import EpisodeWrites, ThreadQuery, TurnDraft

AUTO_PREFIX = "auto-"


def record_turns(
    core: WriteCore, messages: Sequence[Message], scope: Scope, thread_id: str | None, *,
    idle_gap: timedelta, metadata: Mapping[str, Any] | None = None, turn_metadata: Mapping[str, Any] | None = None,
) -> str:
    """Store the turns in their thread (one transaction) and return the thread id.
    Without a thread id the turns continue the scope's last automatic thread unless it
    has been idle longer than ``idle_gap``; then a new one starts. ``metadata`` goes on
    the thread and its turns, ``turn_metadata`` on these turns only."""
    if thread_id is not None:
        check_label(thread_id, "thread_id")
    if not messages:
        raise InvalidValueError("no turns to record")
    now = core.clock.now()
    # stored as the PII policy leaves ids (what it masks, masked): the id returned is the one kept
    thread = mask_identifier(thread_id, core.pii_for(scope.tenant)) if thread_id else _auto_thread(
        core.reads, scope, now, idle_gap)
    extra = dict(metadata or {})
    drafts = tuple(
        TurnDraft(scope.namespace, thread, m.role, m.content, utc(m.at) if m.at is not None else now,
                  message_id=m.id, name=m.name, metadata={**extra, **(turn_metadata or {})})
        for m in messages if m.content.strip()
    )
    if drafts:
        about = {**owners(scope.namespace), **extra}
        core.commit([], tenant=scope.tenant, episodes=EpisodeWrites(
            turns=drafts, thread_metadata=((scope.namespace, thread, about),)))
    return thread


def owners(namespace: tuple[str, ...]) -> dict[str, str]:
    """Who a thread belongs to, read from its namespace: ("agents", a, "users", u) →
    {"agent": a, "user": u}; ("orgs", o, …) → {"org": o, …}."""
    names = {"users": "user", "agents": "agent", "orgs": "org"}
    return {names[namespace[i]]: namespace[i + 1] for i in range(0, len(namespace) - 1, 2)
            if namespace[i] in names}


def _auto_thread(reads: ReadContext, scope: Scope, now: datetime, idle_gap: timedelta) -> str:
    latest = reads.store.threads(scope.tenant, ThreadQuery(scope.namespace, limit=1))
    if latest and latest[0].id.startswith(AUTO_PREFIX) and now - latest[0].last_at <= idle_gap:
        return latest[0].id
    return f"{AUTO_PREFIX}{now:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
