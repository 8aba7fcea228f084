"""Re-embed records whose vectors came from another model, while reads keep working.

Each re-embedded record gets a new version and a ``reindex`` audit row through the
write core, like any change (its embedding model is part of its state)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ..core import Change, WriteCore
from ..errors import ConflictError
from ..model import MemoryRecord, Operation
from ..store.base import RecordFilter

Progress = Callable[[int, int], None]
ACTOR = "reindex"


def stale_records(core: WriteCore, tenant: str) -> list[MemoryRecord]:
    everything = RecordFilter(descendants=True, statuses=())
    model = core.embedder.name
    return [r for r in core.store.query(tenant, everything, limit=10**9) if r.embedding_model != model]


def reindex_store(core: WriteCore, *, batch_size: int = 256, progress: Progress | None = None) -> int:
    """Until no record of any tenant has a vector from another model. A record that
    changed meanwhile (compare-and-swap lost) is picked up again on the next pass."""
    done = 0
    for tenant in core.store.tenants():
        while stale := stale_records(core, tenant):
            for start in range(0, len(stale), batch_size):
                done += _reembed(core, stale[start : start + batch_size])
                if progress:
                    progress(min(start + batch_size, len(stale)), len(stale))
    return done


def _reembed(core: WriteCore, records: Sequence[MemoryRecord]) -> int:
    """One transaction for the batch; if a record changed meanwhile, one per record."""
    changes = [_reindexed(core, record) for record in records]
    try:
        return len(core.write(changes))
    except ConflictError:
        done = 0
        for change in changes:
            try:
                done += len(core.write([change]))
            except ConflictError:
                continue
        return done


def _reindexed(core: WriteCore, record: MemoryRecord) -> Change:
    now = core.clock.now()
    fresh = replace(record, version=record.version + 1, updated_at=now, embedding_model=core.embedder.name)
    return Change(Operation.REINDEX, fresh, record, ACTOR, None, {"from_model": record.embedding_model})
