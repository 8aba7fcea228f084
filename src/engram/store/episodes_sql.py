"""Episode tables (threads, turns, consolidation state) on both backends.

As in governance_sql.py: SQL is built here once over a ``Dialect``; a backend runs
``apply_episodes`` inside its write transaction and mixes in ``EpisodeReads``,
supplying only ``_episode_rows(tenant, sql, params)``.

Turns get a per-tenant ``seq`` in commit order (writers of turns are serialised per
tenant: SQLite by its one writer, PostgreSQL by a transaction-level advisory lock),
so a consolidation watermark "every turn up to seq N" never skips a turn that
committed late.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..errors import ConflictError
from ..values.episodes import EpisodeWrites, Thread, ThreadQuery, Turn, TurnDraft, TurnQuery
from .codec import SEPARATOR, dumps, namespace_from_key, namespace_key, namespace_range
from .sql import Dialect, DialectTables, _check_stored

TURN_COLUMNS = ("seq", "namespace", "thread_id", "role", "name", "content", "message_id", "at", "metadata", "terms")
THREAD_COLUMNS = ("namespace", "id", "started_at", "last_at", "turns", "metadata", "episode_id", "summarized_at")

SQLITE_MIGRATION = """
CREATE TABLE threads (
    tenant TEXT NOT NULL,
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    started_at REAL NOT NULL,
    last_at REAL NOT NULL,
    turns INTEGER NOT NULL DEFAULT 0,
    metadata TEXT NOT NULL DEFAULT '{}',
    episode_id TEXT,
    summarized_at REAL,
    PRIMARY KEY (tenant, namespace, id)
);
CREATE INDEX threads_last ON threads (tenant, namespace, last_at);
CREATE TABLE turns (
    tenant TEXT NOT NULL,
    seq INTEGER NOT NULL,
    namespace TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    role TEXT NOT NULL,
    name TEXT,
    content TEXT NOT NULL,
    message_id TEXT,
    at REAL NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    terms TEXT NOT NULL,
    embedding_model TEXT,
    embedding BLOB,
    UNIQUE (tenant, seq)
);
CREATE INDEX turns_scope ON turns (tenant, namespace, seq);
CREATE INDEX turns_thread ON turns (tenant, namespace, thread_id, seq);
CREATE INDEX turns_at ON turns (tenant, at);
CREATE VIRTUAL TABLE turn_fts USING fts5 (terms, scope, tokenize = 'unicode61 remove_diacritics 0');
CREATE TABLE consolidation_state (
    tenant TEXT NOT NULL,
    namespace TEXT NOT NULL,
    watermark INTEGER NOT NULL DEFAULT 0,
    runs INTEGER NOT NULL DEFAULT 0,
    last_run_at REAL,
    lease_holder TEXT,
    lease_until REAL,
    PRIMARY KEY (tenant, namespace)
)
"""

POSTGRES_TABLES = ("threads", "turns", "consolidation_state")
POSTGRES_MIGRATION = """
CREATE TABLE {schema}.threads (
    tenant_id text COLLATE "C" NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    id text COLLATE "C" NOT NULL,
    started_at timestamptz NOT NULL,
    last_at timestamptz NOT NULL,
    turns integer NOT NULL DEFAULT 0,
    metadata jsonb NOT NULL DEFAULT '{{}}',
    episode_id text,
    summarized_at timestamptz,
    PRIMARY KEY (tenant_id, namespace, id)
);
CREATE INDEX threads_last ON {schema}.threads (tenant_id, namespace, last_at);
CREATE TABLE {schema}.turns (
    tenant_id text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    thread_id text COLLATE "C" NOT NULL,
    role text NOT NULL,
    name text,
    content text NOT NULL,
    message_id text,
    at timestamptz NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{{}}',
    terms text NOT NULL,
    tsv tsvector NOT NULL DEFAULT ''::tsvector,
    embedding_model text,
    embedding bytea,
    PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX turns_scope ON {schema}.turns (tenant_id, namespace, seq);
CREATE INDEX turns_thread ON {schema}.turns (tenant_id, namespace, thread_id, seq);
CREATE INDEX turns_at ON {schema}.turns (tenant_id, at);
CREATE INDEX turns_terms ON {schema}.turns USING gin (tsv);
CREATE TABLE {schema}.consolidation_state (
    tenant_id text COLLATE "C" NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    watermark bigint NOT NULL DEFAULT 0,
    runs integer NOT NULL DEFAULT 0,
    last_run_at timestamptz,
    lease_holder text,
    lease_until timestamptz,
    PRIMARY KEY (tenant_id, namespace)
);
"""


class Tables(DialectTables):
    def __init__(self, dialect: Dialect, prefix: str = "") -> None:
        super().__init__(dialect)
        self.threads = f"{prefix}threads"
        self.turns = f"{prefix}turns"
        self.state = f"{prefix}consolidation_state"


def as_time(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    return datetime.fromtimestamp(float(value), tz=UTC)


def _json(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    return dict(json.loads(value)) if isinstance(value, str) else dict(value)


def _subtree(t: Tables, namespace: tuple[str, ...], descendants: bool, alias: str = "") -> tuple[str, list[Any]]:
    if not descendants:
        return f" AND {alias}namespace = {t.p}", [namespace_key(namespace)]
    bounds = namespace_range(namespace)
    if bounds is None:
        return "", []
    return f" AND {alias}namespace >= {t.p} AND {alias}namespace < {t.p}", list(bounds)


# -- writes ----------------------------------------------------------------------------------


def check_episodes(writes: EpisodeWrites) -> None:
    for turn in writes.turns:
        _check_stored([turn.thread_id, turn.role, turn.content, turn.message_id, turn.name, *turn.namespace],
                      "turn")
        _check_stored(dict(turn.metadata), "turn metadata")
    for namespace, thread, meta in writes.thread_metadata:
        _check_stored([thread, *namespace], "thread")
        _check_stored(dict(meta), "thread metadata")


def apply_episodes(
    conn: Any, t: Tables, tenant: str, writes: EpisodeWrites, purged_scopes: Sequence[tuple[str, ...]]
) -> None:
    """Write a batch's episode rows inside the caller's transaction."""
    for namespace in purged_scopes:
        _purge_scope(conn, t, tenant, namespace)
    if writes.empty:
        return
    check_episodes(writes)
    if writes.turns:
        _insert_turns(conn, t, tenant, writes.turns)
    merged = "json_patch(metadata, ?)" if t.sqlite else "metadata || %s::jsonb"
    for namespace, thread, meta in writes.thread_metadata:  # merged into what the thread has
        conn.execute(
            f"UPDATE {t.threads} SET metadata = {merged} WHERE {t.tenant} = {t.p} AND namespace = {t.p} "
            f"AND id = {t.p}", (dumps(dict(meta)), tenant, namespace_key(namespace), thread))
    for v in writes.vectors:
        blob = np.asarray(v.vector, dtype=np.float32).tobytes()
        conn.execute(f"UPDATE {t.turns} SET embedding_model = {t.p}, embedding = {t.p} "
                     f"WHERE {t.tenant} = {t.p} AND seq = {t.p}", (v.model, blob, tenant, v.seq))
    for link in writes.episodes:
        conn.execute(
            f"UPDATE {t.threads} SET episode_id = {t.p}, summarized_at = {t.p} WHERE {t.tenant} = {t.p} "
            f"AND namespace = {t.p} AND id = {t.p}",
            (link.episode_id, t.time(link.at), tenant, namespace_key(link.namespace), link.thread_id))
    for move in writes.watermarks:
        _move_watermark(conn, t, tenant, move.namespace, move.expected, move.to, move.at)
    if writes.drop_before is not None:
        _drop_before(conn, t, tenant, writes.drop_before)


def _insert_turns(conn: Any, t: Tables, tenant: str, turns: Sequence[TurnDraft]) -> None:
    if not t.sqlite:  # one writer of turns per tenant at a time: seq order is commit order
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"engram.turns.{tenant}",))
    row = conn.execute(f"SELECT coalesce(max(seq), 0) FROM {t.turns} WHERE {t.tenant} = {t.p}", (tenant,)).fetchone()
    seq = int(row[0])
    threads: dict[tuple[str, str], list[TurnDraft]] = {}
    for turn in turns:
        seq += 1
        key = namespace_key(turn.namespace)
        values = (tenant, seq, key, turn.thread_id, turn.role, turn.name, turn.content, turn.message_id,
                  t.time(turn.at), dumps(dict(turn.metadata)), turn.terms)
        if t.sqlite:
            cur = conn.execute(f"INSERT INTO {t.turns} (tenant, {', '.join(TURN_COLUMNS)}) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
            conn.execute("INSERT INTO turn_fts (rowid, terms, scope) VALUES (?, ?, ?)",
                         (cur.lastrowid, turn.terms, scope_tokens(tenant, turn.namespace)))
        else:
            from .postgres_rows import lexeme, tsvector_text

            conn.execute(f"INSERT INTO {t.turns} (tenant_id, {', '.join(TURN_COLUMNS)}, tsv) "
                         "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s::tsvector)",
                         (*values, tsvector_text(dict.fromkeys(lexeme(w) for w in turn.terms.split()))))
        threads.setdefault((key, turn.thread_id), []).append(turn)
    for (key, thread), said in threads.items():
        first, last = min(s.at for s in said), max(s.at for s in said)
        conn.execute(
            f"INSERT INTO {t.threads} AS th ({t.tenant}, namespace, id, started_at, last_at, turns) "
            f"VALUES ({t.p}, {t.p}, {t.p}, {t.p}, {t.p}, {t.p}) ON CONFLICT ({t.tenant}, namespace, id) DO UPDATE SET "
            "started_at = CASE WHEN excluded.started_at < th.started_at THEN excluded.started_at "
            "ELSE th.started_at END, "
            "last_at = CASE WHEN excluded.last_at > th.last_at THEN excluded.last_at ELSE th.last_at END, "
            "turns = th.turns + excluded.turns",
            (tenant, key, thread, t.time(first), t.time(last), len(said)))


def _move_watermark(conn: Any, t: Tables, tenant: str, namespace: tuple[str, ...], expected: int, to: int,
                    at: datetime) -> None:
    key = namespace_key(namespace)
    found = conn.execute(
        f"UPDATE {t.state} SET watermark = {t.p}, runs = runs + 1, last_run_at = {t.p} "
        f"WHERE {t.tenant} = {t.p} AND namespace = {t.p} AND watermark = {t.p}",
        (to, t.time(at), tenant, key, expected))
    if found.rowcount == 1:
        return
    if expected == 0:
        inserted = conn.execute(
            f"INSERT INTO {t.state} ({t.tenant}, namespace, watermark, runs, last_run_at) "
            f"VALUES ({t.p}, {t.p}, {t.p}, 1, {t.p}) ON CONFLICT DO NOTHING", (tenant, key, to, t.time(at)))
        if inserted.rowcount == 1:
            return
    raise ConflictError(f"the consolidation watermark of {'/'.join(namespace) or '(root)'} moved meanwhile "
                        f"(expected {expected}): another run consolidated these turns")


def _purge_scope(conn: Any, t: Tables, tenant: str, namespace: tuple[str, ...]) -> None:
    """A user's purge takes their conversations too."""
    where, params = _subtree(t, namespace, True)
    if t.sqlite:
        conn.execute(f"DELETE FROM turn_fts WHERE rowid IN (SELECT rowid FROM turns WHERE tenant = ?{where})",
                     (tenant, *params))
    for table in (t.turns, t.threads, t.state):
        conn.execute(f"DELETE FROM {table} WHERE {t.tenant} = {t.p}{where}", (tenant, *params))
    if t.sqlite:  # FTS5 keeps deleted terms in its segments until they are merged (right to be forgotten)
        conn.execute("INSERT INTO turn_fts (turn_fts) VALUES ('optimize')")


def _drop_before(conn: Any, t: Tables, tenant: str, cutoff: datetime) -> None:
    moment = t.time(cutoff)
    if t.sqlite:
        conn.execute("DELETE FROM turn_fts WHERE rowid IN (SELECT rowid FROM turns WHERE tenant = ? AND at < ?)",
                     (tenant, moment))
    dropped = conn.execute(f"DELETE FROM {t.turns} WHERE {t.tenant} = {t.p} AND at < {t.p}", (tenant, moment))
    conn.execute(f"DELETE FROM {t.threads} WHERE {t.tenant} = {t.p} AND last_at < {t.p}", (tenant, moment))
    if t.sqlite and dropped.rowcount:  # dropped words leave the FTS5 segments too, as after a purge
        conn.execute("INSERT INTO turn_fts (turn_fts) VALUES ('optimize')")
    conn.execute(
        f"UPDATE {t.threads} AS th SET turns = (SELECT count(*) FROM {t.turns} u WHERE u.{t.tenant} = th.{t.tenant} "
        f"AND u.namespace = th.namespace AND u.thread_id = th.id) WHERE {t.tenant} = {t.p} AND started_at < {t.p}",
        (tenant, moment))


# -- reads -----------------------------------------------------------------------------------


def turn_from_row(tenant: str, row: Sequence[Any]) -> Turn:
    seq, namespace, thread_id, role, name, content, message_id, at, metadata, terms = row[:10]
    return Turn(tenant, int(seq), namespace_from_key(namespace), thread_id, role, content, _when(at),
                message_id, name, _json(metadata), terms)


def thread_from_row(tenant: str, row: Sequence[Any]) -> Thread:
    namespace, thread_id, started, last, turns, metadata, episode_id, summarized = row[:8]
    return Thread(tenant, namespace_from_key(namespace), thread_id, _when(started), _when(last),
                  int(turns), _json(metadata), episode_id, as_time(summarized))


def _when(value: Any) -> datetime:
    moment = as_time(value)
    assert moment is not None, "a NOT NULL time column read as NULL"
    return moment


class EpisodeReads:
    """Episode reads for a backend that supplies ``_episode_rows`` and ``_episode_tables``."""

    _episode_tables: Tables

    def _episode_rows(self, tenant: str | None, sql: str, params: Sequence[Any]) -> list[Any]:
        """Rows of one tenant's transaction (None: the read-only every-tenant read)."""
        raise NotImplementedError

    def episode_counts(self, tenant: str | None) -> dict[str, int]:
        """Threads and turns kept, of one tenant or (None) of every tenant."""
        t = self._episode_tables
        where, params = (f" WHERE {t.tenant} = {t.p}", [tenant]) if tenant else ("", [])
        threads = self._episode_rows(tenant, f"SELECT count(*) FROM {t.threads}{where}", params)[0][0]
        turns = self._episode_rows(tenant, f"SELECT count(*) FROM {t.turns}{where}", params)[0][0]
        return {"threads": int(threads), "turns": int(turns)}

    def turn_tenants(self) -> list[str]:
        t = self._episode_tables
        return [row[0] for row in self._episode_rows(None, f"SELECT DISTINCT {t.tenant} FROM {t.turns} ORDER BY 1", [])]

    def turns(self, tenant: str, query: TurnQuery) -> list[Turn]:
        t = self._episode_tables
        where, params = _subtree(t, query.namespace, query.descendants)
        sql = f"SELECT {', '.join(TURN_COLUMNS)} FROM {t.turns} WHERE {t.tenant} = {t.p}{where} AND seq > {t.p}"
        params = [tenant, *params, query.after_seq]
        if query.upto_seq is not None:
            sql += f" AND seq <= {t.p}"
            params.append(query.upto_seq)
        if query.thread_id is not None:
            sql += f" AND thread_id = {t.p}"
            params.append(query.thread_id)
        if query.seqs is not None:
            if not query.seqs:
                return []
            sql += f" AND seq IN ({', '.join([t.p] * len(query.seqs))})"
            params += list(query.seqs)
        if query.without_vector is not None:
            sql += f" AND (embedding_model IS NULL OR embedding_model != {t.p})"
            params.append(query.without_vector)
        sql += f" ORDER BY seq {'DESC' if query.newest_first else 'ASC'} LIMIT {t.p}"
        params.append(query.limit)
        return [turn_from_row(tenant, row) for row in self._episode_rows(tenant, sql, params)]

    def threads(self, tenant: str, query: ThreadQuery) -> list[Thread]:
        t = self._episode_tables
        where, params = _subtree(t, query.namespace, query.descendants)
        sql = f"SELECT {', '.join(THREAD_COLUMNS)} FROM {t.threads} WHERE {t.tenant} = {t.p}{where}"
        params = [tenant, *params]
        if query.ids is not None:
            if not query.ids:
                return []
            sql += f" AND id IN ({', '.join([t.p] * len(query.ids))})"
            params += list(query.ids)
        if query.idle_before is not None:
            sql += f" AND last_at < {t.p}"
            params.append(t.time(query.idle_before))
        if query.unsummarized:
            sql += " AND (episode_id IS NULL OR summarized_at <= last_at)"
        sql += f" ORDER BY last_at DESC, id LIMIT {t.p}"
        params.append(query.limit)
        return [thread_from_row(tenant, row) for row in self._episode_rows(tenant, sql, params)]

    def turn_candidates(self, tenant: str, namespace: tuple[str, ...], descendants: bool, terms: Sequence[str],
                        limit: int) -> list[Turn]:
        """Turns of the scope holding any of the terms, newest first (lexical candidates;
        the caller ranks them by BM25 over the scope's own statistics). Never ordered by a
        score of the shared index: FTS5's bm25() counts every tenant's turns, and another
        tenant's writes would change which of the caller's turns are read (issue 21 item 3)."""
        if not terms:
            return []
        t = self._episode_tables
        cols = ", ".join(f"u.{c}" for c in TURN_COLUMNS)
        where, params = _subtree(t, namespace, descendants, "u.")
        if t.sqlite:
            match = fts_match(list(terms), scope_token(tenant, namespace, exact=not descendants))
            sql = (f"SELECT {cols} FROM turn_fts JOIN turns u ON u.rowid = turn_fts.rowid "
                   f"WHERE turn_fts MATCH ? AND u.tenant = ?{where} ORDER BY u.seq DESC LIMIT ?")
            rows = self._episode_rows(tenant, sql, [match, tenant, *params, limit])
        else:
            from .postgres_rows import tsquery_text

            query = tsquery_text(list(terms))
            sql = (f"SELECT {cols} FROM {t.turns} u WHERE u.tenant_id = %s{where} AND u.tsv @@ %s::tsquery "
                   "ORDER BY u.seq DESC LIMIT %s")
            rows = self._episode_rows(tenant, sql, [tenant, *params, query, limit])
        return [turn_from_row(tenant, row) for row in rows]

    def turn_vectors(self, tenant: str, namespace: tuple[str, ...], descendants: bool,
                     model: str) -> dict[int, np.ndarray]:
        t = self._episode_tables
        where, params = _subtree(t, namespace, descendants)
        sql = (f"SELECT seq, embedding FROM {t.turns} WHERE {t.tenant} = {t.p}{where} "
               f"AND embedding_model = {t.p}")
        return {int(seq): np.frombuffer(bytes(blob), dtype=np.float32)
                for seq, blob in self._episode_rows(tenant, sql, [tenant, *params, model])}

    def turn_count(self, tenant: str, namespace: tuple[str, ...], descendants: bool) -> int:
        t = self._episode_tables
        where, params = _subtree(t, namespace, descendants)
        rows = self._episode_rows(tenant, f"SELECT count(*) FROM {t.turns} WHERE {t.tenant} = {t.p}{where}",
                                  [tenant, *params])
        return int(rows[0][0])

    def watermark(self, tenant: str, namespace: tuple[str, ...]) -> int:
        t = self._episode_tables
        rows = self._episode_rows(tenant, f"SELECT watermark FROM {t.state} WHERE {t.tenant} = {t.p} "
                                  f"AND namespace = {t.p}", [tenant, namespace_key(namespace)])
        return int(rows[0][0]) if rows else 0

    def turn_scopes(self, tenant: str) -> list[tuple[str, ...]]:
        """Every namespace holding turns (the scopes consolidation visits)."""
        t = self._episode_tables
        rows = self._episode_rows(tenant, f"SELECT DISTINCT namespace FROM {t.turns} WHERE {t.tenant} = {t.p} "
                                  "ORDER BY namespace", [tenant])
        return [namespace_from_key(row[0]) for row in rows]


# -- SQLite turn index: scope tokens inside the FTS5 rows, so a MATCH stays in its scope ----


def scope_token(tenant: str, namespace: tuple[str, ...], *, exact: bool) -> str:
    """An opaque ASCII token naming a scope (exact, or a prefix of namespaces below it)."""
    digest = hashlib.blake2b(f"{tenant}{SEPARATOR}{namespace_key(namespace)}".encode(), digest_size=8).hexdigest()
    return ("sx" if exact else "sp") + digest


def scope_tokens(tenant: str, namespace: tuple[str, ...]) -> str:
    """The exact token of the turn's namespace and a prefix token per ancestor."""
    prefixes = [scope_token(tenant, namespace[:depth], exact=False) for depth in range(len(namespace) + 1)]
    return " ".join([scope_token(tenant, namespace, exact=True), *prefixes])


def fts_match(terms: list[str], scope: str) -> str:
    """An FTS5 MATCH expression: the scope token AND any of the quoted terms."""
    quoted = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
    return f'scope : "{scope}" AND terms : ({quoted})'
