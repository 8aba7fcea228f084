"""The SQLite fast paths the speed work added behave exactly like the SQL they replace.

- "valid now" is checked on the vector cache's validity windows, not by a SQL scan;
- vectors() answers from the cache when the scope is loaded and fresh;
- creates are checked for existence once per batch and inserted without an upsert.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from engram import ConflictError, MemoryDraft
from engram.limits import InputLimits
from engram.store.base import RecordFilter
from engram.writes import build_record
from store_rows import creates


def _vector_contents(memory, scope, query="offer code starts"):
    return {h.record.content for h in memory.search(query, scope, retriever="vector", k=10)}


def test_vector_search_drops_records_outside_their_validity_window(memory, alice, clock):
    memory.remember("offer valid this week", alice, valid_to=clock.now() + timedelta(days=7))
    memory.remember("code expires tomorrow", alice, expires_at=clock.now() + timedelta(days=1))
    memory.remember("starts next month", alice, valid_from=clock.now() + timedelta(days=30))
    assert _vector_contents(memory, alice) == {"offer valid this week", "code expires tomorrow"}
    clock.advance(days=2)  # no write in between: the cached entry is reused, validity is re-checked
    assert _vector_contents(memory, alice) == {"offer valid this week"}
    clock.advance(days=40)
    assert _vector_contents(memory, alice) == {"starts next month"}


def test_cache_and_sql_agree_on_the_valid_set(memory, alice, clock):
    for day in range(6):
        memory.remember(f"note {day}", alice, valid_to=clock.now() + timedelta(days=day + 1))
    clock.advance(days=3)
    now = clock.now()
    vector = memory.embedder.embed(["note"])[0]
    where = RecordFilter(namespace=alice.namespace, valid_at=now)
    cached = {hit.id for hit in memory._store.nearest("acme", where, memory.embedder.name, vector, 50)}
    # a category condition forces the SQL path (category None matches no row, so filter by ids instead)
    ids = tuple(r.id for r in memory._store.query("acme", RecordFilter(namespace=alice.namespace), limit=50))
    by_sql = {hit.id for hit in memory._store.nearest("acme", RecordFilter(namespace=alice.namespace, valid_at=now,
                                                                          ids=ids), memory.embedder.name, vector, 50)}
    assert cached == by_sql and len(cached) == 3


def test_vectors_from_the_cache_equal_the_stored_ones(memory, alice, bob):
    records = memory.remember_many(["alpha one", "beta two", "gamma three"], alice)
    other = memory.remember("delta four", bob)
    memory.search("alpha", alice)  # loads alice's scope into the cache
    ids = [r.id for r in records] + [other.id, "missing"]
    from_cache = memory._store.vectors("acme", ids, memory.embedder.name)
    memory._store._vectors = type(memory._store._vectors)(max_bytes=1)  # an empty cache: SQL only
    from_sql = memory._store.vectors("acme", ids, memory.embedder.name)
    assert set(from_cache) == set(from_sql) == {r.id for r in records} | {other.id}
    for key, row in from_sql.items():
        assert np.array_equal(row, from_cache[key])
        assert not from_cache[key].flags.writeable


def _create(memory, scope, content, record_id):
    record = build_record(MemoryDraft(content, id=record_id), scope, memory.clock.now(), InputLimits(), memory.embedder.name)
    return record, memory.embedder.embed([content])[0]


def test_a_create_of_an_existing_id_conflicts_and_writes_nothing(memory, alice):
    memory._store.apply(creates("acme", [_create(memory, alice, "first", "id-1")]))
    batch = creates("acme", [_create(memory, alice, "second", "id-2"), _create(memory, alice, "again", "id-1")])
    with pytest.raises(ConflictError, match="id-1 already exists"):
        memory._store.apply(batch)
    assert [r.content for r in memory._store.get("acme", ["id-1", "id-2"])] == ["first"]


def test_the_same_id_twice_in_one_batch_conflicts(memory, alice):
    batch = creates("acme", [_create(memory, alice, "one", "dup"), _create(memory, alice, "two", "dup")])
    with pytest.raises(ConflictError, match="dup already exists"):
        memory._store.apply(batch)
    assert memory._store.get("acme", ["dup"]) == []


def test_created_records_are_found_by_lexical_search_and_updates_replace_terms(memory, alice):
    record = memory.remember("the zebra crossing", alice)
    assert [h.record.id for h in memory.search("zebra", alice, retriever="bm25")] == [record.id]
    memory.update(record.id, alice, content="the giraffe crossing")
    assert memory.search("zebra", alice, retriever="bm25") == []
    assert [h.record.id for h in memory.search("giraffe", alice, retriever="bm25")] == [record.id]
