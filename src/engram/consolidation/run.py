"""One consolidation run: for each scope, under its leader lock, read the turns after
its watermark (within a token budget), extract facts through the normal pipeline
(the rule extractor offline, the configured LLM otherwise: the same AddRun as
``Memory.add``, as actor ``consolidator``), summarise idle threads into episodes,
and commit the memories, the episodes and the watermark move in ONE transaction
through the write core.

Exactly once: a crash before the commit leaves the watermark where it was (the next
run reads the same turns); a commit moves it by compare-and-swap, so two runs that
both read the same turns cannot both commit them. ``dry_run`` plans everything and
writes nothing: the report is the diff that would be applied.
"""

from __future__ import annotations

import socket
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from ..core import Admitted, WriteCore, retired_by
from ..episodes.search import embed_missing
from ..episodes.summary import plan_episode
from ..errors import ConflictError, PermissionDeniedError, WorkCancelledError
from ..llm.base import LLM, TokenUsage
from ..maintenance import duplicates_in
from ..model import Message, Operation, Scope
from ..pipeline.run import EXTRACTED_BY, AddEvent, AddRun, Pipeline
from ..store.base import AuditDraft, Holding, RecordFilter
from ..values.episodes import EpisodeLink, EpisodeWrites, ThreadQuery, Turn, TurnQuery, WatermarkMove
from ..values.governance import GovernanceWrites
from .agent import ConsolidationAgent

ACTOR = "consolidator"
CHARS_PER_TOKEN = 4
MAX_TURNS_READ = 5000


@dataclass(frozen=True, slots=True)
class Diff:
    """One change a run applies (or, dry, would apply)."""

    operation: str  # create / update / supersede / pending / noop / skipped / episode / watermark
    content: str
    record_id: str | None = None
    target_id: str | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class ScopeReport:
    tenant: str
    namespace: tuple[str, ...]
    status: str  # done / nothing / locked / conflict / cancelled (scope purged meanwhile) / dry-run / failed
    turns: int = 0
    after_seq: int = 0
    upto_seq: int = 0
    episodes: int = 0
    diff: tuple[Diff, ...] = ()
    usage: TokenUsage = field(default_factory=TokenUsage)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ConsolidationReport:
    started_at: datetime
    finished_at: datetime
    dry_run: bool
    scopes: tuple[ScopeReport, ...]

    @property
    def turns(self) -> int:
        return sum(s.turns for s in self.scopes)

    def count(self, operation: str) -> int:
        return sum(1 for s in self.scopes for d in s.diff if d.operation == operation)


class _Deferred(WriteCore):
    """The write core with commit deferred: the pipeline's commit is captured so the
    run can add its episodes and watermark and write everything at once."""

    def __init__(self, core: WriteCore) -> None:
        self.__dict__.update(core.__dict__)
        self.admitted: list[Admitted] = []
        self.audit: list[AuditDraft] = []
        self.pending: list[Any] = []

    def commit(self, admitted: Sequence[Admitted], *, tenant: str | None = None, audit: Sequence[AuditDraft] = (),
               governance: GovernanceWrites | None = None, **_: Any) -> list[Any]:
        self.admitted += admitted
        self.audit += audit
        if governance is not None:
            self.pending += governance.pending
        return [a.record for a in admitted]


@dataclass
class Consolidator:
    core: WriteCore
    pipeline: Callable[[], Pipeline]
    llm: LLM | None = None  # episode summaries by the model when given
    idle_gap: timedelta = timedelta(minutes=30)
    budget_tokens: int = 20_000
    lease_seconds: float = 900.0
    holder: str = field(default_factory=lambda: f"{socket.gethostname()}:{uuid.uuid4().hex[:8]}")
    embed_turns: bool = True
    agent_model: Any = None  # a LangChain chat model with tools: the LLM (agent) variant of the extraction step

    def run(self, tenant: str | None = None, scope: tuple[str, ...] | None = None, *,
            dry_run: bool = False) -> ConsolidationReport:
        """Every scope holding turns (of one tenant, under one namespace prefix, or all)."""
        started = self.core.clock.now()
        tenants = [tenant] if tenant else self._tenants()
        reports = []
        for name in tenants:
            for namespace in self.core.store.turn_scopes(name):
                if scope is None or namespace[: len(scope)] == tuple(scope):
                    reports.append(self.run_scope(Scope(name, namespace), dry_run=dry_run))
        return ConsolidationReport(started, self.core.clock.now(), dry_run, tuple(reports))

    def _tenants(self) -> list[str]:
        store = self.core.store
        return sorted(set(store.tenants()) | set(getattr(store, "turn_tenants", list)()))

    def run_scope(self, scope: Scope, *, dry_run: bool = False) -> ScopeReport:
        now = self.core.clock.now()
        with self.core.store.scope_lease(scope.tenant, scope.namespace, self.holder, now,
                                         self.lease_seconds) as held:
            if not held:
                return ScopeReport(scope.tenant, scope.namespace, "locked")
            try:
                # every write of the run checks the lease is still ours: a purge of the scope deletes it
                with self.core.holding(Holding(lease=(scope.namespace, self.holder))):
                    return self._locked_run(scope, now, dry_run)
            except WorkCancelledError as exc:  # the scope was purged meanwhile: nothing of ours was written
                return ScopeReport(scope.tenant, scope.namespace, "cancelled", error=str(exc))
            except ConflictError as exc:  # another run got there first: nothing of ours was written
                return ScopeReport(scope.tenant, scope.namespace, "conflict", error=str(exc))

    def _locked_run(self, scope: Scope, now: datetime, dry_run: bool) -> ScopeReport:
        store = self.core.store
        watermark = store.watermark(scope.tenant, scope.namespace)
        turns = self._budgeted(store.turns(scope.tenant, TurnQuery(scope.namespace, after_seq=watermark,
                                                                    limit=MAX_TURNS_READ)))
        deferred = _Deferred(self.core)
        extracted: list[Diff] = []
        usage = TokenUsage()
        if turns and self.agent_model is not None:
            plan = ConsolidationAgent(self.core, scope, self.agent_model, turns, ACTOR).run()
            deferred.admitted += plan.admitted
            extracted = [Diff(op, content, record_id, target, reason) for op, content, record_id, target, reason
                         in plan.diff]
            usage = plan.usage
            deferred.audit.append(AuditDraft(
                actor=ACTOR, operation=Operation.EXTRACT, at=now, namespace=scope.namespace,
                detail={"extractor": "agent", "events": dict(Counter(d.operation for d in extracted)),
                        "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}))
        elif fresh := [t for t in turns if t.metadata.get(EXTRACTED_BY) != "add"]:  # add() extracted the rest
            threads = {t.thread_id for t in fresh}
            run = AddRun(deferred, self.pipeline(), scope, next(iter(threads)) if len(threads) == 1 else None, ACTOR)
            result = run.run([_message(t) for t in fresh], force=True)
            extracted, usage = [_diff(e) for e in result.events], result.usage
        episode_admitted, episode_diff, links, episode_usage = self._episodes(scope, now)
        touched = {c.id for a in (*deferred.admitted, *episode_admitted) for c in (a.change.record,
                                                                                a.change.previous) if c is not None}
        fold_admitted, fold_diff = self._fold_duplicates(scope, now, touched)
        episode_admitted += fold_admitted
        upto = turns[-1].seq if turns else watermark
        diff = (*extracted, *episode_diff, *fold_diff)
        status = "dry-run" if dry_run else "done"
        if not turns and not links and not fold_admitted:
            return ScopeReport(scope.tenant, scope.namespace, "nothing", after_seq=watermark, upto_seq=watermark)
        if not dry_run:
            audit = [_with_turns(a, watermark, upto) for a in deferred.audit]
            if turns and not any(a.operation is Operation.EXTRACT for a in audit):
                audit.append(AuditDraft(actor=ACTOR, operation=Operation.EXTRACT, at=now, namespace=scope.namespace,
                                        detail={"consolidated_turns": {"after_seq": watermark, "upto_seq": upto},
                                                "events": {}}))
            moves = (WatermarkMove(scope.namespace, watermark, upto, now),) if turns else ()
            self.core.commit(deferred.admitted + episode_admitted,
                             tenant=scope.tenant, audit=audit,
                             governance=GovernanceWrites(pending=tuple(deferred.pending)),
                             episodes=EpisodeWrites(watermarks=moves, episodes=tuple(links)))
            if self.embed_turns and turns:
                embed_missing(self.core, scope, False, len(turns))
        return ScopeReport(scope.tenant, scope.namespace, status, len(turns), watermark, upto, len(links), diff,
                           usage + episode_usage)

    def _fold_duplicates(self, scope: Scope, now: datetime, touched: set[str]) -> tuple[list[Admitted], list[Diff]]:
        """Merge near-identical memories of the scope (maintenance's duplicate test,
        ``is_duplicate``: same words or cosine >= 0.95, same kind): the repeats are
        superseded by the one kept."""
        store = self.core.store
        records = store.query(scope.tenant, RecordFilter(namespace=scope.namespace), limit=10_000)
        vectors = self.core.stored_vectors(scope.tenant, [r.id for r in records])
        admitted, diffs = [], []
        for duplicate, kept in duplicates_in(records, vectors):
            if {duplicate.id, kept.id} & touched:
                continue  # changed by this run already: the next run folds it
            change = retired_by(duplicate, kept.id, actor=ACTOR, reason=f"consolidated: repeats {kept.id}", at=now)
            try:
                admitted.append(self.core.admit(change))
            except PermissionDeniedError:
                continue
            touched.add(duplicate.id)
            diffs.append(Diff("merge", duplicate.content, duplicate.id, kept.id, "repeats a kept memory"))
        return admitted, diffs

    def _budgeted(self, turns: list[Turn]) -> list[Turn]:
        """The oldest turns that fit the token budget (at least one)."""
        spent, out = 0, list[Turn]()
        for turn in turns:
            cost = len(turn.content) // CHARS_PER_TOKEN + 4
            if out and spent + cost > self.budget_tokens:
                break
            spent += cost
            out.append(turn)
        return out

    def _episodes(self, scope: Scope, now: datetime) -> tuple[list[Admitted], list[Diff], list[EpisodeLink],
                                                              TokenUsage]:
        """Plan an episode for every idle thread not summarised since its last turn."""
        store = self.core.store
        idle = store.threads(scope.tenant, ThreadQuery(scope.namespace, idle_before=now - self.idle_gap,
                                                       unsummarized=True, limit=100))
        written: list[Admitted] = []
        diffs: list[Diff] = []
        links: list[EpisodeLink] = []
        usage = TokenUsage()
        for thread in idle:
            turns = store.turns(scope.tenant, TurnQuery(thread.namespace, thread_id=thread.id, limit=MAX_TURNS_READ))
            if not turns:
                continue
            plan = plan_episode(self.core.reads, scope, thread, turns, llm=self.llm, actor=ACTOR, now=now)
            try:
                admitted = [self.core.admit(change) for change in plan.changes]
            except PermissionDeniedError as exc:
                diffs.append(Diff("skipped", plan.record.content, plan.record.id, None, str(exc)))
                continue
            if any(a.approval is not None for a in admitted):
                diffs.append(Diff("skipped", plan.record.content, plan.record.id, None,
                                  "an approval rule holds it: episodes are written without review or not at all"))
                continue
            first = admitted[0].record
            written += admitted
            diffs.append(Diff("episode", first.content if first else plan.record.content, plan.record.id,
                              thread.episode_id, f"thread {thread.id} idle since {thread.last_at:%Y-%m-%d %H:%M} UTC"))
            links.append(plan.link)
            usage = usage + plan.usage
        return written, diffs, links, usage


def _message(turn: Turn) -> Message:
    return Message(turn.role, turn.content, turn.message_id or f"turn:{turn.seq}", turn.name, turn.at)


def _diff(event: AddEvent) -> Diff:
    return Diff(event.event.lower(), event.content, event.record_id, event.target_id, event.reason)


def _with_turns(draft: AuditDraft, after: int, upto: int) -> AuditDraft:
    if draft.operation is not Operation.EXTRACT:
        return draft
    return replace(draft, detail={**draft.detail, "consolidated_turns": {"after_seq": after, "upto_seq": upto}})
