"""Re-embed records whose vectors came from another model, while reads keep working."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ..errors import ConflictError
from ..model import MemoryRecord
from ..search.tokenize import index_text
from ..store.base import RecordFilter, RecordWrite, Store, WriteBatch
from .base import Embedder

Progress = Callable[[int, int], None]


def stale_records(store: Store, tenant: str, model: str) -> list[MemoryRecord]:
    everything = RecordFilter(descendants=True, statuses=())
    return [r for r in store.query(tenant, everything, limit=10**9) if r.embedding_model != model]


def reindex_store(store: Store, embedder: Embedder, *, batch_size: int = 256, progress: Progress | None = None) -> int:
    """Until no record of any tenant has a vector from another model. A record that
    changed meanwhile (compare-and-swap lost) is picked up again on the next pass."""
    done = 0
    for tenant in store.tenants():
        while stale := stale_records(store, tenant, embedder.name):
            for start in range(0, len(stale), batch_size):
                done += _reembed(store, embedder, tenant, stale[start : start + batch_size])
                if progress:
                    progress(min(start + batch_size, len(stale)), len(stale))
    return done


def _reembed(store: Store, embedder: Embedder, tenant: str, records: Sequence[MemoryRecord]) -> int:
    vectors = embedder.embed([r.indexed_text for r in records])
    done = 0
    for record, vector in zip(records, vectors):
        fresh = replace(record, embedding_model=embedder.name)
        try:
            store.apply(WriteBatch(tenant, records=(RecordWrite(fresh, index_text(fresh.indexed_text), vector,
                                                                record.version),)))
            done += 1
        except ConflictError:
            continue
    return done
