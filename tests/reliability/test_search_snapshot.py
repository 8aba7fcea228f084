"""Issue 21 item 2: a search reads the BM25 statistics (document count, lengths) and the
postings (document frequencies, term frequencies) from one snapshot. Before, they were
read in separate snapshots, and a writer committing between the two made
``idf = log((N - n + 0.5) / (n + 0.5))`` take the log of a negative number (an HTTP 500).

Deterministic: the test commits the other writer's records exactly between the store's
statistics read and its postings read (a hook on the store's own read), instead of
hoping a race lands there."""

from __future__ import annotations

import contextlib

import _common
import pytest

from engram import FakeHashEmbedder, Memory, Scope, Settings

SCOPE = Scope.for_user("acme", "ana")


def _open(url: str) -> Memory:
    return Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False))


def _after_statistics_read(store, hook) -> None:
    """Run ``hook`` once, right after the store read a scope's BM25 statistics."""
    fired = []

    def maybe_fire(sql: str) -> None:
        if not fired and "docs" in sql and ("FROM scopes" in sql or "scope_state" in sql):
            fired.append(sql)
            hook()

    if store.dialect == "sqlite":
        read = store._read

        def reading(sql, params=()):
            rows = read(sql, params)
            maybe_fire(sql)
            return rows

        store._read = reading
        return

    pool, connection = store._pool, store._pool.connection

    class Watched:
        def __init__(self, conn):
            self._conn = conn

        def execute(self, sql, *args, **kwargs):
            cursor = self._conn.execute(sql, *args, **kwargs)
            maybe_fire(sql if isinstance(sql, str) else str(sql))
            return cursor

        def __getattr__(self, name):
            return getattr(self._conn, name)

    @contextlib.contextmanager
    def watched(*args, **kwargs):
        with connection(*args, **kwargs) as conn:
            yield Watched(conn)

    pool.connection = watched


@pytest.mark.parametrize("verb", ["search", "context", "recall"])
def test_a_write_between_the_statistics_and_the_postings_never_breaks_a_search(backend_name, verb):
    target = _common.new_target(backend_name)
    try:
        with _open(target.url) as reader, _open(target.url) as writer:
            reader.remember("wibble is a word that appears once", SCOPE)
            _after_statistics_read(reader._store, lambda: writer.remember_many(
                [f"wibble wibble number {i}" for i in range(6)], SCOPE))
            if verb == "search":
                hits = reader.search("wibble", SCOPE, retriever="bm25")
                assert [h.record.content for h in hits] == ["wibble is a word that appears once"]
            elif verb == "context":
                assert reader.context("wibble", SCOPE).hits
            else:
                assert reader.recall("wibble", SCOPE).hits
            # the next search sees every record, scored from one consistent snapshot
            assert len(reader.search("wibble", SCOPE, retriever="bm25")) == 7
    finally:
        target.close()
