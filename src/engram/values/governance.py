"""Frozen value objects of governance: pending changes, recalls, write samples, and
what a write batch carries for them (``GovernanceWrites``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from ..errors import EngramError
from ..model import MemoryRecord, Operation


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


# -- approvals -------------------------------------------------------------------------------


class PendingStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"


@dataclass(frozen=True, slots=True)
class ProposedChange:
    """One change of a pending proposal: the record state it would write (already
    screened by the PII policy), and the stored version it was proposed against."""

    operation: Operation
    record: MemoryRecord
    base_version: int | None  # None: the record must not exist yet
    reason: str | None = None
    detail: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class PendingChange:
    """A write that matched an approval rule: who proposed it, why, what it would
    write; not visible to recall until a reviewer approves it."""

    id: str
    tenant: str
    namespace: tuple[str, ...]
    status: PendingStatus
    created_at: datetime
    expires_at: datetime
    actor: str  # who proposed it
    reason: str | None  # the producer's reason (e.g. the reconcile decision)
    rule: str  # the approval rule that matched, and why
    changes: tuple[ProposedChange, ...]
    detail: Mapping[str, Any] = field(default_factory=_empty)  # thread, extractor, event, …
    decided_by: str | None = None
    decided_at: datetime | None = None
    decision_reason: str | None = None

    @property
    def record(self) -> MemoryRecord:
        """The record the proposal is about (its first change)."""
        return self.changes[0].record

    @property
    def record_id(self) -> str:
        return self.changes[0].record.id


@dataclass(frozen=True, slots=True)
class PendingDecision:
    """A pending change leaving the pending state; applied only if it is still pending."""

    id: str
    status: PendingStatus
    by: str
    at: datetime
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class PendingQuery:
    namespace: tuple[str, ...] = ()  # this namespace and below
    statuses: tuple[PendingStatus, ...] = ()  # () means any
    ids: tuple[str, ...] | None = None
    record_id: str | None = None
    expires_before: datetime | None = None
    limit: int = 100
    offset: int = 0


# -- recalls: which answer used which memory --------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecalledMemory:
    record_id: str
    version: int
    score: float


@dataclass(frozen=True, slots=True)
class RecallEvent:
    """One retrieval used (or meant) for an answer, and later the answer that used it."""

    id: str
    tenant: str
    at: datetime
    actor: str
    memories: tuple[RecalledMemory, ...]
    latency_ms: float | None = None
    thread_id: str | None = None
    answer_id: str | None = None
    answered_at: datetime | None = None
    used: tuple[str, ...] | None = None  # recalled ids the answer used; None until answered


@dataclass(frozen=True, slots=True)
class AnswerLink:
    recall_id: str
    answer_id: str
    at: datetime
    used: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RecallQuery:
    ids: tuple[str, ...] | None = None
    answer_id: str | None = None
    thread_id: str | None = None
    since: datetime | None = None
    limit: int = 100
    until: datetime | None = None  # at or before this instant
    newest_first: bool = False  # the latest ``limit`` recalls, newest first (default: the oldest, in order)


# -- write accuracy: reviewed samples ---------------------------------------------------------


class Verdict(StrEnum):
    CORRECT = "correct"
    WRONG = "wrong"
    SHOULD_NOT_STORE = "should_not_store"


@dataclass(frozen=True, slots=True)
class WriteSample:
    """One written version of a record, queued for a reviewer to judge."""

    id: str
    tenant: str
    record_id: str
    version: int
    namespace: tuple[str, ...]
    actor: str  # who wrote it
    written_at: datetime
    sampled_at: datetime
    verdict: Verdict | None = None
    reviewer: str | None = None
    reviewed_at: datetime | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class SampleVerdict:
    sample_id: str
    verdict: Verdict
    reviewer: str
    at: datetime
    note: str | None = None


@dataclass(frozen=True, slots=True)
class SampleQuery:
    namespace: tuple[str, ...] = ()
    reviewed: bool | None = None  # None: both
    written_after: datetime | None = None
    ids: tuple[str, ...] | None = None
    limit: int = 100


# -- what a write batch carries ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GovernanceWrites:
    """The governance rows one batch writes, in the same transaction as its records."""

    pending: tuple[PendingChange, ...] = ()
    decisions: tuple[PendingDecision, ...] = ()
    recalls: tuple[RecallEvent, ...] = ()
    answers: tuple[AnswerLink, ...] = ()
    samples: tuple[WriteSample, ...] = ()
    verdicts: tuple[SampleVerdict, ...] = ()
    purged_scopes: tuple[tuple[str, ...], ...] = ()  # pending changes and samples there are dropped

    @property
    def empty(self) -> bool:
        return not (self.pending or self.decisions or self.recalls or self.answers or self.samples
                    or self.verdicts or self.purged_scopes)


class PendingApprovalError(EngramError):
    """The write matched an approval rule: it was kept as a pending change (``.pending``)
    for a reviewer, and nothing else was written. ``memory.approvals.approve`` /
    ``reject`` decide it. (It lives here, next to what it carries, so that errors.py
    depends on nothing.)"""

    def __init__(self, pending: PendingChange) -> None:
        self.pending = pending
        super().__init__(f"pending change {pending.id} awaits approval ({pending.rule})")
