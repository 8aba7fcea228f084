"""The narrow storage protocol every backend implements, and what flows through it.

A backend stores records (current state + vector + lexical terms), immutable
versions and audit events, and answers a handful of queries. Everything else
(the Memory facade, fusion, context building, export) is written once above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, get_args

import numpy as np

from ..model import AuditEvent, Job, JobStatus, Kind, MemoryRecord, Operation, Stats, Status, Version
from ..values.episodes import EpisodeWrites, Thread, ThreadQuery, Turn, TurnQuery
from ..values.governance import (
    GovernanceWrites,
    PendingChange,
    PendingQuery,
    RecallEvent,
    RecallQuery,
    SampleQuery,
    WriteSample,
)

MetadataOp = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains", "exists"]
TimeField = Literal["created_at", "updated_at", "valid_from", "valid_to", "expires_at", "last_accessed_at"]


@dataclass(frozen=True, slots=True)
class MetadataCondition:
    """One test on the metadata value at ``key`` (a dotted path): compare (eq … lte),
    one of / none of a list (in, nin), hold a substring (contains, icontains: case
    folded), or be there at all (exists: True or False)."""

    key: str
    op: MetadataOp
    value: Any


@dataclass(frozen=True, slots=True)
class MetadataGroup:
    """Alternatives, each a conjunction of terms: the group holds when any alternative
    holds (``negate``: when none does)."""

    alternatives: tuple[tuple[MetadataTerm, ...], ...]
    negate: bool = False


MetadataTerm = MetadataCondition | MetadataGroup


@dataclass(frozen=True, slots=True)
class TimeRange:
    field: TimeField = "created_at"
    after: datetime | None = None  # inclusive
    before: datetime | None = None  # exclusive


@dataclass(frozen=True, slots=True)
class RecordFilter:
    """Which records of one tenant a read may see. ``namespace`` is matched
    segment by segment; ``descendants`` widens it to the whole subtree."""

    namespace: tuple[str, ...] = ()
    descendants: bool = False
    statuses: tuple[Status, ...] = (Status.ACTIVE,)  # () means any status
    kinds: tuple[Kind, ...] = ()
    category: str | None = None
    tags: tuple[str, ...] = ()  # every tag must be present
    metadata: tuple[MetadataTerm, ...] = ()  # every term must hold
    time_ranges: tuple[TimeRange, ...] = ()
    valid_at: datetime | None = None  # drop records expired or no longer valid then
    ids: tuple[str, ...] | None = None
    thread_id: str | None = None  # only records said in this thread (source.thread_id)
    pinned: bool | None = None  # only records pinned into (True) or out of (False) the profile

    @property
    def needs_sql(self) -> bool:
        """True when more than namespace/status/kind must be checked."""
        return bool(
            self.category or self.tags or self.metadata or self.time_ranges or self.valid_at or self.ids is not None
            or self.thread_id is not None or self.pinned is not None
        )


@dataclass(frozen=True, slots=True)
class RecordWrite:
    """The new current state of a record. ``expected_version`` None means the
    record must not exist yet; otherwise the stored version must equal it."""

    record: MemoryRecord
    terms: str  # space-joined lexical terms (text.tokenize.index_text)
    embedding: np.ndarray | None
    expected_version: int | None


@dataclass(frozen=True, slots=True)
class AuditDraft:
    actor: str
    operation: Operation
    at: datetime
    record_id: str | None = None
    version: int | None = None
    namespace: tuple[str, ...] = ()
    source_message_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Touch:
    """A read that counts: bumps access_count and last_accessed_at, no new version."""

    record_id: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Holding:
    """What background work must still hold when it commits (checked inside the write
    transaction): the job it runs for, still claimed, or the consolidation lease of
    its scope, still its own. A whole-scope purge deletes both first, so work begun
    before a purge can never write into the purged scope (WorkCancelledError)."""

    job_id: str | None = None
    lease: tuple[tuple[str, ...], str] | None = None  # (namespace, holder)


@dataclass(frozen=True, slots=True)
class WriteBatch:
    """Everything one logical change writes, applied in ONE transaction, in this
    order: purges, records (with compare-and-swap), versions, touches, audit, jobs,
    governance rows (a purge also drops the record's pending changes and samples)."""

    tenant: str
    records: tuple[RecordWrite, ...] = ()
    versions: tuple[Version, ...] = ()
    audit: tuple[AuditDraft, ...] = ()
    purge_ids: tuple[str, ...] = ()  # hard delete: record, versions, vector, terms
    touches: tuple[Touch, ...] = ()
    jobs: tuple[Job, ...] = ()  # background jobs to enqueue
    governance: GovernanceWrites = field(default_factory=GovernanceWrites)  # pending changes, recalls, samples
    episodes: EpisodeWrites = field(default_factory=EpisodeWrites)  # turns, threads, watermarks (engram.episodes)
    holding: Holding | None = None  # background work: refused unless its job or lease is still there


@dataclass(frozen=True, slots=True)
class ScoredId:
    id: str
    score: float


@dataclass(frozen=True, slots=True)
class RankFields:
    """What ranking reads of candidate records, as columns aligned with ``ids``: the
    candidate pool is ranked on these and only the hits returned are read in full."""

    ids: tuple[str, ...]
    importance: np.ndarray  # float64
    updated_us: np.ndarray  # int64 microseconds since the epoch (exact: recency is computed from it)
    valid_from: np.ndarray  # float64 epoch seconds
    valid_to: np.ndarray  # float64 epoch seconds, +inf when open-ended
    expires_at: np.ndarray  # float64 epoch seconds, +inf when never
    deleted: np.ndarray  # bool: status is deleted
    threads: tuple[str | None, ...]  # source.thread_id

    @staticmethod
    def concat(parts: Sequence[RankFields]) -> RankFields:
        if len(parts) == 1:
            return parts[0]
        if not parts:
            none = np.zeros(0, np.float64)
            return RankFields((), none, np.zeros(0, np.int64), none, none, none, np.zeros(0, bool), ())
        return RankFields(
            ids=tuple(key for part in parts for key in part.ids),
            importance=np.concatenate([part.importance for part in parts]),
            updated_us=np.concatenate([part.updated_us for part in parts]),
            valid_from=np.concatenate([part.valid_from for part in parts]),
            valid_to=np.concatenate([part.valid_to for part in parts]),
            expires_at=np.concatenate([part.expires_at for part in parts]),
            deleted=np.concatenate([part.deleted for part in parts]),
            threads=tuple(thread for part in parts for thread in part.threads),
        )


@dataclass(frozen=True, slots=True)
class AuditQuery:
    record_id: str | None = None
    operation: Operation | None = None
    since: datetime | None = None
    limit: int = 100
    newest_first: bool = False  # the latest ``limit`` events, newest first (default: the oldest, in order)
    exclude: tuple[Operation, ...] = ()  # operations left out (the inspector's changes: all but recalls)


OrderBy = Literal["created_at", "updated_at", "valid_from", "importance"]
ORDERS: tuple[str, ...] = get_args(OrderBy)


class RecordStore(Protocol):
    """Role 1, records: the one write (``apply``: every row of a change in one transaction)
    and the record reads (records, their search indexes, versions, audit). All methods take
    the tenant explicitly; there is no read path without one."""

    dialect: str
    capabilities: frozenset[str]  # e.g. {"hnsw", "row_level_security"}

    def apply(self, batch: WriteBatch) -> None: ...

    def get(self, tenant: str, ids: Sequence[str]) -> list[MemoryRecord]: ...

    def query(
        self, tenant: str, where: RecordFilter, *, order: OrderBy = "created_at", limit: int = 100, offset: int = 0,
        descending: bool | None = None,
    ) -> list[MemoryRecord]:
        """Records matching ``where``, ordered by ``order`` (ascending, but importance
        descending unless ``descending`` says otherwise), ties broken by insertion."""
        ...

    def lexical(self, tenant: str, where: RecordFilter, terms: Sequence[str], limit: int) -> list[ScoredId]: ...

    def nearest(
        self, tenant: str, where: RecordFilter, model: str, vector: np.ndarray, limit: int
    ) -> list[ScoredId]: ...

    def vectors(self, tenant: str, ids: Sequence[str], model: str) -> dict[str, np.ndarray]: ...

    def rank_fields(self, tenant: str, ids: Sequence[str], model: str) -> RankFields:
        """What ranking reads of the records ``ids`` (those that exist, in any order);
        ``model`` names the vector cache that may already hold them."""
        ...

    def versions(self, tenant: str, record_id: str) -> list[Version]: ...

    def audit(self, tenant: str, query: AuditQuery) -> list[AuditEvent]: ...

    def namespaces(self, tenant: str, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]: ...

    def tenants(self) -> list[str]: ...

    def stats(self, tenant: str | None = None) -> Stats: ...


class JobQueue(Protocol):
    """Role 2, the background job queue (jobs are enqueued through ``WriteBatch.jobs``)."""

    def claim_job(self, now: datetime, lease_seconds: float) -> Job | None: ...

    def finish_job(
        self, tenant: str, job_id: str, status: JobStatus, at: datetime, *, error: str | None = None,
        result: dict[str, Any] | None = None, retry_at: datetime | None = None,
    ) -> None: ...

    def jobs(self, tenant: str | None, statuses: Sequence[JobStatus] = (), limit: int = 100) -> list[Job]: ...


class EpisodeStore(Protocol):
    """Role 3, episodes (engram.episodes): threads and turns, read here, written through
    ``WriteBatch.episodes``."""

    def turns(self, tenant: str, query: TurnQuery) -> list[Turn]: ...

    def threads(self, tenant: str, query: ThreadQuery) -> list[Thread]: ...

    def turn_candidates(self, tenant: str, namespace: tuple[str, ...], descendants: bool, terms: Sequence[str],
                        limit: int) -> list[Turn]: ...

    def turn_vectors(self, tenant: str, namespace: tuple[str, ...], descendants: bool,
                     model: str) -> dict[int, np.ndarray]: ...

    def turn_count(self, tenant: str, namespace: tuple[str, ...], descendants: bool) -> int: ...

    def watermark(self, tenant: str, namespace: tuple[str, ...]) -> int: ...

    def turn_scopes(self, tenant: str) -> list[tuple[str, ...]]: ...

    def turn_tenants(self) -> list[str]: ...

    def episode_counts(self, tenant: str | None) -> dict[str, int]: ...


class GovernanceReads(Protocol):
    """Role 4, governance reads (engram.governance): written through ``WriteBatch.governance``."""

    def pending_changes(self, tenant: str | None, query: PendingQuery) -> list[PendingChange]:
        """Proposals awaiting (or past) review, oldest first; ``tenant=None`` reads every tenant."""
        ...

    def recalls(self, tenant: str, query: RecallQuery) -> list[RecallEvent]: ...

    def write_samples(self, tenant: str, query: SampleQuery) -> list[WriteSample]: ...


class StoreAdmin(Protocol):
    """Role 5, administration: store-wide settings (what produced the stored index, e.g.
    "tokenizer"), the consolidation lease, what a purge leaves on disk, closing. Migrations
    run when a backend opens (store/*_migrations.py), outside the protocol."""

    def meta(self, key: str) -> str | None:
        """A store-wide setting, or None when it was never recorded."""
        ...

    def set_meta(self, key: str, value: str, *, only_if_absent: bool = False, expected: str | None = None) -> str:
        """Record a store-wide setting; returns the value stored afterwards (with
        ``only_if_absent``, an existing value wins, so concurrent openers agree; with
        ``expected``, it is written only over that value: a compare-and-swap)."""
        ...

    def scope_lease(self, tenant: str, namespace: tuple[str, ...], holder: str, now: datetime,
                    seconds: float) -> AbstractContextManager[bool]:
        """Leader lock of one scope's consolidation: yields True to the one holder
        (SQLite: a lease row; PostgreSQL: a session advisory lock), False to others."""
        ...

    def erase_traces(self) -> str | None:
        """After a purge: make what it deleted unreadable in the database files now, if
        the backend can without waiting. None when nothing deleted is left on disk;
        otherwise what still holds it and what will finish the job."""
        ...

    def close(self) -> None: ...


class Store(RecordStore, JobQueue, EpisodeStore, GovernanceReads, StoreAdmin, Protocol):
    """What a backend must do: every role. Code that needs one role may ask for that role's
    protocol alone; the conformance suite checks every role on every backend."""


STORE_ROLES: tuple[type, ...] = (RecordStore, JobQueue, EpisodeStore, GovernanceReads, StoreAdmin)
