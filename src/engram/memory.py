"""Memory: the facade that the CLI, HTTP, MCP and integrations all call.

It validates arguments, builds drafts and changes, and hands every write to the
write core (core.py), the one path to the store; it has no write logic of its own.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, cast

from .approval_rules import ApprovalRules
from .changes import Change, Policy, PolicyHook, WriteIntent
from .clock import Clock, SystemClock
from .config import Settings
from .contention import last_writer_wins
from .core import WriteCore, superseding
from .embed import Embedder, make_embedder
from .embed.query_cache import QueryCache
from .errors import ConflictError, InvalidValueError, NotFoundError, PermissionDeniedError, StaleTermsError
from .filters import record_filter
from .governance.recalls import Recall
from .limits import check_count, check_offset, check_unicode
from .llm.base import LLM
from .model import (
    Kind,
    MemoryRecord,
    Operation,
    Page,
    PurgeReport,
    Scope,
    SearchHit,
    Sensitivity,
    Signals,
    Source,
    Stats,
    Status,
    Version,
    check_scope,
    seen_at,
    utc,
)
from .parts.episodes import Consolidation, Threads, keep_turns
from .parts.governance import Approvals, Audit, Keys, Quality
from .parts.operations import DEFAULT_ACTOR, Jobs, Maintenance, Scopes, Transfer, tenant_or_all
from .pii import PIIPolicies, PIIPolicy
from .pipeline import jobs
from .pipeline.judge import Judge
from .pipeline.judging import label_records
from .pipeline.messages import normalize_messages
from .pipeline.reindex import reindex_store
from .pipeline.run import EXTRACTED_BY, AddResult, AddRun, Pipeline, PipelineSettings
from .replies import link_replies, threads_to_look_up
from .search.context import ContextBlock, build_context
from .search.profile import profile_members, rank_profile
from .search.retrieve import Retriever, retrieve
from .search.store_terms import RebuildLease, StoreTerms, store_terms
from .store import Store, open_store
from .store.base import AuditDraft, AuditQuery, RecordFilter, TimeRange
from .text.tokenize import Tokenizer
from .values.governance import GovernanceWrites
from .writes import MemoryDraft, build_record, retire, revise

log = logging.getLogger("engram")
_PAGE = 500

__all__ = ["DEFAULT_ACTOR", "Memory", "Policy", "PolicyHook", "WriteIntent"]



def open_store_for(settings: Settings, target: str | None = None) -> Store:
    """The store ``Memory.open`` opens: a SQLite file (default ``settings.db``) with the settings'
    busy timeout and vector cache, or a ``postgresql://`` URL. Tools that run several Memory
    variants over one store (evaluation) open it with this and hand it to each."""
    where = target or settings.db
    sqlite_options = {"busy_timeout_ms": settings.busy_timeout_ms, "cache_mb": settings.vector_cache_mb}
    return open_store(where, **({} if _is_postgres(where) else sqlite_options))

class Memory:
    """Long-term memory over one store. Thread-safe; open one per process.

    The everyday verbs are its methods; the rest is on named parts, each over the
    same write core: ``threads`` (past conversations, episodes), ``consolidation``,
    ``approvals``, ``audit`` (trail, provenance, answers), ``quality`` (write
    samples, report), ``keys`` (encryption, reveal), ``jobs`` (background add and
    its worker), ``maintenance``, ``transfer`` (JSONL export and import) and
    ``scopes`` (tenants, namespaces)."""

    threads: Threads
    consolidation: Consolidation
    approvals: Approvals
    audit: Audit
    quality: Quality
    keys: Keys
    jobs: Jobs
    maintenance: Maintenance
    transfer: Transfer
    scopes: Scopes

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None = None,
        settings: Settings | None = None,
        clock: Clock | None = None,
        policies: Sequence[PolicyHook] = (),
        llm: LLM | None = None,
        pipeline: Pipeline | None = None,
        judge: Judge | None = None,
        pii: PIIPolicy | PIIPolicies | None = None,
        approvals: ApprovalRules | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self._store = store
        self.embedder = embedder or make_embedder(self.settings.embedder)
        # one embedding per query text however many scopes a context() or recall() searches
        self._queries = QueryCache(self.embedder, self.settings.query_cache_size)
        self.clock = clock or SystemClock()
        self.policies = list(policies)
        terms = store_terms(store, self.settings.cjk_tokenizer)
        self._core = WriteCore(store, self.embedder, self.clock, policies=self.policies,
                              pii=_pii_policies(pii, self.settings),
                              approvals=approvals or ApprovalRules.load(self.settings.approvals),
                              limits=self.settings.limits(), tokenizer=terms.tokenizer)
        self._pipeline = pipeline
        self._judge = judge
        self._llm = llm
        self.threads = Threads(self._core, self.settings)
        self.consolidation = Consolidation(self._core, self.settings, lambda: self.pipeline, llm)
        self.approvals = Approvals(self._core)
        self.audit = Audit(self._core)
        self.quality = Quality(self._core)
        self.keys = Keys(self._core)
        self.maintenance = Maintenance(self._core, self.settings.episode_retention)
        self.jobs = Jobs(self._core, lambda: self.pipeline, self.consolidation, self.maintenance.run,
                         self.settings.maintenance_interval_s)
        self.transfer = Transfer(self._core)
        self.scopes = Scopes(self._core.reads)
        self._location: str | None = getattr(store, "path", None) or getattr(store, "url", None)
        self.terms_rebuilt = self._rebuild_terms(terms) if terms.stale else 0

    @classmethod
    def open(
        cls,
        target: str | None = None,
        *,
        embedder: Embedder | None = None,
        settings: Settings | None = None,
        clock: Clock | None = None,
        policies: Sequence[PolicyHook] = (),
        llm: LLM | None = None,
        pipeline: Pipeline | None = None,
        judge: Judge | None = None,
        pii: PIIPolicy | PIIPolicies | None = None,
        approvals: ApprovalRules | None = None,
    ) -> Memory:
        """Open a SQLite file (default ``ENGRAM_DB``) or a ``postgresql://`` URL."""
        settings = settings or Settings()
        where = target or settings.db
        store = open_store_for(settings, where)
        memory = cls(store, embedder=embedder, settings=settings, clock=clock, policies=policies, llm=llm,
                     pipeline=pipeline, judge=judge, pii=pii, approvals=approvals)
        memory._location = memory._location or where
        return memory

    @property
    def location(self) -> str:
        """Where the memories live: a SQLite path (or ":memory:") or a PostgreSQL URL."""
        return self._location or self.settings.db

    @property
    def dialect(self) -> str:
        return self._store.dialect

    def close(self) -> None:
        self.jobs.stop_worker()
        self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes ------------------------------------------------------------------------------

    def remember(
        self,
        content: str,
        scope: Scope,
        *,
        kind: Kind | str = Kind.FACT,
        importance: float = 0.5,
        confidence: float = 1.0,
        category: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        sensitivity: Sensitivity | str = Sensitivity.NORMAL,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        expires_at: datetime | None = None,
        read_only: bool = False,
        pinned: bool | None = None,
        source: Source | None = None,
        actor: str = DEFAULT_ACTOR,
        subject: str | None = None,
        slot: str | None = None,
    ) -> MemoryRecord:
        """Store one memory as given (no extraction, no reconciliation); personal data
        is screened by the tenant's PII policy like every write. ``pinned``: True puts it
        in the user's profile (what ``context`` always gives first), False keeps it out,
        None lets engram decide (``profile``). ``subject`` ("user", "team", "other:<who>")
        and ``slot`` (engram.slots.Slot) say who the memory is about and what it sets."""
        draft = MemoryDraft(
            content, kind, importance, confidence, category, tags, metadata, sensitivity, valid_from, valid_to,
            expires_at, read_only, source, pinned=pinned, subject=subject, slot=slot,
        )
        return self.remember_many([draft], scope, actor=actor)[0]

    def remember_many(
        self, drafts: Iterable[MemoryDraft | str], scope: Scope, *, actor: str = DEFAULT_ACTOR
    ) -> list[MemoryRecord]:
        """Store many memories in one transaction, embedding them in one batch."""
        now = self.clock.now()
        given = [MemoryDraft(d) if isinstance(d, str) else d for d in drafts]
        if self.settings.reply_context:
            given = link_replies(given, self._latest_turns(scope, threads_to_look_up(given), now))
        records = [build_record(d, scope, now, self._core.limits, self.embedder.name) for d in given]
        vectors: dict[int, Any] = {}
        if self._judge_in_use is not None:  # who each is about and the slot it sets, unless given
            labelled = label_records(self._judge_in_use, given, records, self.embedder)
            records, vectors = labelled.records, labelled.vectors
        return self._core.write([Change(Operation.CREATE, record, actor=actor, vector=vectors.get(i),
                                        vector_text=record.content if i in vectors else None)
                                 for i, record in enumerate(records)])

    def add(
        self,
        messages: Any,
        scope: Scope,
        *,
        thread_id: str | None = None,
        message_ids: Sequence[str] | None = None,
        background: bool = False,
        force: bool = False,
        actor: str = "pipeline",
    ) -> AddResult:
        """Turn conversation turns into memories: trigger → extract → gate → PII →
        reconcile → write (one transaction). With ``background=True`` it returns at
        once with a job id; a worker (started on demand in this process, or
        `engram worker`) does the rest. The turns are kept in their thread too
        (``threads.search``) unless ``settings.episodes`` is off, marked as extracted
        here, so consolidation never extracts them a second time."""
        check_scope(scope)
        turns = normalize_messages(messages, message_ids)
        self._core.limits.check_turns([turn.content for turn in turns])  # nothing kept, nothing sent to a model
        keep_turns(self._core, self.settings, turns, scope, thread_id, {"surface": actor},
                   turn_metadata={EXTRACTED_BY: "add"})
        if not background:
            return AddRun(self._core, self.pipeline, scope, thread_id, actor).run(turns, force=force)
        job = jobs.enqueue(self._core, turns, scope, thread_id, actor, force)
        if self.settings.auto_worker:
            self.jobs.start_worker()
        return AddResult((), True, "queued", self.pipeline.extractor.name, job_id=job.id)

    @property
    def pipeline(self) -> Pipeline:
        """The extraction pipeline, built on first use (rules unless an LLM was given)."""
        if self._pipeline is None:
            llm = self._llm
            if llm is None and self.settings.extractor == "llm":
                from .llm.openai import OpenAICompatibleLLM

                llm = OpenAICompatibleLLM.from_env(
                    timeout=self.settings.llm_timeout_s, deadline_s=self.settings.llm_deadline_s,
                    max_retry_after_s=self.settings.llm_max_retry_after_s)
            self._pipeline = Pipeline.default(llm, PipelineSettings(add_deadline_s=self.settings.add_deadline_s),
                                              rules=self.settings.rules, judge=self._judge_in_use)
        return self._pipeline

    @property
    def _judge_in_use(self) -> Judge | None:
        """The judge of subjects, slots and durable statements (``Settings.judge``; None when off)."""
        if self._judge is None and self.settings.judge == "learned":
            from .pipeline.judge.learned import default_judge

            self._judge = default_judge()
        return self._judge

    def update(
        self,
        record_id: str,
        scope: Scope,
        *,
        actor: str = DEFAULT_ACTOR,
        reason: str | None = None,
        expected_version: int | None = None,
        override_read_only: bool = False,
        **changes: Any,
    ) -> MemoryRecord:
        """Write a new version with some fields changed. ``expected_version`` makes it a
        compare-and-swap: ConflictError if someone else changed the record first.
        Without it the write never fails because of a concurrent writer: it is
        applied to the newest version (the last writer wins)."""
        if not changes:
            raise InvalidValueError("update needs at least one field to change")

        def attempt() -> MemoryRecord:
            old = self._current(record_id, scope, expected_version, override_read_only)
            new = revise(old, changes, self.clock.now(), self._core.limits)
            return self._core.write([Change(Operation.UPDATE, new, old, actor, reason)])[0]

        return last_writer_wins(attempt, budget_s=self._contention_budget_s,
                                compare_and_swap=expected_version is not None)

    def supersede(
        self,
        record_id: str,
        scope: Scope,
        content: str,
        *,
        actor: str = DEFAULT_ACTOR,
        reason: str | None = None,
        source: Source | None = None,
        **fields: Any,
    ) -> tuple[MemoryRecord, MemoryRecord]:
        """Replace a fact that is no longer true: the old record is kept, marked
        superseded with valid_to = now, and linked to its successor (which keeps the old one's
        subject and slot unless given)."""
        old = self._current(record_id, scope, None, False)
        now = self.clock.now()
        draft_fields = {"kind": old.kind, "importance": old.importance, "category": old.category, "tags": old.tags,
                        "subject": old.subject, "slot": old.slot, **fields}  # the new value of the same slot
        new = build_record(MemoryDraft(content, source=source, **draft_fields), old.scope, now,
                           self._core.limits, self.embedder.name)
        created, retired = self._core.write(superseding(old, new, actor=actor, reason=reason, at=now))
        return retired, created

    def forget(
        self, record_id: str, scope: Scope, *, reason: str | None = None, actor: str = DEFAULT_ACTOR,
        override_read_only: bool = False,
    ) -> MemoryRecord:
        """Soft delete: the record leaves search and context; its history stays. A
        concurrent writer never makes it fail: it forgets the newest version."""

        def attempt() -> MemoryRecord:
            old = self._current(record_id, scope, None, override_read_only)
            if old.status is Status.DELETED:
                return old
            new = retire(old, Status.DELETED, self.clock.now())
            return self._core.write([Change(Operation.FORGET, new, old, actor, reason)])[0]

        return last_writer_wins(attempt, budget_s=self._contention_budget_s)

    def restore(
        self,
        record_id: str,
        scope: Scope,
        *,
        actor: str = DEFAULT_ACTOR,
        reason: str | None = None,
        expected_version: int | None = None,
        override_read_only: bool = False,
        **changes: Any,
    ) -> MemoryRecord:
        """Bring a forgotten, superseded or expired record back (a new version, the
        same history), optionally with changed fields. An expiry that has passed is
        cleared unless ``expires_at`` is given."""
        old = self._current(record_id, scope, expected_version, override_read_only)
        now = self.clock.now()
        if seen_at(old, now).status is Status.ACTIVE:
            raise InvalidValueError(f"memory {record_id} is already active; use update()")
        new = revise(old, changes, now, self._core.limits)
        expires_at = new.expires_at if "expires_at" in changes or not old.expires_at or old.expires_at > now else None
        new = replace(new, status=Status.ACTIVE, valid_to=None, superseded_by=None, expires_at=expires_at)
        return self._core.write([Change(Operation.RESTORE, new, old, actor, reason)])[0]

    def purge(self, record_id: str, scope: Scope, *, reason: str | None = None,
              actor: str = DEFAULT_ACTOR) -> PurgeReport:
        """Hard delete, versions included (the right to be forgotten). The audit keeps
        that a purge happened, never the content."""
        return self._purge_many([self._stored(record_id, scope)], scope, reason=reason, actor=actor)

    def purge_scope(self, scope: Scope, *, reason: str | None = None, actor: str = DEFAULT_ACTOR) -> PurgeReport:
        """Erase a scope and everything below it (e.g. all of one user): records and their
        versions, conversations, background jobs, pending changes, write samples, recalls,
        statistics; the scope's audit rows stay without its labels or free text, and the
        purge is audited with ``reason`` (so never name the user in it). Work begun before
        (a queued or running job, a consolidation run, an approval) writes nothing there
        afterwards. ``residue`` says what, if anything, still holds purged bytes on disk."""
        check_scope(scope)
        where = RecordFilter(namespace=scope.namespace, descendants=True, statuses=())

        def attempt() -> PurgeReport:  # a record written there meanwhile: list the scope again
            records = self._store.query(scope.tenant, where, limit=10**9)
            return self._purge_many(records, scope, reason=reason, actor=actor, whole_scope=True)

        return last_writer_wins(attempt, budget_s=self._contention_budget_s)

    def _purge_many(
         self, records: Sequence[MemoryRecord], scope: Scope, *, reason: str | None, actor: str = DEFAULT_ACTOR,
         whole_scope: bool = False,
    ) -> PurgeReport:
        """``whole_scope``: everything else of the scope goes too (store/erase_sql.py)."""
        for record in records:
            if not scope.contains(record.scope):
                raise NotFoundError(f"no memory {record.id!r} in scope {scope}")
        extra, audit = None, []
        if whole_scope:
            extra = GovernanceWrites(purged_scopes=(scope.namespace,))
            audit = [AuditDraft(actor=actor, operation=Operation.PURGE, at=self.clock.now(),
                                detail={"scope_erased": True, "records": len(records),
                                        **({"reason": reason} if reason else {})})]
        self._core.write([Change(Operation.PURGE, None, record, actor, reason) for record in records],
                        tenant=scope.tenant, governance=extra, audit=audit)
        return PurgeReport(len(records), self._store.erase_traces())

    # -- reads -------------------------------------------------------------------------------

    def get(self, record_id: str, scope: Scope) -> MemoryRecord:
        """The record as reads show it now: an active record whose validity ended is
        shown expired (see ``list``)."""
        return seen_at(self._stored(record_id, scope), self.clock.now())

    def history(self, record_id: str, scope: Scope) -> list[Version]:
        self._stored(record_id, scope)
        return self._store.versions(scope.tenant, record_id)

    def search(
        self,
        query: str,
        scope: Scope,
        *,
        k: int = 10,
        min_score: float = 0.0,
        include_descendants: bool = False,
        kinds: Sequence[Kind | str] | Kind | str | None = None,
        category: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        statuses: Sequence[Status | str] | Status | str | None = (Status.ACTIVE,),
        retriever: str | None = None,
        as_of: datetime | None = None,
        diversify: bool = True,
    ) -> list[SearchHit]:
        """Hybrid search inside a scope; each hit carries its score and why. ``as_of``:
        what was valid at that moment (superseded and expired versions then current
        included, forgotten ones not). Hits whose content repeats a better hit word for
        word are dropped unless ``diversify=False`` (for callers whose records are keyed
        by something else than their text)."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidValueError("query must be a non-empty string")
        check_unicode(query, "query")
        check_count(k, "k")
        now = self.clock.now() if as_of is None else _as_of(as_of)
        if as_of is not None and statuses == (Status.ACTIVE,):
            statuses = (Status.ACTIVE, Status.SUPERSEDED, Status.EXPIRED)
        where = _valid_now(record_filter(
            scope, include_descendants=include_descendants, kinds=kinds, statuses=statuses, category=category,
            tags=tags, metadata=metadata, created_after=created_after, created_before=created_before,
        ), now)
        if as_of is not None:
            where = replace(where, valid_at=now)
        settings = self.settings.retrieval()
        if retriever is not None:
            settings = replace(settings, retriever=cast(Retriever, retriever))  # RetrievalSettings checks it
        if not diversify:
            settings = replace(settings, diversify=False)
        hits = retrieve(self._store, self._queries, scope.tenant, where, query, k=k, settings=settings, now=now,
                        tokenizer=self._core.tokenizer)
        return [_seen(hit, now) for hit in hits if hit.score >= min_score][:k]

    def context(
        self,
        query: str,
        scope: Scope | Sequence[Scope],
        *,
        budget_tokens: int = 800,
        k: int = 20,
        min_score: float = 0.0,
        answer_id: str | None = None,
        thread_id: str | None = None,
        actor: str = DEFAULT_ACTOR,
        language: str = "auto",
        as_of: datetime | None = None,
    ) -> ContextBlock:
        """The block to inject into a prompt, from one scope or several (e.g. user +
        org): the user's profile first (``profile``: who they are, constraints,
        standing rules and preferences — whatever the query's words), within
        ``Settings.profile_share`` of the budget, then what the query recalls. Recalled
        hits below the relevance floor (``Settings.relevance_floor``: neither sharing
        words with the query nor close in meaning) are left out and counted in
        ``below_floor``; the floor never drops a profile memory. Which memories served
        it is written to the audit, and the block's ``recall_id`` links the answer
        later (``audit.link_answer``). ``as_of``: the memories valid at that moment (see ``search``)."""
        check_count(budget_tokens, "budget_tokens")
        scopes = [scope] if isinstance(scope, Scope) else list(scope)
        started = time.perf_counter()
        hits = [hit for s in scopes for hit in self.search(query, s, k=k, min_score=min_score, as_of=as_of)]
        hits.sort(key=lambda hit: (-hit.score, hit.record.id))
        profile = self._profile_hits(scopes, hits, as_of)
        floor = self.settings.floor(self.embedder.name)
        above, below = floor.split(hits) if floor is not None else (hits, [])
        block = build_context(above, query, budget_tokens, language, profile=profile,
                              profile_share=self.settings.profile_share)
        block = replace(block, below_floor=sum(hit.record.id not in block.profile for hit in below))
        if self._records_recalls:
            detail = {key: value for key, value in (("answer_id", answer_id), ("thread_id", thread_id)) if value}
            latency_ms = (time.perf_counter() - started) * 1000
            recall_id = self._core.record_recall(block.hits, actor, detail, tenants=list(dict.fromkeys(
                s.tenant for s in scopes)), latency_ms=latency_ms)
            block = replace(block, recall_id=recall_id)
        return block

    def profile(self, scope: Scope | Sequence[Scope], *, as_of: datetime | None = None) -> list[MemoryRecord]:
        """The user's profile, best first: what ``context`` gives whatever the query —
        pinned memories, then constraints (health, diet, budgets), identity (name, home,
        work, family), standing rules and preferences, other durable facts
        (search/profile.py). Pin a memory in or out with ``update(id, scope, pinned=…)``."""
        scopes = [scope] if isinstance(scope, Scope) else list(scope)
        return [hit.record for hit in self._profile_hits(scopes, [], as_of)]

    def _profile_hits(self, scopes: Sequence[Scope], hits: Sequence[SearchHit], as_of: datetime | None,
                      ) -> list[SearchHit]:
        """The profile of the scopes as hits ranked for this query (a recalled hit keeps its signals)."""
        if self.settings.profile_share <= 0:
            return []
        for s in scopes:
            check_scope(s)
        moment = self.clock.now() if as_of is None else _as_of(as_of)
        recalled = {hit.record.id: hit for hit in hits}
        members = [r for s in scopes for r in profile_members(self._store, s, moment, scan=self.settings.profile_scan,
                                                              as_of=as_of is not None)]
        ranked = rank_profile(members, {i: hit.score for i, hit in recalled.items()})
        return [recalled.get(e.record.id) or SearchHit(seen_at(e.record, moment), 0.0, Signals()) for e in ranked]

    def recall(
        self,
        query: str,
        scope: Scope | Sequence[Scope],
        *,
        k: int = 10,
        min_score: float = 0.0,
        kinds: Sequence[Kind | str] | Kind | str | None = None,
        answer_id: str | None = None,
        thread_id: str | None = None,
        actor: str = DEFAULT_ACTOR,
    ) -> Recall:
        """``search`` for an answer: the hits (best first, from one scope or several) and
        a recall id to link the answer with (``audit.link_answer``), recorded like ``context``."""
        scopes = [scope] if isinstance(scope, Scope) else list(scope)
        started = time.perf_counter()
        hits = sorted((hit for s in scopes for hit in self.search(query, s, k=k, min_score=min_score, kinds=kinds)),
                      key=lambda hit: (-hit.score, hit.record.id))[:k]
        if not self._records_recalls:
            return Recall(None, tuple(hits))
        detail = {key: value for key, value in (("answer_id", answer_id), ("thread_id", thread_id)) if value}
        recall_id = self._core.record_recall(hits, actor, detail, tenants=list(dict.fromkeys(s.tenant for s in scopes)),
                                            latency_ms=(time.perf_counter() - started) * 1000)
        return Recall(recall_id, tuple(hits))

    def list(
        self,
        scope: Scope,
        *,
        offset: int = 0,
        limit: int = 50,
        include_descendants: bool = False,
        kinds: Sequence[Kind | str] | Kind | str | None = None,
        statuses: Sequence[Status | str] | Status | str | None = (Status.ACTIVE,),
        category: str | None = None,
        tags: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        created_after: datetime | None = None,
        created_before: datetime | None = None,
    ) -> Page:
        """Records of a scope, oldest first. By default only what search would find:
        active and valid now. Ask for other ``statuses`` (or ``None``: any) to see
        history; an active record whose validity ended is shown, and filtered, as
        expired (a page may then hold fewer than ``limit`` items)."""
        check_offset(offset)
        check_count(limit, "limit")
        now = self.clock.now()
        where = _valid_now(record_filter(scope, include_descendants=include_descendants, kinds=kinds,
                                         statuses=statuses, category=category, tags=tags, metadata=metadata,
                                         created_after=created_after, created_before=created_before), now)
        wanted = where.statuses
        if Status.EXPIRED in wanted and Status.ACTIVE not in wanted:  # active records past their validity too
            where = replace(where, statuses=(*wanted, Status.ACTIVE))
        items = self._store.query(scope.tenant, where, limit=limit + 1, offset=offset)
        shown = [seen_at(r, now) for r in items[:limit]]
        if where.statuses != wanted:
            shown = [r for r in shown if r.status in wanted]
        return Page(tuple(shown), offset + limit if len(items) > limit else None)

    def scan(self, scope: Scope, **filters: Any) -> Iterator[MemoryRecord]:
        """Every record ``list`` would return with these filters, page by page."""
        offset: int | None = 0
        while offset is not None:
            page = self.list(scope, offset=offset, limit=_PAGE, **filters)
            yield from page.items
            offset = page.next_offset

    def stats(self, tenant: str | None = None) -> Stats:
        """Store counts plus background jobs by status, LLM tokens spent by add(), the
        PII policy in force and the conversations kept (threads, turns)."""
        tenant = tenant_or_all(tenant)
        base = self._store.stats(tenant)
        tenants = [tenant] if tenant else self._store.tenants()
        tokens = {"prompt_tokens": 0, "completion_tokens": 0}
        for name in tenants:
            for event in self._store.audit(name, AuditQuery(operation=Operation.EXTRACT, limit=10**9)):
                for key in tokens:
                    tokens[key] += int(event.detail.get(key) or 0)
        job_counts: dict[str, int] = {}
        for job in self._store.jobs(tenant, (), limit=10**9):
            job_counts[job.status.value] = job_counts.get(job.status.value, 0) + 1
        pii = self._core.pii.for_tenant(tenant).describe() if tenant else self._core.pii.describe()
        return replace(base, extra={**base.extra, "llm_tokens": tokens, "jobs": job_counts, "pii_policy": pii,
                                    "episodes": self._store.episode_counts(tenant)})

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer of this store's lexical terms (search/store_terms.py)."""
        return self._core.tokenizer

    def _rebuild_terms(self, terms: StoreTerms) -> int:
        """The store's terms came from another tokenizer: rebuild them through the
        reindex path (one audited ``reindex`` version per record), or say what to run.
        Returns how many records were re-indexed (``Memory.terms_rebuilt``)."""
        if not self.settings.rebuild_terms:
            raise StaleTermsError(
                f"the lexical terms of {self.location} were made by tokenizer {terms.stored!r}; this process uses "
                f"{terms.tokenizer.name!r}. Rebuild them with `engram reindex` "
                f"(ENGRAM_CJK_TOKENIZER={terms.tokenizer.mode}), or open with Settings(rebuild_terms=True); "
                f"to keep the store's terms, open with cjk_tokenizer unset"
            )
        lease = RebuildLease(self._store)
        if not lease.take():  # another process is rebuilding them: once is enough
            log.warning("the lexical terms of %s are being rebuilt by another process", self.location)
            return 0
        try:
            if not store_terms(self._store, terms.tokenizer.mode).stale:
                return 0  # rebuilt by another process between our look and our lease
            log.warning("rebuilding the lexical terms of %s: %s -> %s", self.location, terms.stored,
                        terms.tokenizer.name)
            return reindex_store(self._core, terms_from=terms.stored, progress=lambda done, total: lease.renew())
        finally:
            lease.release()

    # -- helpers -----------------------------------------------------------------------------

    @property
    def _records_recalls(self) -> bool:
        """context() and recall() log which memories served (Settings.record_recalls),
        except on a store open read-only (a read-only mount): they still answer."""
        return self.settings.record_recalls and not getattr(self._store, "read_only", False)

    @property
    def _contention_budget_s(self) -> float:
        """How long a plain write outlasts concurrent writers (as long as a lock wait)."""
        return max(self.settings.busy_timeout_ms / 1000.0, 1.0)

    def _stored(self, record_id: str, scope: Scope) -> MemoryRecord:
        """The record as stored (no read-time view), or NotFoundError outside the scope."""
        check_scope(scope)
        found = self._store.get(scope.tenant, [record_id])
        if not found or not scope.contains(found[0].scope):
            raise NotFoundError(f"no memory {record_id!r} in scope {scope}")
        return found[0]

    def _current(
        self, record_id: str, scope: Scope, expected_version: int | None, override_read_only: bool
    ) -> MemoryRecord:
        record = self._stored(record_id, scope)
        if expected_version is not None and record.version != expected_version:
            raise ConflictError(
                f"memory {record_id} is at version {record.version}, expected {expected_version}"
            )
        if record.read_only and not override_read_only:
            raise PermissionDeniedError(f"memory {record_id} is read-only")
        return record

    def _latest_turns(
        self, scope: Scope, threads: Mapping[str, datetime | None], now: datetime
    ) -> dict[str, MemoryRecord]:
        """For each thread, the last memory said in it up to the given moment (in
        this scope, whatever its status: a forgotten question was still asked)."""
        latest = {}
        for thread, said in threads.items():
            before = (utc(said) if said is not None else now) + timedelta(microseconds=1)
            where = RecordFilter(namespace=scope.namespace, statuses=(), thread_id=thread,
                                 time_ranges=(TimeRange("valid_from", None, before),))
            found = self._store.query(scope.tenant, where, order="valid_from", descending=True, limit=1)
            if found:
                latest[thread] = found[0]
        return latest


def _pii_policies(pii: PIIPolicy | PIIPolicies | None, settings: Settings) -> PIIPolicies:
    if isinstance(pii, PIIPolicies):
        return pii
    if isinstance(pii, PIIPolicy):
        return PIIPolicies(default=pii)
    return PIIPolicies.load(settings.pii_policy)


def _seen(hit: SearchHit, now: datetime) -> SearchHit:
    """The hit with its record as reads show it at ``now`` (a copy only when that differs)."""
    record = seen_at(hit.record, now)
    return hit if record is hit.record else replace(hit, record=record)


def _valid_now(where: RecordFilter, now: datetime) -> RecordFilter:
    """The one validity rule of reads: asking for active records means active and valid now."""
    return replace(where, valid_at=now) if where.statuses == (Status.ACTIVE,) else where


def _as_of(moment: Any) -> datetime:
    if not isinstance(moment, datetime):
        raise InvalidValueError(f"as_of must be a timezone-aware datetime, got {moment!r}")
    return utc(moment)


def _is_postgres(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))
