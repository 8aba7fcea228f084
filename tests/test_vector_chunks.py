"""The SQLite backend's packed vector chunks (store/sqlite_vectors.py) always say what the
records say: after any mix of creates, batch writes, updates, forgets, expiries and
purges, each scope's chunks hold exactly the records with a vector, with their current
status, kind, thread, validity, importance and update time, and the vector each record
was last written with; every chunk holds at most CHUNK records and vector_slots names
the chunk of each."""

from __future__ import annotations

import random
import sqlite3
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from engram import FakeClock, FakeHashEmbedder, Memory, Scope, Source
from engram.store import sqlite_vectors as chunks
from engram.store.base import RecordFilter
from engram.store.sqlite import SQLiteStore


class _Spy:
    """The vector each record id was last written with (what store.apply was given)."""

    def __init__(self, store: SQLiteStore) -> None:
        self.last: dict[str, bytes | None] = {}
        self._apply = store.apply
        store.apply = self.apply  # type: ignore[method-assign]

    def apply(self, batch) -> None:
        self._apply(batch)
        for write in batch.records:
            self.last[write.record.id] = None if write.embedding is None else write.embedding.astype("<f4").tobytes()
        for record_id in batch.purge_ids:
            self.last.pop(record_id, None)


def _chunk_rows(path: str) -> list:
    with sqlite3.connect(path) as conn:
        rows = conn.execute(f"SELECT {', '.join(chunks.CHUNK_COLUMNS)} FROM vector_chunks ORDER BY key").fetchall()
        slots = dict(conn.execute("SELECT doc, chunk FROM vector_slots").fetchall())
        records = conn.execute(
            "SELECT rowid, id, embedding_model, status, kind, thread_id, valid_from, valid_to, expires_at, importance, "
            "updated_at FROM memories").fetchall()
    return [rows, slots, records]


def _check(path: str, spy: _Spy) -> int:
    rows, slots, records = _chunk_rows(path)
    held: dict[int, tuple] = {}
    for row in rows:
        chunk = chunks.decode(row)
        assert 0 < len(chunk.docs) <= chunks.CHUNK
        for doc, record_id, status, kind, thread, times, vector in zip(
                chunk.docs, chunk.ids, chunk.statuses, chunk.kinds, chunk.threads, chunk.times, chunk.vectors):
            assert doc not in held, "a record in two chunks"
            assert slots[doc] == chunk.key
            held[doc] = (record_id, chunk.model, status, kind, thread, tuple(times), vector)
    expected = {}
    for rowid, record_id, model, status, kind, thread, valid_from, valid_to, expires_at, importance, updated in records:
        if model is None:
            continue
        expected[rowid] = (record_id, model, status, kind, thread,
                           chunks.entry_times(valid_from, valid_to, expires_at, importance, updated),
                           spy.last[record_id])
    assert held == expected
    assert set(slots) == set(expected)
    return len(rows)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chunks_follow_every_kind_of_write(tmp_path, seed):
    path = str(tmp_path / "chunks.db")
    clock = FakeClock()
    memory = Memory(SQLiteStore(path), embedder=FakeHashEmbedder(), clock=clock)
    spy = _Spy(memory._store)
    rnd = random.Random(seed)
    scopes = [Scope.for_user("acme", "ana"), Scope.for_user("acme", "bob"), Scope("acme", ("users", "ana", "work")),
              Scope.for_user("globex", "ana")]
    live: list[tuple[str, Scope]] = []
    words = "tea coffee harbour friday report lyon piano chess garden train".split()
    try:
        for step in range(160):
            scope = rnd.choice(scopes)
            roll = rnd.random()
            text = " ".join(rnd.sample(words, 4)) + f" {step}"
            if roll < 0.15 or not live:
                batch = memory.remember_many([f"{text} {i}" for i in range(rnd.randint(2, 45))], scope)
                live += [(record.id, scope) for record in batch]
            elif roll < 0.45:
                thread = rnd.choice([None, "t1", "t2"])
                record = memory.remember(text, scope, importance=round(rnd.random(), 3),
                                         source=Source(actor="user", thread_id=thread))
                live.append((record.id, scope))
            elif roll < 0.65:
                record_id, where = rnd.choice(live)
                memory.update(record_id, where, content=text, importance=round(rnd.random(), 3))
            elif roll < 0.72:
                record_id, where = rnd.choice(live)
                memory.update(record_id, where, valid_to=clock.now() + timedelta(days=rnd.randint(1, 9)))
            elif roll < 0.85:
                record_id, where = rnd.choice(live)
                memory.forget(record_id, where)
            else:
                record_id, where = live.pop(rnd.randrange(len(live)))
                memory.purge(record_id, where)
            clock.advance(seconds=rnd.randint(1, 4000))
            if step % 20 == 0:
                _check(path, spy)
        assert _check(path, spy) > len(scopes)  # several chunks per scope by now
    finally:
        memory.close()


def test_a_cold_scope_and_a_cached_one_answer_alike(tmp_path):
    """The cache is built from the chunks; a store that never cached the scope and one that
    has it cached (then saw more writes) return the same neighbours and scores."""
    path = str(tmp_path / "alike.db")
    scope = Scope.for_user("acme", "ana")
    writer = Memory(SQLiteStore(path), embedder=FakeHashEmbedder())
    records = writer.remember_many([f"note {i} about tea and the harbour" for i in range(100)], scope)
    query = writer.embedder.embed(["tea harbour"], role="query")[0]
    where = RecordFilter(namespace=scope.namespace)
    warm = writer._store.nearest("acme", where, writer.embedder.name, query, 50)
    for record in records[:30]:
        writer.update(record.id, scope, content=f"{record.content} again")
    writer.forget(records[40].id, scope)
    after_writes = writer._store.nearest("acme", where, writer.embedder.name, query, 50)
    cold = SQLiteStore(path)
    try:
        assert cold.nearest("acme", where, writer.embedder.name, query, 50) == after_writes
        assert [hit.id for hit in warm] != [hit.id for hit in after_writes]  # the writes did move it
        vectors = cold.vectors("acme", [record.id for record in records[25:35]], writer.embedder.name)
        assert len(vectors) == 10
        again = writer._store.vectors("acme", list(vectors), writer.embedder.name)
        assert all(np.array_equal(vectors[key], again[key]) for key in vectors)
    finally:
        cold.close()
        writer.close()


def test_a_purged_records_vector_leaves_the_file(tmp_path):
    """Its chunk is rewritten without it and secure_delete zeroes the freed pages: the
    vector's bytes are nowhere in the file, while its chunk neighbours' still are."""
    path = str(tmp_path / "purge.db")
    scope = Scope.for_user("acme", "ana")
    memory = Memory(SQLiteStore(path), embedder=FakeHashEmbedder())
    try:
        words = "tea coffee harbour friday report lyon piano chess garden train museum salsa".split()
        records = memory.remember_many([" ".join(words[i:i + 3]) for i in range(10)], scope)
        vectors = memory._store.vectors("acme", [r.id for r in records], memory.embedder.name)
        gone, kept = vectors[records[4].id].tobytes(), vectors[records[5].id].tobytes()
        assert len({vector.tobytes() for vector in vectors.values()}) == 10  # all distinct
        memory.purge(records[4].id, scope)
        data = Path(path).read_bytes()
        assert kept in data and gone not in data
        assert records[4].id not in memory._store.vectors("acme", [records[4].id], memory.embedder.name)
    finally:
        memory.close()
