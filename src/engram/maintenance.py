"""Lifecycle work that runs on a schedule: expiry and duplicate folding.

- expire: active records whose ``expires_at`` or ``valid_to`` has passed become
  status expired (a new version, audited) — reads already hide them; this makes
  the state explicit and lets ``list``/export show it.
- fold duplicates (``fold_duplicates``, reported as ``consolidated``): near-identical
  active memories of the same kind in one namespace (``is_duplicate``: the same words, or
  cosine ≥ 0.95; e.g. the same fact remembered twice through ``remember``) are folded
  into the most important, most recent one; the others are superseded and linked to
  it, so nothing is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from .changes import Change
from .core import WriteCore, retired_by
from .model import MemoryRecord, Operation, Status
from .pipeline.reconcile import normalized
from .reads import ReadContext
from .store.base import RecordFilter, TimeField, TimeRange
from .writes import retire

DUPLICATE_SIMILARITY = 0.95
ACTOR = "maintenance"


@dataclass(frozen=True, slots=True)
class MaintenanceReport:
    expired: int
    consolidated: int


def _due(reads: ReadContext, tenant: str, field: TimeField, now: datetime) -> list[MemoryRecord]:
    where = RecordFilter(descendants=True, statuses=(Status.ACTIVE,), time_ranges=(TimeRange(field, before=now),))
    return reads.store.query(tenant, where, limit=10_000)


def expire_due(core: WriteCore, tenant: str, now: datetime) -> int:
    total = 0
    while count := _expire_batch(core, tenant, now):
        total += count
    return total


def _expire_batch(core: WriteCore, tenant: str, now: datetime) -> int:
    fields: tuple[TimeField, ...] = ("expires_at", "valid_to")
    due = {r.id: r for field in fields for r in _due(core.reads, tenant, field, now)}
    changes = [Change(Operation.EXPIRE, retire(record, Status.EXPIRED, now), record, ACTOR, "expired")
               for record in due.values()]
    return len(core.write(changes)) if changes else 0


def _keep_order(record: MemoryRecord) -> tuple:
    return (-record.importance, -record.updated_at.timestamp(), record.id)


def is_duplicate(kept: MemoryRecord, record: MemoryRecord, vectors: dict[str, np.ndarray]) -> bool:
    """The duplicate test maintenance and consolidation fold by: the same kind, and the
    same words or a cosine of at least DUPLICATE_SIMILARITY."""
    if kept.kind != record.kind:
        return False
    same_words = normalized(kept.content) == normalized(record.content)
    return same_words or float(vectors[kept.id] @ vectors[record.id]) >= DUPLICATE_SIMILARITY


def duplicates_in(
    records: list[MemoryRecord], vectors: dict[str, np.ndarray]
) -> list[tuple[MemoryRecord, MemoryRecord]]:
    """(duplicate, kept) pairs: each record is folded into the best earlier one it repeats."""
    kept: list[MemoryRecord] = []
    pairs = []
    for record in sorted((r for r in records if r.id in vectors), key=_keep_order):
        twin = next((k for k in kept if is_duplicate(k, record, vectors)), None)
        if twin is None:
            kept.append(record)
        else:
            pairs.append((record, twin))
    return pairs


def fold_duplicates(core: WriteCore, tenant: str, now: datetime) -> int:
    """Supersede each duplicate of a namespace by the record it repeats (``is_duplicate``)."""
    folded = 0
    for namespace in core.reads.store.namespaces(tenant):
        records = core.reads.store.query(tenant, RecordFilter(namespace=namespace), limit=10_000)
        vectors = core.stored_vectors(tenant, [r.id for r in records])
        changes = [retired_by(duplicate, kept.id, actor=ACTOR, reason=f"consolidated: repeats {kept.id}", at=now)
                   for duplicate, kept in duplicates_in(records, vectors)]
        if changes:
            folded += len(core.write(changes))
    return folded


def maintain(core: WriteCore) -> MaintenanceReport:
    now = core.clock.now()
    expired = consolidated = 0
    for tenant in core.reads.store.tenants():
        expired += expire_due(core, tenant, now)
        consolidated += fold_duplicates(core, tenant, now)
    return MaintenanceReport(expired, consolidated)
