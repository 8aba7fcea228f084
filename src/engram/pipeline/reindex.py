"""Re-embed records whose vectors came from another model, and rebuild lexical terms
that came from another tokenizer, while reads keep working.

Each re-indexed record gets a new version and a ``reindex`` audit row through the
write core, like any change (its embedding model and its terms are part of its
indexed state); the core writes the terms with the store's tokenizer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ..changes import Change
from ..core import WriteCore
from ..errors import ConflictError
from ..model import MemoryRecord, Operation
from ..search.store_terms import record_tokenizer
from ..store.base import RecordFilter

Progress = Callable[[int, int], None]
ACTOR = "reindex"


def all_records(core: WriteCore, tenant: str) -> list[MemoryRecord]:
    return core.reads.store.query(tenant, RecordFilter(descendants=True, statuses=()), limit=10**9)


def stale_records(core: WriteCore, tenant: str) -> list[MemoryRecord]:
    model = core.embedder.name
    return [r for r in all_records(core, tenant) if r.embedding_model != model]


def reindex_store(
    core: WriteCore, *, batch_size: int = 256, progress: Progress | None = None, terms_from: str | None = None
) -> int:
    """Until no record of any tenant has a vector from another model. With
    ``terms_from`` (the tokenizer the stored terms came from), every record first,
    then the store records the core's tokenizer as its own. A record that changed
    meanwhile (compare-and-swap lost) was written by the core, with fresh terms, and
    a stale vector is picked up again on the next pass."""
    done = 0
    detail = {"terms_from": terms_from, "terms_to": core.tokenizer.name} if terms_from is not None else {}
    for tenant in core.reads.store.tenants():
        if terms_from is not None:
            done += _pass(core, all_records(core, tenant), batch_size, progress, detail)
        while stale := stale_records(core, tenant):
            done += _pass(core, stale, batch_size, progress, {})
    if terms_from is not None:
        record_tokenizer(core.store, core.tokenizer)
    return done


def _pass(
    core: WriteCore, records: Sequence[MemoryRecord], batch_size: int, progress: Progress | None,
    detail: dict[str, str],
) -> int:
    done = 0
    for start in range(0, len(records), batch_size):
        done += _reembed(core, records[start : start + batch_size], detail)
        if progress:
            progress(min(start + batch_size, len(records)), len(records))
    return done


def _reembed(core: WriteCore, records: Sequence[MemoryRecord], detail: dict[str, str]) -> int:
    """One transaction for the batch; if a record changed meanwhile, one per record."""
    changes = [_reindexed(core, record, detail) for record in records]
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


def _reindexed(core: WriteCore, record: MemoryRecord, detail: dict[str, str]) -> Change:
    now = core.clock.now()
    fresh = replace(record, version=record.version + 1, updated_at=now, embedding_model=core.embedder.name)
    return Change(Operation.REINDEX, fresh, record, ACTOR, None, {"from_model": record.embedding_model, **detail})
