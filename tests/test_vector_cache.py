"""The per-scope vector cache (store/vector_cache.py): what it holds, what it scores, what it costs.

Issue 29: a query's cost should depend on its scope's size, not on how many other
scopes are cached. The cache keeps the bytes it holds as a running total (a load no
longer sums every entry) and keeps a scope's vectors in the blocks they were read in
(no second copy into one matrix on the scope's second query)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engram.model import Kind, Status
from engram.store.base import RecordFilter
from engram.store.sqlite_vectors import TIME_FIELDS, PackedRows
from engram.store.vector_cache import VectorCache, build_scope_vectors

WIDTH = 8


def _rows(count: int, *, block: int = 4, seed: int = 0, shuffled: bool = False) -> PackedRows:
    """``count`` records in blocks of ``block`` (as chunks are read), unit vectors, all active and valid."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, WIDTH)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    docs = np.arange(1, count + 1, dtype=np.int64)
    if shuffled:
        docs = rng.permutation(docs)
    times = np.zeros((count, len(TIME_FIELDS)), dtype=np.float64)
    times[:, 1] = times[:, 2] = math.inf
    times[:, 3] = 0.5
    parts = [np.frombuffer(vectors[start:start + block].tobytes(), dtype="<f4").reshape(-1, WIDTH)
             for start in range(0, count, block)]
    return PackedRows(docs, times, [f"r{doc}" for doc in docs.tolist()], ["active"] * count, ["fact"] * count,
                      [None] * count, parts)


def _loader(rows: dict[tuple[str, ...], PackedRows], calls: list):
    def load(tenant: str, namespace: tuple[str, ...], descendants: bool, model: str) -> PackedRows:
        calls.append(namespace)
        return rows[namespace]

    return load


def _where(user: str) -> RecordFilter:
    return RecordFilter(namespace=("users", user))


def test_the_running_total_is_the_sum_of_the_entries_held():
    rows = {("users", f"u{i}"): _rows(12, seed=i) for i in range(6)}
    calls: list = []
    one = build_scope_vectors(0, rows[("users", "u0")]).nbytes
    cache = VectorCache(max_bytes=3 * one + one // 2)  # room for three scopes of that size
    for i in range(6):
        cache.get("t", _where(f"u{i}"), "m", 1, _loader(rows, calls))
        held = list(cache._entries.values())
        assert cache.nbytes == sum(entry.nbytes for entry in held)
        assert cache.nbytes <= cache._max_bytes
    assert len(cache) == 3
    # a write moved the tenant's sequence: the scope is rebuilt and counted once, not twice
    before = cache.nbytes
    cache.get("t", _where("u5"), "m", 2, _loader(rows, calls))
    assert cache.nbytes == before == sum(entry.nbytes for entry in cache._entries.values())
    assert len(calls) == 7
    cache.get("t", _where("u5"), "m", 2, _loader(rows, calls))
    summary = cache.summary()
    assert (summary["scopes"], summary["loads"], summary["hits"], summary["evictions"]) == (3, 7, 1, 3)
    assert summary["bytes"] == cache.nbytes


def test_engram_stats_shows_the_cache(tmp_path):
    """Loads, hits and evictions say whether the cache churns (issue 29: the LRU at 1M)."""
    from engram import FakeHashEmbedder, Memory, Scope

    memory = Memory.open(str(tmp_path / "stats.db"), embedder=FakeHashEmbedder())
    try:
        scope = Scope.for_user("acme", "ana")
        memory.remember_many(["tea at the harbour", "coffee at noon"], scope)
        memory.search("tea", scope)
        memory.search("coffee", scope)
        shown = memory.stats().extra["vector_cache"]
        assert shown["scopes"] == 1 and shown["loads"] == 1 and shown["hits"] >= 1 and shown["evictions"] == 0
        assert shown["budget_mb"] == 512.0 and 0 < shown["bytes"] < 2**20
    finally:
        memory.close()


def test_the_newest_scope_stays_even_over_budget():
    rows = {("users", "big"): _rows(40)}
    cache = VectorCache(max_bytes=1)
    entry = cache.get("t", _where("big"), "m", 1, _loader(rows, []))
    assert len(cache) == 1 and cache.nbytes == entry.nbytes


def test_a_scope_searched_again_keeps_its_blocks_and_scores_alike():
    """No copy into one matrix on the second query; scores over the blocks are exactly
    those of one matrix, in rowid order, also when the blocks hold another order."""
    for shuffled in (False, True):
        rows = {("users", "ana"): _rows(30, block=4, shuffled=shuffled, seed=3)}
        calls: list = []
        cache = VectorCache(max_bytes=1 << 30)
        first = cache.get("t", _where("ana"), "m", 1, _loader(rows, calls))
        query = first.parts[0][0].copy()
        top_first = first.nearest(query, 5, statuses=(Status.ACTIVE,), kinds=(), allowed_rowids=None, valid_at=0.0)
        second = cache.get("t", _where("ana"), "m", 1, _loader(rows, calls))
        assert second is first and len(second.parts) == 8 and len(calls) == 1
        matrix = np.concatenate(first.parts)
        if first.physical is not None:
            matrix = matrix[first.physical]
        assert np.array_equal(first.scores(query), np.einsum("ij,j->i", matrix, query))
        top = second.nearest(query, 5, statuses=(Status.ACTIVE,), kinds=(), allowed_rowids=None, valid_at=0.0)
        assert top == top_first
        best = int(np.argmax(first.scores(query)))
        assert top[0].id == first.ids[best] and top[0].score == pytest.approx(1.0, abs=1e-6)
        assert [hit.score for hit in top] == sorted((hit.score for hit in top), reverse=True)
        assert np.array_equal(first.row(best), matrix[best])


def test_nearest_applies_status_and_kind_filters():
    rows = _rows(10, seed=5)
    rows.statuses[3] = "deleted"  # record r4
    rows.kinds[4] = "rule"  # record r5
    entry = build_scope_vectors(1, rows)
    query = entry.row(3).copy()
    active = [hit.id for hit in entry.nearest(query, 10, statuses=(Status.ACTIVE,), kinds=(), allowed_rowids=None)]
    assert "r5" in active and "r4" not in active and len(active) == 9
    both = [hit.id for hit in entry.nearest(query, 10, statuses=(Status.ACTIVE, Status.DELETED), kinds=(Kind.FACT,),
                                            allowed_rowids=None)]
    assert both[0] == "r4" and "r5" not in both and len(both) == 9
