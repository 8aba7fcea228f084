"""pgvector specifics: one partial HNSW index per embedding model, an exact path for
small scopes and a fallback when a filtered index scan comes back short, so
filtering by scope never loses results; plus how the backend is selected."""

from __future__ import annotations

from datetime import UTC

import numpy as np
import pytest

from engram import FakeHashEmbedder, InvalidValueError, Memory, Scope
from engram.store.base import RecordFilter
from engram.store.postgres import PostgresStore, split_url
from engram.store.sql import hnsw_count_cap, hnsw_ef, pg_vector_index_name

try:
    from conformance import pgtools
except ImportError:  # tests/ collected as a package
    from tests.conformance import pgtools


@pytest.fixture(scope="module")
def server():
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    return pgtools.session_server()


@pytest.fixture
def schema(server):
    name = server.new_schema()
    yield name
    server.drop_schema(name)


def _exact(store_url: str, tenant: str, where: RecordFilter, model: str, vector, k: int):
    exact = PostgresStore(store_url, exact_threshold=10**9)
    try:
        return exact.nearest(tenant, where, model, vector, k)
    finally:
        exact.close()


def test_each_model_gets_its_own_partial_hnsw_index(server, schema):
    url = server.url_for(schema=schema)
    small, other = FakeHashEmbedder(dim=64, name="fake-a"), FakeHashEmbedder(dim=32, name="fake-b")
    alice = Scope("acme", ("users", "alice"))
    with Memory(PostgresStore(url), embedder=small) as a, Memory(PostgresStore(url), embedder=other) as b:
        a.remember("green tea with lemon", alice)
        b.remember("green tea without lemon", alice)
        indexes = {row[0] for row in server.sql("SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,))}
        assert {pg_vector_index_name("fake-a", 64), pg_vector_index_name("fake-b", 32)} <= indexes
        assert [h.record.content for h in a.search("green tea", alice, retriever="vector")] == ["green tea with lemon"]
        assert [h.record.content for h in b.search("green tea", alice, retriever="vector")] == [
            "green tea without lemon"]


def test_a_model_too_wide_for_hnsw_is_searched_exactly(server, schema):
    wide = FakeHashEmbedder(dim=2048, name="fake-wide")
    alice = Scope("acme", ("users", "alice"))
    with Memory(PostgresStore(server.url_for(schema=schema)), embedder=wide) as memory:
        memory.remember("a very wide vector", alice)
        assert [h.record.content for h in memory.search("wide vector", alice, retriever="vector")] == [
            "a very wide vector"]
    indexes = server.sql("SELECT indexname FROM pg_indexes WHERE schemaname = %s AND indexname LIKE 'memories_hnsw%%'",
                         (schema,))
    assert indexes == []


def _vectors(count: int, dim: int, seed: int, center: np.ndarray | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(count, dim)).astype(np.float32)
    if center is not None:
        rows += 4 * center
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _load(store: PostgresStore, tenant: str, scope: Scope, vectors: np.ndarray, model: str) -> list[str]:
    from datetime import datetime

    from engram.limits import InputLimits
    from engram.writes import MemoryDraft, build_record
    from store_rows import creates

    now = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [(build_record(MemoryDraft(f"item {i}"), scope, now, InputLimits(), model), v) for i, v in enumerate(vectors)]
    store.apply(creates(tenant, rows))
    return [record.id for record, _ in rows]


def test_small_scopes_are_exact_and_big_ones_use_hnsw_with_a_fallback(server, schema):
    """A big scope is searched through HNSW; a scope of 100 records inside a tenant of
    2,100 is too rare for the index's candidates (they all come from the big scope),
    so the store falls back to the exact scan and still returns all k, exactly."""
    url = server.url_for(schema=schema)
    dim, model = 32, "synthetic"
    center = _vectors(1, dim, seed=99)[0]
    big, small = Scope("acme", ("big",)), Scope("acme", ("small",))
    store = PostgresStore(url, exact_threshold=50, ef_search=40)
    try:
        _load(store, "acme", big, _vectors(2000, dim, seed=1, center=center), model)
        small_ids = _load(store, "acme", small, _vectors(100, dim, seed=2), model)
        server.sql(f'ANALYZE "{schema}".memories')
        hits = store.nearest("acme", RecordFilter(namespace=big.namespace), model, center, 10)
        assert len(hits) == 10
        assert store.vector_paths == {"hnsw": 1}  # the big scope went through the index
        exact = _exact(url, "acme", RecordFilter(namespace=big.namespace), model, center, 10)
        assert len({h.id for h in hits} & {h.id for h in exact}) >= 8  # approximate, but close
        found = store.nearest("acme", RecordFilter(namespace=small.namespace), model, center, 10)
        assert store.vector_paths == {"hnsw": 1, "fallback": 1}
        assert found == _exact(url, "acme", RecordFilter(namespace=small.namespace), model, center, 10)
        assert len(found) == 10 and {h.id for h in found} <= set(small_ids)
        few = RecordFilter(namespace=small.namespace, ids=tuple(small_ids[:3]))
        assert {h.id for h in store.nearest("acme", few, model, center, 10)} == set(small_ids[:3])
        assert store.vector_paths == {"hnsw": 1, "fallback": 1, "exact": 1}
    finally:
        store.close()


def test_a_scope_too_rare_for_the_index_is_searched_exactly_whatever_its_size(server, schema):
    """Above exact_threshold, a scope holding too small a share of the model's index for
    pgvector (before 0.8) to leave ``limit`` of its ef_search candidates, even at the
    ceiling, goes straight to the exact scan: never k rows that pass the filter but are
    not its nearest. (2 x 10 / (15 / 2,015) > 1,000.)"""
    url = server.url_for(schema=schema)
    dim, model = 32, "synthetic"
    center = _vectors(1, dim, seed=99)[0]
    big, rare = Scope("acme", ("big",)), Scope("acme", ("rare",))
    store = PostgresStore(url, exact_threshold=10, ef_search=40)
    try:
        _load(store, "acme", big, _vectors(2000, dim, seed=1, center=center), model)
        _load(store, "acme", rare, _vectors(15, dim, seed=3, center=center), model)
        server.sql(f'ANALYZE "{schema}".memories')
        where = RecordFilter(namespace=rare.namespace)
        found = store.nearest("acme", where, model, center, 10)
        iterative = store._iterative
        assert store.vector_paths == ({"hnsw": 1} if iterative else {"exact": 1})
        if not iterative:
            assert found == _exact(url, "acme", where, model, center, 10)
    finally:
        store.close()


def test_the_ef_search_of_a_filtered_hnsw_search():
    """pgvector before 0.8 filters ef_search candidates of the whole index: ask for twice
    ``limit`` of the scope's share, within pgvector's ceiling, else search exactly."""
    assert hnsw_ef(50_000, 100_000, 50, 100, iterative=False) == 200
    assert hnsw_ef(90_000, 100_000, 50, 100, iterative=False) == 112
    assert hnsw_ef(99_000, 100_000, 10, 100, iterative=False) == 100  # never below the configured one
    assert hnsw_ef(1_000, 100_000, 50, 100, iterative=False) is None  # a user among 100 users
    assert hnsw_ef(1_000, 100_000, 50, 100, iterative=True) == 100  # iterative scans walk on
    assert hnsw_ef(1_000, 100_000, 2_000, 100, iterative=True) == 1_000
    assert hnsw_count_cap(20_000, 100_000, 50) == 20_000
    assert hnsw_count_cap(20_000, 10_000_000, 50) == 1_000_000


def test_memory_open_and_engram_db_select_postgres(server, schema, monkeypatch):
    url = server.url_for(schema=schema)
    monkeypatch.setenv("ENGRAM_DB", url)
    with Memory.open(embedder=FakeHashEmbedder()) as memory:
        assert isinstance(memory._store, PostgresStore) and memory._store.schema == schema
        memory.remember("selected by ENGRAM_DB", Scope("acme"))
    with Memory.open(url.replace("postgresql://", "postgres://"), embedder=FakeHashEmbedder()) as memory:
        assert [r.content for r in memory.list(Scope("acme")).items] == ["selected by ENGRAM_DB"]


def test_url_options_are_taken_out_before_connecting():
    conninfo, options = split_url("postgresql://u:p@db.example:5432/app?sslmode=require&engram_schema=mem")
    assert conninfo == "postgresql://u:p@db.example:5432/app?sslmode=require"
    assert options == {"schema": "mem"}
    with pytest.raises(InvalidValueError):
        PostgresStore("postgresql://u@/app?engram_schema=Robert'); DROP")


def test_hnsw_off_keeps_every_search_exact(server, schema):
    url = server.url_for(schema=schema) + "&engram_hnsw=off"
    alice = Scope("acme", ("users", "alice"))
    with Memory.open(url, embedder=FakeHashEmbedder()) as memory:
        assert memory._store.hnsw is False
        memory.remember_many([f"note number {i}" for i in range(30)], alice)
        memory._store.exact_threshold = 5
        assert len(memory.search("note", alice, retriever="vector", k=10)) == 10
        assert memory._store.vector_paths == {"exact": 1}
    indexes = server.sql("SELECT indexname FROM pg_indexes WHERE schemaname = %s AND indexname LIKE 'memories_hnsw%%'",
                         (schema,))
    assert indexes == []


def test_bulk_load_copies_rows_and_builds_the_hnsw_index_once_after(server, schema):
    scope = Scope("acme", ("users", "ana"))
    embedder = FakeHashEmbedder(dim=64, name="fake-bulk")
    with Memory(PostgresStore(server.url_for(schema=schema)), embedder=embedder) as memory:
        store = memory._store

        def indexed() -> bool:
            names = {row[0] for row in server.sql("SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,))}
            return pg_vector_index_name("fake-bulk", 64) in names

        memory.remember("before the load", scope)  # the first write creates the model's index
        assert indexed()
        with store.bulk_load("fake-bulk", 64):
            assert not indexed()
            texts = [f"bulk note {i} with 'quotes', a \\ and a\ttab" for i in range(120)]
            records = memory.remember_many(texts, scope)  # over 50 inserts: COPY
            assert not indexed()
        assert indexed()
        assert [memory.get(r.id, scope).content for r in records] == texts
        assert memory.search("bulk note 7", scope, k=1, retriever="bm25")[0].record.id == records[7].id
        # the HNSW index built after the load answers (approximate: the nearest is among its first three)
        assert records[3].id in [h.record.id for h in memory.search("bulk note 3", scope, k=3, retriever="vector")]
