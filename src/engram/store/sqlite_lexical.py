"""Per-scope lexical postings and vectors of the SQLite backend; BM25 scored in SQL.

One B-tree row per (scope, term, record) holds the term frequency and the record's
length, so a user-scoped query reads only that user's postings (FTS5 kept one posting
list per term for the whole file, and a scoped query walked every user's), and the
statistics BM25 needs are the scope's own: ``scopes`` counts documents and
total length per (tenant, namespace); document frequencies are counted from the
postings of the scopes a query covers. Nothing of another tenant or scope reaches a
score. A purge deletes plain rows, which ``secure_delete`` overwrites in place.

Vectors live apart from the records, in a rowid table keyed by scope * 2**32 +
record: a cold scope's vectors are one range read of that scope's rows instead of
one seek per record through rows that also hold the text and metadata (a table
without rowid would push each 2 KB vector into an overflow page of its own).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import StorageError
from . import bm25
from .codec import namespace_from_key, namespace_range

_DOC_BITS = 32


def vector_key(scope: int, doc: int) -> int:
    if not 0 <= doc < 1 << _DOC_BITS:
        raise StorageError(f"record row {doc} is beyond what the vector table can key (2**32 rows per file)")
    return (scope << _DOC_BITS) | doc


def _scope_bounds(scope: int) -> tuple[int, int]:
    return scope << _DOC_BITS, (scope + 1) << _DOC_BITS


SCHEMA = """
CREATE TABLE scopes (
    id INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL,
    namespace TEXT NOT NULL,
    docs INTEGER NOT NULL DEFAULT 0,
    total_len INTEGER NOT NULL DEFAULT 0,
    UNIQUE (tenant, namespace)
);
CREATE TABLE lexical_postings (
    scope INTEGER NOT NULL,
    term TEXT NOT NULL,
    doc INTEGER NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (scope, term, doc)
) WITHOUT ROWID;
CREATE TABLE memory_vectors (key INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
ALTER TABLE memories ADD COLUMN terms TEXT
"""


def scope_id(conn: sqlite3.Connection, tenant: str, namespace: str) -> int:
    row = conn.execute("SELECT id FROM scopes WHERE tenant = ? AND namespace = ?",
                       (tenant, namespace)).fetchone()
    if row is not None:
        return int(row[0])
    return int(conn.execute("INSERT INTO scopes (tenant, namespace) VALUES (?, ?)",
                            (tenant, namespace)).lastrowid or 0)


class Indexer:
    """Collects a batch's postings, vectors and statistics changes, written at the end
    in one statement per table (and one update per scope) instead of per record."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._scopes: dict[tuple[str, str], int] = {}
        self._postings: list[tuple[int, str, int, int, int]] = []
        self._vectors: list[tuple[int, bytes]] = []
        self._stats: dict[int, list[int]] = {}

    def scope(self, tenant: str, namespace: str) -> int:
        key = (tenant, namespace)
        if key not in self._scopes:
            self._scopes[key] = scope_id(self.conn, tenant, namespace)
        return self._scopes[key]

    def add(self, doc: int, tenant: str, namespace: str, terms: str, embedding: bytes | None = None) -> None:
        """One record's postings (and vector), counted in its scope's statistics."""
        scope = self.scope(tenant, namespace)
        length = bm25.doc_length(terms, namespace_from_key(namespace))
        self._postings += [(scope, term, doc, tf, length) for term, tf in bm25.term_counts(terms).items()]
        if embedding is not None:
            self._vectors.append((vector_key(scope, doc), embedding))
        totals = self._stats.setdefault(scope, [0, 0])
        totals[0] += 1
        totals[1] += length

    def flush(self) -> None:
        conn = self.conn
        if self._postings:
            conn.executemany("INSERT INTO lexical_postings (scope, term, doc, tf, len) VALUES (?, ?, ?, ?, ?)",
                             self._postings)
        if self._vectors:
            conn.executemany("INSERT INTO memory_vectors (key, embedding) VALUES (?, ?)", self._vectors)
        conn.executemany("UPDATE scopes SET docs = docs + ?, total_len = total_len + ? WHERE id = ?",
                         [(docs, total, scope) for scope, (docs, total) in sorted(self._stats.items())])
        self._postings, self._vectors, self._stats = [], [], {}


def unindex(conn: sqlite3.Connection, doc: int) -> None:
    """Remove the postings and vector of the record stored at ``doc`` (before it changes or goes)."""
    row = conn.execute("SELECT tenant, namespace, terms FROM memories WHERE rowid = ?", (doc,)).fetchone()
    if row is None or row[2] is None:
        return
    tenant, namespace, terms = row
    scope = scope_id(conn, tenant, namespace)
    conn.execute("DELETE FROM memory_vectors WHERE key = ?", (vector_key(scope, doc),))
    counts = bm25.term_counts(terms)
    conn.executemany("DELETE FROM lexical_postings WHERE scope = ? AND term = ? AND doc = ?",
                     [(scope, term, doc) for term in counts])
    conn.execute("UPDATE scopes SET docs = docs - 1, total_len = total_len - ? WHERE id = ?",
                 (bm25.doc_length(terms, namespace_from_key(namespace)), scope))


Reader = Callable[[str, Sequence[Any]], list]


def scopes_of(read: Reader, tenant: str, namespace: tuple[str, ...], descendants: bool,
              exact_key: str) -> list[tuple[int, int, int]]:
    """(id, docs, total_len) of the scopes a query covers."""
    sql = "SELECT id, docs, total_len FROM scopes WHERE tenant = ?"
    params: list[Any] = [tenant]
    if not descendants:
        sql += " AND namespace = ?"
        params.append(exact_key)
    else:
        bounds = namespace_range(namespace)
        if bounds is not None:
            sql += " AND namespace >= ? AND namespace < ?"
            params += list(bounds)
    return [(row[0], row[1], row[2]) for row in read(sql, params)]


def search(read: Reader, scopes: list[tuple[int, int, int]], terms: Sequence[str], clause: str,
           params: Sequence[Any], limit: int) -> list[tuple[str, float]]:
    """(record id, BM25 score) best first, among the records that pass ``clause`` (on
    alias ``m``). IDFs and the average length come from the covered scopes alone."""
    unique = list(dict.fromkeys(terms))
    docs = sum(s[1] for s in scopes)
    if not unique or not scopes or docs <= 0 or limit <= 0:
        return []
    ids = [s[0] for s in scopes]
    scope_marks = ", ".join("?" * len(ids))
    term_marks = ", ".join("?" * len(unique))
    df = dict(read(
        f"SELECT term, count(*) FROM lexical_postings WHERE scope IN ({scope_marks}) AND term IN ({term_marks}) "
        "GROUP BY term", [*ids, *unique]))
    found = [t for t in unique if df.get(t)]
    if not found:
        return []
    avgdl = sum(s[2] for s in scopes) / docs
    weights = ", ".join("(?, ?)" for _ in found)
    # scores from the postings first (the scope's only), then the filter on those records:
    # CROSS JOIN keeps that order (SQLite would otherwise walk the scope's records and
    # probe the postings of each)
    sql = (
        f"WITH q (term, idf) AS (VALUES {weights}), "
        f"scored AS MATERIALIZED (SELECT p.doc AS doc, sum(q.idf * p.tf * {bm25.K1 + 1.0} / (p.tf + {bm25.K1} * "
        f"({1.0 - bm25.B} + {bm25.B} * p.len / ?))) AS score "
        f"FROM q CROSS JOIN lexical_postings p ON p.scope IN ({scope_marks}) AND p.term = q.term GROUP BY p.doc) "
        f"SELECT m.id, scored.score FROM scored CROSS JOIN memories m ON m.rowid = scored.doc WHERE {clause} "
        "ORDER BY scored.score DESC, m.id LIMIT ?"
    )
    weight_params = [value for t in found for value in (t, bm25.idf(docs, df[t]))]
    return [(row[0], float(row[1])) for row in read(sql, [*weight_params, avgdl, *ids, *params, limit])]


def migrate(conn: sqlite3.Connection) -> None:
    """Migration 6: move the lexical index from the file-wide FTS5 table to per-scope
    postings, with the terms each record was indexed with (kept in memories.terms so
    a later change can remove exactly those postings), move the vectors into their
    per-scope table, then drop the FTS5 table."""
    for statement in filter(str.strip, SCHEMA.split(";")):
        conn.execute(statement)
    # the FTS5 table's own rowid lookup: one seek per record
    conn.execute("UPDATE memories SET terms = "
                 "coalesce((SELECT f.terms FROM memory_fts f WHERE f.rowid = memories.rowid), '')")
    indexer = Indexer(conn)
    rows = conn.execute("SELECT rowid, tenant, namespace, terms FROM memories ORDER BY tenant, namespace")
    for count, (doc, tenant, namespace, terms) in enumerate(rows.fetchall(), start=1):
        indexer.add(doc, tenant, namespace, terms)
        if count % 5000 == 0:
            indexer.flush()
    indexer.flush()
    conn.execute(f"INSERT INTO memory_vectors (key, embedding) SELECT (s.id << {_DOC_BITS}) | m.rowid, m.embedding "
                 "FROM memories m JOIN scopes s ON s.tenant = m.tenant AND s.namespace = m.namespace "
                 "WHERE m.embedding IS NOT NULL ORDER BY s.id, m.rowid")
    conn.execute("UPDATE memories SET embedding = NULL WHERE embedding IS NOT NULL")
    conn.execute("DROP TABLE memory_fts")


def load_vectors(read: Reader, tenant: str, model: str, scopes: list[tuple[int, int, int]],
                 namespace_sql: str, namespace_params: Sequence[Any]) -> list[tuple]:
    """Rows in vector_cache.LOADED_COLUMNS order for the records of ``scopes`` with a
    vector of ``model``: one read of the scope's records, joined to each one's vector
    (one row per record: what costs a cold scope is rows through Python, not pages).
    Unordered: an ORDER BY here sorted 2 MB of vectors in a temporary B-tree (measured
    ~40 % of a cold load); the cache orders the rows by rowid itself."""
    if not scopes:
        return []
    return read(
        "SELECT m.rowid, m.id, m.status, m.kind, v.embedding, m.valid_from, m.valid_to, m.expires_at, "
        "m.importance, m.updated_at, m.thread_id FROM memories m "
        "JOIN scopes s ON s.tenant = m.tenant AND s.namespace = m.namespace "
        f"JOIN memory_vectors v ON v.key = (s.id << {_DOC_BITS}) | m.rowid "
        f"WHERE m.tenant = ? AND m.embedding_model = ?{namespace_sql}",
        [tenant, model, *namespace_params])


def vectors_of(read: Reader, tenant: str, model: str, ids: Sequence[str]) -> dict[str, bytes]:
    marks = ", ".join("?" * len(ids))
    return dict(read(
        "SELECT m.id, v.embedding FROM memories m JOIN scopes s ON s.tenant = m.tenant AND s.namespace = m.namespace "
        f"JOIN memory_vectors v ON v.key = (s.id << {_DOC_BITS}) | m.rowid "
        f"WHERE m.tenant = ? AND m.embedding_model = ? AND m.id IN ({marks})", [tenant, model, *ids]))
