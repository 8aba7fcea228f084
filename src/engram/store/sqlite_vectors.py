"""Vectors of the SQLite backend, packed per scope with what search filters and ranks on.

A scope's vectors of one model live in chunks of up to ``CHUNK`` records: one row
holds, as packed columns, the records' rowids, float32 vectors, validity windows,
importance and update times (float64), and their ids, statuses, kinds and threads
(JSON). A cold scope is then read in a few rows (1,000 records: 32 rows) and turned
into the per-scope cache (``vector_cache.ScopeVectors``) by concatenation, where the
per-record join read one row per record through Python (measured ~10x dearer:
docs/BENCHMARKS.md, issue 22). ``vector_slots`` says which chunk holds a record.

A chunk is rewritten whole when one of its records changes or goes (``secure_delete``
then overwrites the freed pages: a purged record's vector and id leave no trace); new
records fill the scope's last chunk of their model, then open the next one. The rows
are written with the record, in its transaction, so a read snapshot sees a chunk and
the records it describes as of one moment.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import StorageError

CHUNK = 32  # records per chunk: 1,000 records read in 32 rows; a single write rewrites <= 64 KB of 512-d vectors
_DOC_BITS = 32
TIME_FIELDS = ("valid_from", "valid_to", "expires_at", "importance", "updated_at")  # float64 columns, in this order

SCHEMA = """
CREATE TABLE vector_chunks (
    key INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    size INTEGER NOT NULL,
    docs BLOB NOT NULL,
    times BLOB NOT NULL,
    labels TEXT NOT NULL,
    vectors BLOB NOT NULL
);
CREATE TABLE vector_slots (doc INTEGER PRIMARY KEY, chunk INTEGER NOT NULL)
"""


def chunk_key(scope: int, number: int) -> int:
    return (scope << _DOC_BITS) | number


def scope_bounds(scope: int) -> tuple[int, int]:
    return scope << _DOC_BITS, (scope + 1) << _DOC_BITS


@dataclass(frozen=True, slots=True)
class VectorEntry:
    """What a chunk keeps of one record: written with the record, read by search."""

    id: str
    model: str
    status: str
    kind: str
    thread: str | None
    times: tuple[float, float, float, float, float]  # TIME_FIELDS; an open valid_to or expires_at is +inf
    vector: bytes  # little-endian float32


def entry_times(valid_from: float, valid_to: float | None, expires_at: float | None, importance: float,
                updated_at: float) -> tuple[float, float, float, float, float]:
    return (valid_from, math.inf if valid_to is None else valid_to, math.inf if expires_at is None else expires_at,
            float(importance), updated_at)


@dataclass(slots=True)
class Chunk:
    """One chunk decoded: parallel columns of its records."""

    key: int
    model: str
    docs: list[int]
    ids: list[str]
    statuses: list[str]
    kinds: list[str]
    threads: list[str | None]
    times: list[tuple[float, ...]]
    vectors: list[bytes]

    @classmethod
    def empty(cls, key: int, model: str) -> Chunk:
        return cls(key, model, [], [], [], [], [], [], [])

    def append(self, doc: int, entry: VectorEntry) -> None:
        self.docs.append(doc)
        self.ids.append(entry.id)
        self.statuses.append(entry.status)
        self.kinds.append(entry.kind)
        self.threads.append(entry.thread)
        self.times.append(entry.times)
        self.vectors.append(entry.vector)

    def without(self, docs: set[int]) -> Chunk:
        keep = [i for i, doc in enumerate(self.docs) if doc not in docs]

        def pick(values: list) -> list:
            return [values[i] for i in keep]

        return Chunk(self.key, self.model, pick(self.docs), pick(self.ids), pick(self.statuses), pick(self.kinds),
                     pick(self.threads), pick(self.times), pick(self.vectors))


def encode(chunk: Chunk) -> tuple[Any, ...]:
    """The row of a chunk: (key, model, size, docs, times, labels, vectors)."""
    labels = json.dumps({"id": chunk.ids, "status": chunk.statuses, "kind": chunk.kinds, "thread": chunk.threads},
                        ensure_ascii=False, separators=(",", ":"))
    times = np.array(chunk.times, dtype="<f8").reshape(len(chunk.docs), len(TIME_FIELDS))
    return (chunk.key, chunk.model, len(chunk.docs), np.array(chunk.docs, dtype="<i8").tobytes(), times.tobytes(),
            labels, b"".join(chunk.vectors))


def decode(row: Sequence[Any]) -> Chunk:
    """A row of CHUNK_COLUMNS as a chunk (the vectors split per record)."""
    key, model, size, docs, times, labels, vectors = row
    text = json.loads(labels)
    width = len(vectors) // size if size else 0
    return Chunk(key, model, np.frombuffer(docs, dtype="<i8").tolist(), text["id"], text["status"], text["kind"],
                 text["thread"], [tuple(t) for t in np.frombuffer(times, dtype="<f8").reshape(size, -1).tolist()],
                 [vectors[i * width:(i + 1) * width] for i in range(size)])


CHUNK_COLUMNS = ("key", "model", "size", "docs", "times", "labels", "vectors")
_CHUNK_SELECT = ", ".join(CHUNK_COLUMNS)


@dataclass(frozen=True, slots=True)
class PackedRows:
    """Chunks read for a search, as the columns the cache is built from (not decoded per record):
    docs int64, times (n, 5) float64, the label lists, and each chunk's float32 vectors
    (views of the blobs as read: no copy)."""

    docs: np.ndarray
    times: np.ndarray
    ids: list[str]
    statuses: list[str]
    kinds: list[str]
    threads: list[str | None]
    parts: list[np.ndarray]


def packed(rows: Sequence[Sequence[Any]]) -> PackedRows:
    """Chunk rows (CHUNK_COLUMNS) concatenated column by column: one ``frombuffer`` per
    column of the whole set, no per-record Python work but the JSON lists."""
    rows = [row for row in rows if row[2]]
    ids: list[str] = []
    statuses: list[str] = []
    kinds: list[str] = []
    threads: list[str | None] = []
    for row in rows:
        text = json.loads(row[5])
        ids += text["id"]
        statuses += text["status"]
        kinds += text["kind"]
        threads += text["thread"]
    count = len(ids)
    docs = np.frombuffer(b"".join(row[3] for row in rows), dtype="<i8").astype(np.int64, copy=False)
    times = np.frombuffer(b"".join(row[4] for row in rows), dtype="<f8").reshape(count, len(TIME_FIELDS))
    widths = {len(row[6]) // row[2] for row in rows}
    if len(widths) > 1:
        raise StorageError(f"vectors of one model with different widths in one scope: {sorted(widths)} bytes")
    width = widths.pop() // 4 if widths else 1
    parts = [np.frombuffer(row[6], dtype="<f4").reshape(row[2], width).astype(np.float32, copy=False)
             for row in rows] or [np.zeros((0, width), dtype=np.float32)]
    return PackedRows(docs, times.astype(np.float64, copy=False), ids, statuses, kinds, threads, parts)


Reader = Callable[[str, Sequence[Any]], list]


def read_scopes(read: Reader, scopes: Sequence[int], model: str) -> list:
    """The chunk rows of ``model`` in ``scopes`` (one range read of the primary key per scope)."""
    found: list = []
    for scope in scopes:
        low, high = scope_bounds(scope)
        found += read(f"SELECT {_CHUNK_SELECT} FROM vector_chunks WHERE key >= ? AND key < ? AND model = ?",
                      [low, high, model])
    return found


def vectors_of(read: Reader, tenant: str, model: str, ids: Sequence[str]) -> dict[str, bytes]:
    """The vectors of ``ids`` (records of ``tenant`` embedded by ``model``): their chunks, each read once."""
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    where = read(f"SELECT m.rowid, s.chunk FROM memories m JOIN vector_slots s ON s.doc = m.rowid "
                 f"WHERE m.tenant = ? AND m.embedding_model = ? AND m.id IN ({marks})", [tenant, model, *ids])
    chunks = sorted({row[1] for row in where})
    wanted = {row[0] for row in where}
    out: dict[str, bytes] = {}
    for start in range(0, len(chunks), 500):
        part = chunks[start:start + 500]
        for row in read(f"SELECT {_CHUNK_SELECT} FROM vector_chunks WHERE key IN ({', '.join('?' * len(part))})",
                        part):
            chunk = decode(row)
            for doc, record_id, vector in zip(chunk.docs, chunk.ids, chunk.vectors):
                if doc in wanted:
                    out[record_id] = vector
    return out


@dataclass
class ChunkWriter:
    """A batch's vector changes, applied at ``flush``: removals first (each chunk touched
    rewritten once), then additions appended to each scope's last chunk of their model."""

    conn: sqlite3.Connection
    _removed: set[int] = field(default_factory=set)
    _added: dict[tuple[int, str], list[tuple[int, VectorEntry]]] = field(default_factory=dict)

    def add(self, scope: int, doc: int, entry: VectorEntry) -> None:
        self._added.setdefault((scope, entry.model), []).append((doc, entry))

    def remove(self, doc: int) -> None:
        self._removed.add(doc)

    def flush(self) -> None:
        if self._removed:
            self._apply_removals(sorted(self._removed))
        for (scope, model), entries in self._added.items():
            self._append(scope, model, entries)
        self._removed, self._added = set(), {}

    def _apply_removals(self, docs: list[int]) -> None:
        conn = self.conn
        slots: dict[int, set[int]] = {}
        for start in range(0, len(docs), 500):
            part = docs[start:start + 500]
            marks = ", ".join("?" * len(part))
            for doc, chunk in conn.execute(f"SELECT doc, chunk FROM vector_slots WHERE doc IN ({marks})", part):
                slots.setdefault(chunk, set()).add(doc)
            conn.execute(f"DELETE FROM vector_slots WHERE doc IN ({marks})", part)
        for key, gone in sorted(slots.items()):
            row = conn.execute(f"SELECT {_CHUNK_SELECT} FROM vector_chunks WHERE key = ?", (key,)).fetchone()
            if row is None:
                continue
            kept = decode(row).without(gone)
            if kept.docs:
                conn.execute("UPDATE vector_chunks SET size = ?, docs = ?, times = ?, labels = ?, vectors = ? "
                             "WHERE key = ?", (*encode(kept)[2:], key))
            else:
                conn.execute("DELETE FROM vector_chunks WHERE key = ?", (key,))

    def _append(self, scope: int, model: str, entries: list[tuple[int, VectorEntry]]) -> None:
        conn = self.conn
        low, high = scope_bounds(scope)
        last = conn.execute(f"SELECT {_CHUNK_SELECT} FROM vector_chunks WHERE key >= ? AND key < ? AND model = ? "
                            "ORDER BY key DESC LIMIT 1", (low, high, model)).fetchone()
        top = conn.execute("SELECT max(key) FROM vector_chunks WHERE key >= ? AND key < ?", (low, high)).fetchone()[0]
        number = 0 if top is None else top - low + 1
        if number >= 1 << _DOC_BITS:
            raise StorageError(f"scope {scope} has used all {1 << _DOC_BITS} vector chunk numbers")
        chunk = decode(last) if last is not None and last[2] < CHUNK else None
        fresh = chunk is None
        if chunk is None:
            chunk, number = Chunk.empty(chunk_key(scope, number), model), number + 1
        slots: list[tuple[int, int]] = []
        for doc, entry in entries:
            if len(chunk.docs) >= CHUNK:
                self._store(chunk, fresh)
                chunk, number, fresh = Chunk.empty(chunk_key(scope, number), model), number + 1, True
            chunk.append(doc, entry)
            slots.append((doc, chunk.key))
        self._store(chunk, fresh)
        conn.executemany("INSERT INTO vector_slots (doc, chunk) VALUES (?, ?)", slots)

    def _store(self, chunk: Chunk, fresh: bool) -> None:
        row = encode(chunk)
        if fresh:
            self.conn.execute(f"INSERT INTO vector_chunks ({_CHUNK_SELECT}) VALUES (?, ?, ?, ?, ?, ?, ?)", row)
        else:
            self.conn.execute("UPDATE vector_chunks SET size = ?, docs = ?, times = ?, labels = ?, vectors = ? "
                              "WHERE key = ?", (*row[2:], row[0]))


def migrate(conn: sqlite3.Connection) -> None:
    """Migration 8: move the per-record vectors (memory_vectors) into per-scope chunks,
    in rowid order, then drop the per-record table."""
    for statement in filter(str.strip, SCHEMA.split(";")):
        conn.execute(statement)
    writer = ChunkWriter(conn)
    after = 0
    while True:
        rows = conn.execute(
            "SELECT m.rowid, s.id, m.id, m.embedding_model, m.status, m.kind, m.thread_id, m.valid_from, m.valid_to, "
            "m.expires_at, m.importance, m.updated_at, v.embedding FROM memories m "
            "JOIN scopes s ON s.tenant = m.tenant AND s.namespace = m.namespace "
            f"JOIN memory_vectors v ON v.key = (s.id << {_DOC_BITS}) | m.rowid "
            "WHERE m.rowid > ? AND m.embedding_model IS NOT NULL ORDER BY m.rowid LIMIT 2000", (after,)).fetchall()
        if not rows:
            break
        for (doc, scope, record_id, model, status, kind, thread, valid_from, valid_to, expires_at, importance,
             updated_at, vector) in rows:
            writer.add(scope, doc, VectorEntry(record_id, model, status, kind, thread,
                                               entry_times(valid_from, valid_to, expires_at, importance, updated_at),
                                               vector))
        writer.flush()
        after = rows[-1][0]
    conn.execute("DROP TABLE memory_vectors")
