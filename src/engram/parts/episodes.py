"""The conversation parts of ``Memory``: ``memory.threads`` (past conversations and
their episodes) and ``memory.consolidation``. Each is thin: it validates its
arguments and calls one function of episodes/ or consolidation/, over the one
write core; the read verbs are given only its read context (``reads.py``)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ..config import Settings
from ..consolidation.run import ConsolidationReport, Consolidator
from ..consolidation.schedule import Schedule, ScheduleClock, load_schedules
from ..core import WriteCore
from ..episodes.recorder import record_turns
from ..episodes.retention import drop_expired_turns
from ..episodes.search import SearchOptions, ThreadExcerpt, search_turns
from ..errors import InvalidValueError, NotFoundError
from ..limits import check_count
from ..llm.base import LLM
from ..model import MemoryRecord, Scope, check_scope, utc
from ..pii import mask_identifier
from ..pipeline.messages import Message, normalize_messages
from ..pipeline.run import Pipeline
from ..reads import ReadContext
from ..values.episodes import Thread, ThreadQuery, Turn, TurnQuery


def keep_turns(
    core: WriteCore, settings: Settings, turns: Sequence[Message], scope: Scope, thread_id: str | None,
    metadata: Mapping[str, Any] | None, turn_metadata: Mapping[str, Any] | None = None,
) -> str | None:
    """Turns already normalized (``add()`` has them) kept in their thread; None when episodes are off."""
    if not settings.episodes:
        return None
    return record_turns(core, turns, scope, thread_id, idle_gap=idle_gap(settings),
                        metadata=metadata, turn_metadata=turn_metadata)

class Threads:
    """``memory.threads``: conversations kept turn by turn, searched later, and the
    episode that summarises each."""

    def __init__(self, core: WriteCore, settings: Settings) -> None:
        self._core = core
        self._settings = settings

    @property
    def _reads(self) -> ReadContext:
        return self._core.reads

    def record(
        self, messages: Any, scope: Scope, *, thread_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> str | None:
        """Keep conversation turns in their thread (PII-screened like memories) without
        extracting anything; returns the thread id (None when episodes are switched off)."""
        check_scope(scope)
        turns = normalize_messages(messages)
        self._core.limits.check_turns([turn.content for turn in turns])
        return keep_turns(self._core, self._settings, turns, scope, thread_id, metadata)

    def _stored_id(self, thread_id: str, scope: Scope) -> str:
        """A thread id as it was stored: what the PII policy masks, masked the same way."""
        if not isinstance(thread_id, str):
            return thread_id
        return mask_identifier(thread_id, self._reads.pii_for(scope.tenant))

    def list(self, scope: Scope, *, limit: int = 50, include_descendants: bool = False) -> builtins.list[Thread]:
        """The scope's conversations, most recent first."""
        check_scope(scope)
        check_count(limit, "limit")
        return self._reads.store.threads(scope.tenant, ThreadQuery(scope.namespace, include_descendants, limit=limit))

    def turns(self, thread_id: str, scope: Scope, *, limit: int = 1000) -> builtins.list[Turn]:
        """Every turn of one thread, in order; NotFoundError when the scope has no such thread."""
        check_scope(scope)
        check_count(limit, "limit")
        thread_id = self._stored_id(thread_id, scope)
        reads = self._reads
        if not reads.store.threads(scope.tenant, ThreadQuery(scope.namespace, ids=(thread_id,), limit=1)):
            raise NotFoundError(f"no thread {thread_id!r} in scope {scope}")
        return reads.store.turns(scope.tenant, TurnQuery(scope.namespace, thread_id=thread_id, limit=limit))

    def search(
self, query: str, scope: Scope, *, k: int = 5, window: int = 1, include_descendants: bool = False,
before: datetime | None = None,
    ) -> builtins.list[ThreadExcerpt]:
        """Past turns matching the query by words and by meaning, as thread excerpts (the
        matching turns with ``window`` neighbours each, thread id, time), best first.
        ``include_descendants`` searches every scope below (e.g. a whole org); callers
        decide who may do that."""
        check_scope(scope)
        check_count(k, "k")
        if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= 20:
            raise InvalidValueError(f"window must be an integer in [0, 20], got {window!r}")
        options = SearchOptions(k=k, window=window, descendants=include_descendants,
                                lexical_weight=self._settings.turn_lexical_weight,
                                before=utc(before) if before is not None else None)
        return search_turns(self._core, scope, query, options)

    def episode(self, thread_id: str, scope: Scope) -> MemoryRecord | None:
        """The episode memory summarising a thread, once written."""
        check_scope(scope)
        thread_id = self._stored_id(thread_id, scope)
        reads = self._reads
        found = reads.store.threads(scope.tenant, ThreadQuery(scope.namespace, ids=(thread_id,), limit=1))
        if not found or found[0].episode_id is None:
            return None
        records = reads.store.get(scope.tenant, [found[0].episode_id])
        return records[0] if records else None

    def drop_expired(self) -> int:
        """Retention: drop turns older than each tenant's retention. Returns how many
        tenants it ran for; ``memory.maintenance.run()`` does it."""
        return drop_expired_turns(self._core, self._settings.episode_retention)


class Consolidation:
    """``memory.consolidation``: new turns into memories, idle threads into episodes,
    now or on a schedule."""

    def __init__(self, core: WriteCore, settings: Settings, pipeline: Callable[[], Pipeline],
                 llm: LLM | None) -> None:
        self._core = core
        self._settings = settings
        self._pipeline = pipeline
        self._llm = llm

    def run(
        self, *, tenant: str | None = None, scope: Scope | None = None, dry_run: bool = False,
        budget_tokens: int | None = None, agent: Any = None,
    ) -> ConsolidationReport:
        """Consolidate new turns (after each scope's watermark) into memories and idle
        threads into episodes, as actor ``consolidator``; ``dry_run`` writes nothing and
        reports the diff it would apply. ``scope`` limits it to a namespace and below.
        ``agent`` (a LangChain chat model with tools) runs the extraction as a LangGraph
        agent; without it the pipeline's extractor runs (rules offline, the LLM when
        configured). Both write through the one write core."""
        if budget_tokens is not None:
            check_count(budget_tokens, "budget_tokens")
        if scope is not None:
            check_scope(scope)
            tenant = scope.tenant
        return self.consolidator(budget_tokens=budget_tokens, agent=agent).run(
            tenant, scope.namespace if scope is not None else None, dry_run=dry_run)

    def consolidator(self, *, budget_tokens: int | None = None, holder: str | None = None,
                     agent: Any = None) -> Consolidator:
        """The consolidator ``run`` uses, for callers that drive it step by step.
        ``agent``: a LangChain chat model that calls tools; the extraction step is then
        a LangGraph agent (consolidation/agent.py) instead of the pipeline's extractor."""
        llm = self._llm or getattr(self._pipeline().extractor, "llm", None)  # the configured LLM writes episodes too
        consolidator = Consolidator(self._core, self._pipeline, llm=llm, idle_gap=idle_gap(self._settings),
                                    budget_tokens=budget_tokens or self._settings.consolidation_budget_tokens,
                                    agent_model=agent)
        if holder:
            consolidator.holder = holder
        return consolidator

    def schedules(self) -> builtins.list[Schedule]:
        """The schedules configured (``Settings.consolidation_schedules``)."""
        return load_schedules(self._settings.consolidation_schedules)

    def clock(self, schedules: Sequence[Schedule] | None = None) -> ScheduleClock:
        """Which schedules are due when (counted from now, on this memory's clock)."""
        chosen = self.schedules() if schedules is None else list(schedules)
        return ScheduleClock(chosen, self._core.clock.now())

    def run_due(self, clock: ScheduleClock) -> builtins.list[ConsolidationReport]:
        """Run every schedule due now (a worker calls this on each loop)."""
        consolidator = self.consolidator()
        return [consolidator.run(s.tenant, s.scope) for s in clock.due(self._core.clock.now())]


def idle_gap(settings: Settings) -> timedelta:
    return timedelta(minutes=settings.episode_idle_minutes)
