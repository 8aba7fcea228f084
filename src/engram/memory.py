"""Memory: the facade that the CLI, HTTP, MCP and integrations all call."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any

from . import jsonl, maintenance
from .clock import Clock, SystemClock
from .config import Settings
from .embed import Embedder, make_embedder
from .embed.reindex import reindex_store
from .errors import ConflictError, InvalidValueError, NotFoundError, PermissionDeniedError
from .filters import record_filter
from .llm.base import LLM
from .maintenance import MaintenanceReport
from .model import (
    AuditEvent,
    Job,
    JobStatus,
    Kind,
    MemoryRecord,
    Message,
    Operation,
    Page,
    Scope,
    SearchHit,
    Sensitivity,
    Source,
    Stats,
    Status,
    Version,
    parse_enum,
    utc,
)
from .pipeline import jobs
from .pipeline.messages import normalize_messages
from .pipeline.run import AddResult, AddRun, Pipeline
from .replies import link_replies, threads_to_look_up
from .search import tokenize
from .search.context import ContextBlock, build_context
from .search.retrieve import retrieve
from .store import Store, open_store
from .store.base import AuditDraft, AuditQuery, RecordFilter, TimeRange, Touch, WriteBatch
from .writes import MemoryDraft, batch_of, build_record, change, retire, revise

DEFAULT_ACTOR = "app"


@dataclass(frozen=True, slots=True)
class WriteIntent:
    """What a policy hook sees before a write; raise PermissionDeniedError to refuse."""

    operation: Operation
    actor: str
    scope: Scope
    record: MemoryRecord | None  # the state after the write (None for purge)
    previous: MemoryRecord | None


Policy = Callable[[WriteIntent], None]


class Memory:
    """Long-term memory over one store. Thread-safe; open one per process."""

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None = None,
        settings: Settings | None = None,
        clock: Clock | None = None,
        policies: Sequence[Policy] = (),
        llm: LLM | None = None,
        pipeline: Pipeline | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.store = store
        self.embedder = embedder or make_embedder(self.settings.embedder)
        self.clock = clock or SystemClock()
        self.policies = list(policies)
        self._pipeline = pipeline
        self._llm = llm
        self._worker: jobs.Worker | None = None
        self._worker_lock = threading.Lock()
        tokenize.set_cjk_mode(self.settings.cjk_tokenizer)

    @classmethod
    def open(
        cls,
        target: str | None = None,
        *,
        embedder: Embedder | None = None,
        settings: Settings | None = None,
        clock: Clock | None = None,
        policies: Sequence[Policy] = (),
        llm: LLM | None = None,
        pipeline: Pipeline | None = None,
    ) -> Memory:
        """Open a SQLite file (default ``ENGRAM_DB``) or a ``postgresql://`` URL."""
        settings = settings or Settings()
        sqlite_options = {"busy_timeout_ms": settings.busy_timeout_ms, "cache_mb": settings.vector_cache_mb}
        options = {} if _is_postgres(target or settings.db) else sqlite_options
        store = open_store(target or settings.db, **options)
        return cls(store, embedder=embedder, settings=settings, clock=clock, policies=policies, llm=llm,
                   pipeline=pipeline)

    def close(self) -> None:
        self.stop_worker()
        self.store.close()

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
        source: Source | None = None,
        actor: str = DEFAULT_ACTOR,
    ) -> MemoryRecord:
        """Store one memory as given (no extraction, no reconciliation)."""
        draft = MemoryDraft(
            content, kind, importance, confidence, category, tags, metadata, sensitivity, valid_from, valid_to,
            expires_at, read_only, source,
        )
        return self.remember_many([draft], scope, actor=actor)[0]

    def remember_many(
        self, drafts: Iterable[MemoryDraft | str], scope: Scope, *, actor: str = DEFAULT_ACTOR
    ) -> list[MemoryRecord]:
        """Store many memories in one transaction, embedding them in one batch."""
        now = self.clock.now()
        drafts = [MemoryDraft(d) if isinstance(d, str) else d for d in drafts]
        if self.settings.reply_context:
            drafts = link_replies(drafts, self._latest_turns(scope, threads_to_look_up(drafts), now))
        records = [build_record(d, scope, now, self.settings.max_content_chars, self.embedder.name) for d in drafts]
        for record in records:
            self._check_policies(Operation.CREATE, actor, record, None)
        vectors = self.embedder.embed([r.indexed_text for r in records]) if records else []
        changes = [
            change(r, operation=Operation.CREATE, actor=actor, at=now, reason=None, embedding=v, expected_version=None)
            for r, v in zip(records, vectors)
        ]
        if changes:
            self.store.apply(batch_of(scope.tenant, changes))
        return records

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
        `engram worker`) does the rest."""
        if not isinstance(scope, Scope):
            raise InvalidValueError(f"scope must be an engram.Scope, got {type(scope).__name__}")
        turns = normalize_messages(messages, message_ids)
        if not background:
            return self.run_add(turns, scope, thread_id=thread_id, actor=actor, force=force)
        job = jobs.enqueue(self, turns, scope, thread_id, actor, force)
        if self.settings.auto_worker:
            self.start_worker()
        return AddResult((), True, "queued", self.pipeline.extractor.name, job_id=job.id)

    def run_add(
        self, messages: Sequence[Message], scope: Scope, *, thread_id: str | None, actor: str, force: bool = False
    ) -> AddResult:
        return AddRun(self, self.pipeline, scope, thread_id, actor).run(messages, force=force)

    @property
    def pipeline(self) -> Pipeline:
        """The extraction pipeline, built on first use (rules unless an LLM was given)."""
        if self._pipeline is None:
            llm = self._llm
            if llm is None and self.settings.extractor == "llm":
                from .llm.openai import OpenAICompatibleLLM

                llm = OpenAICompatibleLLM.from_env()
            self._pipeline = Pipeline.default(llm)
        return self._pipeline

    def start_worker(self) -> None:
        """Drain background jobs in a daemon thread of this process (idempotent)."""
        with self._worker_lock:
            if self._worker is None:
                self._worker = jobs.Worker(self).start()

    def stop_worker(self) -> None:
        with self._worker_lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()

    def jobs(self, tenant: str | None = None, statuses: Sequence[JobStatus | str] = (), limit: int = 100) -> list[Job]:
        return self.store.jobs(tenant, [JobStatus(s) for s in statuses], limit)

    def drain_jobs(self, max_jobs: int | None = None) -> int:
        """Run due background jobs in this thread until none is due."""
        return jobs.drain(self, max_jobs)

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
        compare-and-swap: ConflictError if someone else changed the record first."""
        if not changes:
            raise InvalidValueError("update needs at least one field to change")
        old = self._current(record_id, scope, expected_version, override_read_only)
        new = revise(old, changes, self.clock.now(), self.settings.max_content_chars)
        self._check_policies(Operation.UPDATE, actor, new, old)
        embedding = self._embedding_for(new, old)
        write = change(new, operation=Operation.UPDATE, actor=actor, at=new.updated_at, reason=reason,
                       embedding=embedding, expected_version=old.version)
        self.store.apply(batch_of(scope.tenant, [write]))
        return new

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
        superseded with valid_to = now, and linked to its successor."""
        old = self._current(record_id, scope, None, False)
        now = self.clock.now()
        draft_fields = {"kind": old.kind, "importance": old.importance, "category": old.category, "tags": old.tags,
                        **fields}
        new = build_record(MemoryDraft(content, source=source, **draft_fields), old.scope, now,
                           self.settings.max_content_chars, self.embedder.name)
        new = replace(new, supersedes=old.id)
        retired = retire(old, Status.SUPERSEDED, now, valid_to=now, superseded_by=new.id)
        self._check_policies(Operation.SUPERSEDE, actor, retired, old)
        self._check_policies(Operation.CREATE, actor, new, None)
        vector = self.embedder.embed([new.indexed_text])[0]
        writes = [
            change(retired, operation=Operation.SUPERSEDE, actor=actor, at=now, reason=reason,
                   embedding=self._embedding_for(retired, old), expected_version=old.version,
                   detail={"superseded_by": new.id}),
            change(new, operation=Operation.CREATE, actor=actor, at=now, reason=reason, embedding=vector,
                   expected_version=None, detail={"supersedes": old.id}),
        ]
        self.store.apply(batch_of(scope.tenant, writes))
        return retired, new

    def forget(
        self, record_id: str, scope: Scope, *, reason: str | None = None, actor: str = DEFAULT_ACTOR,
        override_read_only: bool = False,
    ) -> MemoryRecord:
        """Soft delete: the record leaves search and context; its history stays."""
        old = self._current(record_id, scope, None, override_read_only)
        if old.status is Status.DELETED:
            return old
        new = retire(old, Status.DELETED, self.clock.now())
        self._check_policies(Operation.FORGET, actor, new, old)
        write = change(new, operation=Operation.FORGET, actor=actor, at=new.updated_at, reason=reason,
                       embedding=self._embedding_for(new, old), expected_version=old.version)
        self.store.apply(batch_of(scope.tenant, [write]))
        return new

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
        same history), optionally with changed fields."""
        old = self._current(record_id, scope, expected_version, override_read_only)
        if old.status is Status.ACTIVE:
            raise InvalidValueError(f"memory {record_id} is already active; use update()")
        now = self.clock.now()
        new = revise(old, changes, now, self.settings.max_content_chars)
        new = replace(new, status=Status.ACTIVE, valid_to=None, superseded_by=None)
        self._check_policies(Operation.RESTORE, actor, new, old)
        write = change(new, operation=Operation.RESTORE, actor=actor, at=now, reason=reason,
                       embedding=self._embedding_for(new, old), expected_version=old.version)
        self.store.apply(batch_of(scope.tenant, [write]))
        return new

    def purge(self, record_id: str, scope: Scope, *, reason: str | None = None, actor: str = DEFAULT_ACTOR) -> None:
        """Hard delete, versions included (the right to be forgotten). The audit keeps
        that a purge happened, never the content."""
        self.purge_many([self.get(record_id, scope)], scope, reason=reason, actor=actor)

    def purge_scope(self, scope: Scope, *, reason: str | None = None, actor: str = DEFAULT_ACTOR) -> int:
        """Purge every record in a scope and below it (e.g. all of one user)."""
        where = RecordFilter(namespace=scope.namespace, descendants=True, statuses=())
        records = self.store.query(scope.tenant, where, limit=10**9)
        return self.purge_many(records, scope, reason=reason, actor=actor)

    def purge_many(
        self, records: Sequence[MemoryRecord], scope: Scope, *, reason: str | None, actor: str
    ) -> int:
        now = self.clock.now()
        for record in records:
            self._check_policies(Operation.PURGE, actor, None, record)
        audit = tuple(
            AuditDraft(actor=actor, operation=Operation.PURGE, at=now, record_id=r.id, version=r.version,
                       namespace=r.scope.namespace, detail={"reason": reason} if reason else {})
            for r in records
        )
        if records:
            self.store.apply(WriteBatch(scope.tenant, purge_ids=tuple(r.id for r in records), audit=audit))
        return len(records)

    # -- reads -------------------------------------------------------------------------------

    def get(self, record_id: str, scope: Scope) -> MemoryRecord:
        if not isinstance(scope, Scope):
            raise InvalidValueError(f"scope must be an engram.Scope, got {type(scope).__name__}")
        found = self.store.get(scope.tenant, [record_id])
        if not found or not scope.contains(found[0].scope):
            raise NotFoundError(f"no memory {record_id!r} in scope {scope}")
        return found[0]

    def history(self, record_id: str, scope: Scope) -> list[Version]:
        self.get(record_id, scope)
        return self.store.versions(scope.tenant, record_id)

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
    ) -> list[SearchHit]:
        """Hybrid search inside a scope; each hit carries its score and why."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidValueError("query must be a non-empty string")
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise InvalidValueError(f"k must be a positive integer, got {k!r}")
        now = self.clock.now()
        only_active = tuple(statuses or ()) == (Status.ACTIVE,)
        where = record_filter(
            scope, include_descendants=include_descendants, kinds=kinds, statuses=statuses, category=category,
            tags=tags, metadata=metadata, created_after=created_after, created_before=created_before,
            valid_at=now if only_active else None,
        )
        settings = self.settings.retrieval()
        if retriever is not None:
            settings = replace(settings, retriever=retriever)
        hits = retrieve(self.store, self.embedder, scope.tenant, where, query, k=k, settings=settings, now=now)
        return [hit for hit in hits if hit.score >= min_score][:k]

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
    ) -> ContextBlock:
        """The block to inject into a prompt, from one scope or several (e.g. user +
        org). Which memories served it is written to the audit."""
        if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens <= 0:
            raise InvalidValueError(f"budget_tokens must be a positive integer, got {budget_tokens!r}")
        scopes = [scope] if isinstance(scope, Scope) else list(scope)
        hits = [hit for s in scopes for hit in self.search(query, s, k=k, min_score=min_score)]
        hits.sort(key=lambda hit: (-hit.score, hit.record.id))
        block = build_context(hits, query, budget_tokens, language)
        if self.settings.record_recalls and block.hits:
            self._record_recall(block.hits, actor, answer_id, thread_id)
        return block

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
        if offset < 0 or limit <= 0:
            raise InvalidValueError("offset must be >= 0 and limit > 0")
        where = record_filter(scope, include_descendants=include_descendants, kinds=kinds, statuses=statuses,
                              category=category, tags=tags, metadata=metadata, created_after=created_after,
                              created_before=created_before)
        items = self.store.query(scope.tenant, where, limit=limit + 1, offset=offset)
        more = len(items) > limit
        return Page(tuple(items[:limit]), offset + limit if more else None)

    def audit(
        self, scope: Scope, *, record_id: str | None = None, operation: Operation | str | None = None,
        since: datetime | None = None, limit: int = 100,
    ) -> list[AuditEvent]:
        op = parse_enum(Operation, operation, "operation") if operation is not None else None
        events = self.store.audit(scope.tenant, AuditQuery(record_id, op, since, limit))
        return [e for e in events if e.namespace[: len(scope.namespace)] == scope.namespace]

    def stats(self, tenant: str | None = None) -> Stats:
        """Store counts plus background jobs by status and LLM tokens spent by add()."""
        base = self.store.stats(tenant)
        tenants = [tenant] if tenant else self.store.tenants()
        tokens = {"prompt_tokens": 0, "completion_tokens": 0}
        for name in tenants:
            for event in self.store.audit(name, AuditQuery(operation=Operation.EXTRACT, limit=10**9)):
                for key in tokens:
                    tokens[key] += int(event.detail.get(key) or 0)
        job_counts: dict[str, int] = {}
        for job in self.store.jobs(tenant, (), limit=10**9):
            job_counts[job.status.value] = job_counts.get(job.status.value, 0) + 1
        return replace(base, extra={**base.extra, "llm_tokens": tokens, "jobs": job_counts})

    def namespaces(self, scope: Scope) -> list[tuple[str, ...]]:
        return self.store.namespaces(scope.tenant, scope.namespace)

    # -- export, import, reindex -------------------------------------------------------------

    def export_jsonl(self, dest: str | Path | IO[str], scope: Scope) -> int:
        """Write every record in the scope (and below), with its versions, as JSONL."""
        return jsonl.export_to(self.store, scope, dest, self.clock.now())

    def import_jsonl(
        self, source: str | Path | IO[str], *, on_conflict: jsonl.OnConflict = "error", actor: str = DEFAULT_ACTOR
    ) -> jsonl.ImportResult:
        """Validate the whole file, then write it in one transaction (all-or-nothing)."""
        return jsonl.import_from(self.store, self.embedder, source, on_conflict=on_conflict, actor=actor,
                                 at=self.clock.now())

    def maintain(self) -> MaintenanceReport:
        """Expire what has passed its time and fold near-identical duplicates (every
        tenant). Workers run it every ``maintenance_interval_s``."""
        return maintenance.maintain(self, self.clock.now())

    def reindex(self, *, batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> int:
        """Re-embed every record whose vector came from another model. Reads keep
        working meanwhile; a record changed concurrently is retried on the next pass."""
        return reindex_store(self.store, self.embedder, batch_size=batch_size, progress=progress)

    # -- helpers -----------------------------------------------------------------------------

    def _current(
        self, record_id: str, scope: Scope, expected_version: int | None, override_read_only: bool
    ) -> MemoryRecord:
        record = self.get(record_id, scope)
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
            found = self.store.query(scope.tenant, where, order="valid_from", descending=True, limit=1)
            if found:
                latest[thread] = found[0]
        return latest

    def _embedding_for(self, new: MemoryRecord, old: MemoryRecord):
        """Re-embed only when the indexed text changed; otherwise keep the stored vector."""
        if new.indexed_text != old.indexed_text or old.embedding_model != self.embedder.name:
            return self.embedder.embed([new.indexed_text])[0]
        stored = self.store.vectors(new.scope.tenant, [old.id], self.embedder.name)
        return stored.get(old.id)

    def _check_policies(
        self, operation: Operation, actor: str, record: MemoryRecord | None, previous: MemoryRecord | None
    ) -> None:
        scope = (record or previous).scope
        intent = WriteIntent(operation, actor, scope, record, previous)
        for policy in self.policies:
            policy(intent)

    def _record_recall(
        self, hits: Sequence[SearchHit], actor: str, answer_id: str | None, thread_id: str | None
    ) -> None:
        now = self.clock.now()
        by_tenant: dict[str, list[SearchHit]] = {}
        for hit in hits:
            by_tenant.setdefault(hit.record.scope.tenant, []).append(hit)
        for tenant, group in by_tenant.items():
            detail = {key: value for key, value in (("answer_id", answer_id), ("thread_id", thread_id)) if value}
            audit = tuple(
                AuditDraft(actor=actor, operation=Operation.RECALL, at=now, record_id=h.record.id,
                           version=h.record.version, namespace=h.record.scope.namespace,
                           detail={**detail, "score": round(h.score, 4)})
                for h in group
            )
            touches = tuple(Touch(h.record.id, now) for h in group)
            self.store.apply(WriteBatch(tenant, audit=audit, touches=touches))


def _is_postgres(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))
