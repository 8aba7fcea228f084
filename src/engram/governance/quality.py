"""Memory quality measured on the live store (the enterprise article's metrics).

- Write accuracy: a random sample of recent writes is queued for review; reviewers
  mark each correct, wrong or should-not-store; accuracy is correct / reviewed, with
  its 95% Wilson score interval (honest for small samples and rates near 0 or 1).
- Recall hit rate: of the memories put in front of the model for answers that were
  linked (recalls.py), the share the answer actually used.
- Repeat rate: of the turns add() extracted candidates from, the share where the
  user repeated something engram already knew (a NOOP against a memory from another
  conversation) that recall had not given the model in that thread within
  ``repeat_window`` before — a miss of recall the user paid for.
- Writes by add() event, skipped candidates by reason, changes by operation, PII
  actions by kind, pending approvals, decisions and recall latency.

Everything is read from the audit log, the recall rows and the review tables within
a time window, so every process (workers, servers) sees the same figures.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any

from ..core import WriteCore
from ..errors import InvalidValueError, NotFoundError
from ..model import AuditEvent, MemoryRecord, Operation, Scope, parse_enum
from ..reads import ReadContext
from ..store.base import AuditDraft, AuditQuery
from ..values.governance import (
    GovernanceWrites,
    PendingQuery,
    PendingStatus,
    RecallEvent,
    RecallQuery,
    SampleQuery,
    SampleVerdict,
    Verdict,
    WriteSample,
)
from ..writes import new_id

WRITES = (Operation.CREATE, Operation.UPDATE, Operation.RESTORE)  # what a reviewer can judge
COUNTED = tuple(op for op in Operation if op is not Operation.RECALL)  # recalls: the recall rows
SCREENED = (Operation.CREATE, Operation.UPDATE, Operation.RESTORE, Operation.IMPORT)
_ALL = 10**7


# -- write accuracy --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SampleForReview:
    sample: WriteSample
    written: MemoryRecord | None  # the version as it was written; None once purged


def sample_writes(
    core: WriteCore, scope: Scope, *, n: int, since: datetime, actor: str | None = None,
    rng: random.Random | None = None,
) -> list[WriteSample]:
    """Queue up to ``n`` random writes made in ``scope`` (and below) since ``since``
    (by actors matching the ``actor`` pattern) that are not queued yet."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 < n <= 10_000:
        raise InvalidValueError(f"n must be an integer in [1, 10000], got {n!r}")
    tenant, now = scope.tenant, core.clock.now()
    written: dict[tuple[str, int], AuditEvent] = {}
    for operation in WRITES:
        for event in core.store.audit(tenant, AuditQuery(operation=operation, since=since, limit=_ALL)):
            if (event.record_id and event.version and event.namespace[: len(scope.namespace)] == scope.namespace
                    and (actor is None or fnmatchcase(event.actor, actor))):
                written[(event.record_id, event.version)] = event
    queued = {(s.record_id, s.version) for s in core.store.write_samples(
        tenant, SampleQuery(namespace=scope.namespace, written_after=since, limit=_ALL))}
    pool = sorted(key for key in written if key not in queued)
    chosen = (rng or random.Random()).sample(pool, min(n, len(pool)))
    samples = tuple(WriteSample(new_id(), tenant, record_id, version, written[(record_id, version)].namespace,
                                written[(record_id, version)].actor, written[(record_id, version)].at, now)
                    for record_id, version in sorted(chosen, key=lambda key: written[key].at))
    if samples:
        core.commit([], tenant=tenant, governance=GovernanceWrites(samples=samples))
    return list(samples)


def for_review(reads: ReadContext, samples: Sequence[WriteSample]) -> list[SampleForReview]:
    out = []
    for sample in samples:
        versions = reads.store.versions(sample.tenant, sample.record_id)
        written = next((v.record for v in versions if v.version == sample.version), None)
        out.append(SampleForReview(sample, written))
    return out


def mark(
    core: WriteCore, scope: Scope, sample_id: str, verdict: Verdict | str, *, reviewer: str, note: str | None = None,
) -> WriteSample:
    """A reviewer's judgement of one sampled write (marking again replaces it); audited."""
    checked = parse_enum(Verdict, verdict, "verdict")
    if not isinstance(reviewer, str) or not reviewer.strip():
        raise InvalidValueError("a verdict needs the reviewer's name")
    if note is not None and not isinstance(note, str):
        raise InvalidValueError("note must be a string")
    found = core.store.write_samples(scope.tenant, SampleQuery(namespace=scope.namespace, ids=(sample_id,), limit=1))
    if not found:
        raise NotFoundError(f"no write sample {sample_id!r} in scope {scope}")
    sample, now = found[0], core.clock.now()
    audit = AuditDraft(reviewer, Operation.REVIEW, now, sample.record_id, sample.version, sample.namespace,
                       detail={"sample_id": sample.id, "verdict": checked.value, **({"note": note} if note else {})})
    core.commit([], tenant=scope.tenant, audit=[audit],
                governance=GovernanceWrites(verdicts=(SampleVerdict(sample.id, checked, reviewer, now, note),)))
    return WriteSample(sample.id, sample.tenant, sample.record_id, sample.version, sample.namespace, sample.actor,
                       sample.written_at, sample.sampled_at, checked, reviewer, now, note)


@dataclass(frozen=True, slots=True)
class Accuracy:
    reviewed: int
    correct: int
    wrong: int
    should_not_store: int
    awaiting_review: int
    rate: float | None  # correct / reviewed
    low: float | None  # 95% Wilson interval
    high: float | None


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (None without observations)."""
    if n <= 0:
        return None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def accuracy(samples: Sequence[WriteSample]) -> Accuracy:
    verdicts = Counter(s.verdict for s in samples if s.verdict is not None)
    reviewed = sum(verdicts.values())
    correct = verdicts[Verdict.CORRECT]
    interval = wilson(correct, reviewed)
    return Accuracy(reviewed, correct, verdicts[Verdict.WRONG], verdicts[Verdict.SHOULD_NOT_STORE],
                    len(samples) - reviewed, correct / reviewed if reviewed else None,
                    interval[0] if interval else None, interval[1] if interval else None)


# -- the report ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Latency:
    count: int
    total_ms: float
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    max_ms: float | None


@dataclass(frozen=True, slots=True)
class QualityReport:
    tenant: str
    since: datetime
    until: datetime
    add_events: Mapping[str, int]  # add(): ADD, UPDATE, SUPERSEDE, NOOP, SKIPPED, PENDING
    skipped: Mapping[str, int]  # SKIPPED by reason class (governance/events.py)
    changes: Mapping[str, int]  # audit rows by operation (every write path)
    pii_actions: Mapping[str, Mapping[str, int]]  # kind → action → count
    pending: int  # awaiting a reviewer now
    decisions: Mapping[str, int]  # approved, rejected, expired in the window
    recalls: int
    latency: Latency
    answered: int  # recalls linked to an answer
    recalled_for_answers: int  # memories in those recalls
    used: int  # of them, used by the answer
    turns: int  # add() runs with candidates
    repeats: int  # of them, repeating a known memory recall had missed
    accuracy: Accuracy
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def hit_rate(self) -> float | None:
        return self.used / self.recalled_for_answers if self.recalled_for_answers else None

    @property
    def repeat_rate(self) -> float | None:
        return self.repeats / self.turns if self.turns else None


def report(
    reads: ReadContext, tenant: str, *, since: datetime, repeat_window: timedelta = timedelta(hours=1),
) -> QualityReport:
    now = reads.clock.now()
    by_op: dict[Operation, list[AuditEvent]] = {
        op: reads.store.audit(tenant, AuditQuery(operation=op, since=since, limit=_ALL)) for op in COUNTED}
    extracts = by_op[Operation.EXTRACT]
    recalls = reads.store.recalls(tenant, RecallQuery(since=since, limit=_ALL))
    answered = [r for r in recalls if r.used is not None]
    turns, repeats = _repeats(reads, tenant, extracts, repeat_window)
    return QualityReport(
        tenant=tenant, since=since, until=now,
        add_events=_summed(e.detail.get("events") for e in extracts),
        skipped=_summed(e.detail.get("skipped") for e in extracts),
        changes={op.value: len(events) for op, events in by_op.items() if events},
        pii_actions=_pii_actions([e for op in SCREENED for e in by_op[op]], extracts),
        pending=_pending_now(reads, tenant, now),
        decisions=_decisions(by_op[Operation.APPROVE], by_op[Operation.REJECT]),
        recalls=len(recalls), latency=_latency(recalls),
        answered=len(answered), recalled_for_answers=sum(len(r.memories) for r in answered),
        used=sum(len(r.used or ()) for r in answered),
        turns=turns, repeats=repeats,
        accuracy=accuracy(reads.store.write_samples(tenant, SampleQuery(written_after=since, limit=_ALL))),
    )


def _summed(mappings: Any) -> dict[str, int]:
    total: Counter[str] = Counter()
    for mapping in mappings:
        if isinstance(mapping, Mapping):
            total.update({str(k): int(v) for k, v in mapping.items()})
    return dict(sorted(total.items()))


def _pii_actions(changes: Sequence[AuditEvent], extracts: Sequence[AuditEvent]) -> dict[str, dict[str, int]]:
    out: dict[str, Counter[str]] = {}
    for event in changes:
        for kind, action in dict(event.detail.get("pii") or {}).items():
            out.setdefault(kind, Counter())[str(action)] += 1
    for event in extracts:
        for kind, count in dict(event.detail.get("forbidden") or {}).items():
            out.setdefault(kind, Counter())["forbid"] += int(count)
    return {kind: dict(sorted(counts.items())) for kind, counts in sorted(out.items())}


def _pending_now(reads: ReadContext, tenant: str, now: datetime) -> int:
    waiting = reads.store.pending_changes(tenant, PendingQuery(statuses=(PendingStatus.PENDING,), limit=_ALL))
    return sum(1 for p in waiting if p.expires_at > now)


def _decisions(approved: Sequence[AuditEvent], rejected: Sequence[AuditEvent]) -> dict[str, int]:
    expired = sum(1 for e in rejected if e.detail.get("expired"))
    counts = {"approved": len(approved), "rejected": len(rejected) - expired, "expired": expired}
    return {k: v for k, v in counts.items() if v}


def _latency(recalls: Sequence[RecallEvent]) -> Latency:
    values = sorted(r.latency_ms for r in recalls if r.latency_ms is not None)
    if not values:
        return Latency(0, 0.0, None, None, None, None)

    def quantile(q: float) -> float:
        return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]

    return Latency(len(values), sum(values), quantile(0.5), quantile(0.95), quantile(0.99), values[-1])


def _repeats(
    reads: ReadContext, tenant: str, extracts: Sequence[AuditEvent], window: timedelta,
) -> tuple[int, int]:
    """(turns with candidates, turns repeating a known memory that recall had missed)."""
    turns = [e for e in extracts if sum(dict(e.detail.get("events") or {}).values())]
    known_ids = sorted({str(i) for e in turns for i in e.detail.get("known") or ()})
    threads = {r.id: r.source.thread_id for r in reads.store.get(tenant, known_ids)} if known_ids else {}
    repeats = 0
    for turn in turns:
        thread = turn.detail.get("thread_id")
        known = [i for i in turn.detail.get("known") or () if i in threads and (thread is None or threads[i] != thread)]
        if known and set(known) - _recalled(reads, tenant, thread, turn.at, window):
            repeats += 1
    return len(turns), repeats


def _recalled(reads: ReadContext, tenant: str, thread: Any, at: datetime, window: timedelta) -> set[str]:
    if not isinstance(thread, str):
        return set()
    recalls = reads.store.recalls(tenant, RecallQuery(thread_id=thread, since=at - window, limit=_ALL))
    return {m.record_id for r in recalls if r.at <= at for m in r.memories}
