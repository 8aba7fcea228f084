"""The scale-out backend: PostgreSQL with pgvector, through psycopg 3 and a pool.

- Tenant isolation in the database: every transaction runs ``SET LOCAL
  engram.tenant`` and forced row-level security hides other tenants' rows even
  from a query that forgets its tenant condition (when the role is not a
  superuser and has no BYPASSRLS; the store still adds the condition itself).
- Lexical search ranks with FTS5's BM25 over the terms the SQLite backend
  indexes, with the tenant's document frequencies kept in a lexicon table.
- Vectors live in pgvector; each embedding model gets a partial HNSW index, and a
  scope small enough (``exact_threshold``) is searched exactly, so filtering by
  scope never loses recall.
- A lost connection raises ConnectionLostError (the server rolled the
  transaction back). Reads, and writes that had not sent anything yet, are
  retried with backoff while the pool reconnects, e.g. across a server restart.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections import Counter
from datetime import datetime, timedelta
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import psycopg
from psycopg import errors as pg_errors
from psycopg.types import TypeInfo
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool, PoolTimeout

from ..errors import ConflictError, ConnectionLostError, EngramError, InvalidValueError, StorageError
from ..model import AuditEvent, Job, JobStatus, MemoryRecord, Operation, Stats, Version, check_label
from . import postgres_rows as rows
from .base import AuditDraft, AuditQuery, OrderBy, RecordFilter, ScoredId, WriteBatch
from .codec import namespace_from_key, namespace_range
from .postgres_migrations import ALL_TENANTS, TENANT_SETTING, migrate
from .sql import POSTGRES, check_storable, filter_clause, pg_bm25, pg_create_vector_index, pg_nearest
from .sql import pg_vector_index_name

T = TypeVar("T")
log = logging.getLogger("engram.postgres")

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_HNSW_MAX_DIM = 2000  # pgvector's limit for indexing the vector type
_LOST_STATES = ("57P01", "57P02", "57P03")  # admin / crash shutdown, cannot connect now
_RETRIABLE = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


def _is_lost(exc: BaseException) -> bool:
    if isinstance(exc, PoolTimeout):
        return True
    if not isinstance(exc, psycopg.OperationalError) or isinstance(exc, _RETRIABLE):
        return False
    state = exc.sqlstate
    return state is None or state.startswith("08") or state in _LOST_STATES


def split_url(url: str) -> tuple[str, dict[str, str]]:
    """Take engram's own options (``engram_schema=…``) out of a postgresql:// URL."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {key[len("engram_"):]: value for key, value in query if key.startswith("engram_")}
    rest = [(key, value) for key, value in query if not key.startswith("engram_")]
    return urlunsplit(parts._replace(query=urlencode(rest))), ours


class _Stage:
    """How far a transaction got: only a loss before anything was sent, or before
    COMMIT, is known not to have committed."""

    def __init__(self) -> None:
        self.name = "connect"


class PostgresStore:
    dialect = "postgres"
    capabilities = frozenset(
        {"exact_vectors", "hnsw", "multi_process", "row_level_security", "connection_recovery"}
    )

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 10.0,
        retry_seconds: float = 15.0,
        exact_threshold: int = 20_000,
        ef_search: int = 100,
        hnsw_m: int = 16,
        hnsw_ef_construction: int = 64,
        connect_timeout: int = 5,
    ) -> None:
        conninfo, url_options = split_url(url)
        schema = schema or url_options.get("schema", "engram")
        if not _SCHEMA_NAME.match(schema):
            raise InvalidValueError(f"schema {schema!r} must be a lower-case SQL identifier")
        self.schema = schema
        self._s = f'"{schema}"'
        self.exact_threshold = int(url_options.get("exact_threshold", exact_threshold))
        self.ef_search = int(url_options.get("ef_search", ef_search))
        self._hnsw = (hnsw_m, hnsw_ef_construction)
        self._retry_seconds = retry_seconds
        self._indexes: dict[tuple[str, int], tuple[bool, float]] = {}
        self.vector_paths: Counter[str] = Counter()  # "hnsw", "exact", "fallback": how searches ran
        self._vector_info: TypeInfo | None = None
        self._closed = False
        kwargs = {"autocommit": True, "connect_timeout": connect_timeout, "application_name": "engram"}
        self._conninfo = conninfo
        self._connect_kwargs = kwargs
        migrate(conninfo, kwargs, schema)
        self._pool = ConnectionPool(
            conninfo, kwargs=kwargs, min_size=min_size, max_size=max_size, timeout=timeout,
            configure=self._configure, open=False, name=f"engram-{schema}",
        )
        try:
            self._pool.open(wait=True, timeout=timeout)
        except PoolTimeout as exc:
            self._pool.close()
            raise ConnectionLostError(f"cannot connect to PostgreSQL within {timeout}s") from exc

    # -- connections and transactions -------------------------------------------------------

    def _configure(self, conn: psycopg.Connection) -> None:
        from pgvector.psycopg.vector import register_vector_info

        if self._vector_info is None:
            self._vector_info = TypeInfo.fetch(conn, "vector")
        register_vector_info(conn, self._vector_info)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.close()

    def _transaction(self, tenant: str | None, work: Callable[[psycopg.Connection], T], *, write: bool) -> T:
        """Run ``work`` in one transaction with the tenant set (None: every tenant,
        read-only); retry what is safe."""
        if self._closed:
            raise StorageError("the store is closed")
        if tenant is None:
            tenant, write = ALL_TENANTS, False
        elif tenant:
            check_label(tenant, "tenant")  # never the wildcard, which holds a control character
        deadline = time.monotonic() + self._retry_seconds
        attempt = 0
        while True:
            stage = _Stage()
            try:
                return self._attempt(tenant, work, stage, read_only=not write)
            except EngramError:
                raise
            except _RETRIABLE as exc:
                if time.monotonic() > deadline:
                    raise ConflictError(f"gave up after repeated serialization failures: {exc}") from exc
            except (psycopg.Error, PoolTimeout) as exc:
                if not _is_lost(exc):
                    raise _translate(exc) from exc
                self._pool.check()
                safe = not write or stage.name == "connect"  # a write that sent nothing may run again
                if not safe or time.monotonic() > deadline:
                    raise _lost_error(exc, stage.name, write) from exc
                log.warning("PostgreSQL connection lost (%s); retrying", exc)
            attempt += 1
            time.sleep(min(0.05 * 2**attempt, 1.0) * (0.5 + random.random()))

    def _attempt(self, tenant: str, work: Callable[[psycopg.Connection], T], stage: _Stage, *, read_only: bool) -> T:
        with self._pool.connection() as conn:
            with conn.transaction():
                if read_only:
                    conn.execute("SET TRANSACTION READ ONLY")
                conn.execute("SELECT set_config(%s, %s, true)", (TENANT_SETTING, tenant))
                stage.name = "work"
                result = work(conn)
                stage.name = "commit"
            stage.name = "done"
            return result

    def _read(self, tenant: str | None, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self._transaction(tenant, lambda conn: conn.execute(sql, params).fetchall(), write=False)

    # -- writes ------------------------------------------------------------------------------

    def apply(self, batch: WriteBatch) -> None:
        check_storable(batch)
        for write in batch.records:
            if write.embedding is not None and write.record.embedding_model:
                self._ensure_vector_index(write.record.embedding_model, int(write.embedding.shape[0]))
        self._transaction(batch.tenant, lambda conn: self._apply(conn, batch), write=True)

    def _apply(self, conn: psycopg.Connection, batch: WriteBatch) -> None:
        tenant, s = batch.tenant, self._s
        ids = sorted({*batch.purge_ids, *(w.record.id for w in batch.records), *(t.record_id for t in batch.touches)})
        stored: dict[str, tuple[int, dict[str, int], int]] = {}
        if ids:  # lock every row the batch touches, in one order, so writers never deadlock
            found = conn.execute(
                f"SELECT id, version, tf, doc_len FROM {s}.memories WHERE tenant_id = %s AND id = ANY(%s) "
                "ORDER BY id FOR UPDATE",
                (tenant, ids),
            )
            stored = {row[0]: (row[1], row[2], row[3]) for row in found}
        delta = rows.LexiconDelta()
        if batch.purge_ids:
            for record_id in batch.purge_ids:
                if record_id in stored:
                    _, tf, length = stored.pop(record_id)
                    delta.add(tf, length, -1)
            purge = list(batch.purge_ids)
            conn.execute(f"DELETE FROM {s}.memories WHERE tenant_id = %s AND id = ANY(%s)", (tenant, purge))
            conn.execute(f"DELETE FROM {s}.memory_versions WHERE tenant_id = %s AND record_id = ANY(%s)",
                         (tenant, purge))
        inserts, updates = self._record_rows(batch, stored, delta)
        cur = conn.cursor()
        if inserts:
            cur.executemany(_INSERT.format(s=s), inserts)
        if updates:
            cur.executemany(_UPDATE.format(s=s), updates)
        if batch.versions:
            cur.executemany(
                f"INSERT INTO {s}.memory_versions (tenant_id, record_id, version, operation, actor, at, reason, "
                "snapshot) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [rows.version_params(tenant, v) for v in batch.versions],
            )
        if batch.touches:
            cur.executemany(
                f"UPDATE {s}.memories SET access_count = access_count + 1, "
                "last_accessed_at = greatest(last_accessed_at, %s) WHERE tenant_id = %s AND id = %s",
                [(t.at, tenant, t.record_id) for t in batch.touches],
            )
        if batch.jobs:
            cur.executemany(
                f"INSERT INTO {s}.jobs (tenant_id, id, status, payload, attempts, max_attempts, next_attempt_at, "
                "created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [rows.job_params(job) for job in batch.jobs],
            )
        if batch.audit:
            cur.executemany(
                f"INSERT INTO {s}.audit_log (tenant_id, at, actor, operation, record_id, version, namespace, "
                "source_message_id, detail) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [rows.audit_params(tenant, d) for d in batch.audit],
            )
        if not delta.empty:
            self._apply_lexicon(conn, tenant, delta)

    @staticmethod
    def _record_rows(
        batch: WriteBatch, stored: dict[str, tuple[int, dict[str, int], int]], delta: rows.LexiconDelta
    ) -> tuple[list[tuple], list[tuple]]:
        inserts, updates = [], []
        for write in batch.records:
            record = write.record
            current = stored.get(record.id)
            version = None if current is None else current[0]
            if version != write.expected_version:
                if write.expected_version is None:
                    raise ConflictError(f"record {record.id} already exists")
                raise ConflictError(
                    f"record {record.id} is at version {version}, expected {write.expected_version}: "
                    "it changed meanwhile"
                )
            params = rows.record_params(write)
            tf = params[_TF].obj
            length = params[_DOC_LEN]
            if current is None:
                inserts.append(params)
                delta.add(tf, length, +1)
            else:
                updates.append((*params[2:], params[0], params[1]))
                delta.replace(current[1], current[2], tf, length)
            stored[record.id] = (record.version, tf, length)
        return inserts, updates

    def _apply_lexicon(self, conn: psycopg.Connection, tenant: str, delta: rows.LexiconDelta) -> None:
        s = self._s
        changed = sorted((term, d) for term, d in delta.df.items() if d)
        if changed:
            conn.execute(
                f"INSERT INTO {s}.lexicon AS l (tenant_id, term, df) "
                "SELECT %s, t, d FROM unnest(%s::text[], %s::bigint[]) AS x(t, d) ORDER BY t "
                "ON CONFLICT (tenant_id, term) DO UPDATE SET df = l.df + excluded.df",
                (tenant, [t for t, _ in changed], [d for _, d in changed]),
            )
            dropped = [t for t, d in changed if d < 0]
            if dropped:
                conn.execute(f"DELETE FROM {s}.lexicon WHERE tenant_id = %s AND term = ANY(%s) AND df <= 0",
                             (tenant, dropped))
        conn.execute(
            f"INSERT INTO {s}.tenant_state AS t (tenant_id, docs, total_len) VALUES (%s, %s, %s) "
            "ON CONFLICT (tenant_id) DO UPDATE SET docs = t.docs + excluded.docs, "
            "total_len = t.total_len + excluded.total_len",
            (tenant, delta.docs, delta.total_len),
        )

    # -- vector indexes ----------------------------------------------------------------------

    def _has_index(self, model: str, dim: int) -> bool:
        known = self._indexes.get((model, dim))
        if known is not None and (known[0] or time.monotonic() - known[1] < 60):
            return known[0]
        name = f"{self.schema}.{pg_vector_index_name(model, dim)}"
        exists = self._transaction(None, lambda c: c.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0],
                                   write=False) is not None
        self._indexes[(model, dim)] = (exists, time.monotonic())
        return exists

    def _ensure_vector_index(self, model: str, dim: int) -> None:
        """The first write of a model creates its partial HNSW index (if this role may)."""
        if dim > _HNSW_MAX_DIM or (model, dim) in self._indexes and self._indexes[(model, dim)][0]:
            return
        if self._has_index(model, dim):
            return
        sql = pg_create_vector_index(self._s, model, dim, *self._hnsw)
        try:
            with self._pool.connection() as conn:
                conn.execute(sql)
        except (pg_errors.InsufficientPrivilege, pg_errors.UniqueViolation, pg_errors.DuplicateTable) as exc:
            log.warning("no HNSW index for %s (%s); vector search stays exact", model, exc)
        except (psycopg.Error, PoolTimeout) as exc:
            raise _translate(exc) from exc
        self._indexes.pop((model, dim), None)

    # -- reads -------------------------------------------------------------------------------

    def get(self, tenant: str, ids: Sequence[str]) -> list[MemoryRecord]:
        wanted = [i for i in ids if isinstance(i, str) and "\x00" not in i]
        if not wanted:
            return []
        found = {
            rec.id: rec
            for rec in map(rows.record_from_row, self._read(
                tenant, f"SELECT {rows.SELECT_RECORD} FROM {self._s}.memories WHERE tenant_id = %s AND id = ANY(%s)",
                (tenant, wanted)))
        }
        return [found[i] for i in wanted if i in found]

    def query(
        self, tenant: str, where: RecordFilter, *, order: OrderBy = "created_at", limit: int = 100, offset: int = 0
    ) -> list[MemoryRecord]:
        if order not in ("created_at", "updated_at", "importance"):
            raise InvalidValueError(f"cannot order by {order!r}")
        clause, params = filter_clause(POSTGRES, tenant, where)
        direction = "DESC" if order == "importance" else "ASC"
        sql = (f"SELECT {rows.SELECT_RECORD} FROM {self._s}.memories WHERE {clause} "
               f"ORDER BY {order} {direction}, seq LIMIT %s OFFSET %s")
        return [rows.record_from_row(r) for r in self._read(tenant, sql, [*params, limit, offset])]

    def count(self, tenant: str, where: RecordFilter) -> int:
        clause, params = filter_clause(POSTGRES, tenant, where)
        return self._read(tenant, f"SELECT count(*) FROM {self._s}.memories WHERE {clause}", params)[0][0]

    def lexical(self, tenant: str, where: RecordFilter, terms: Sequence[str], limit: int) -> list[ScoredId]:
        lexemes = list(dict.fromkeys(rows.lexeme(t) for t in terms))
        if not lexemes or limit <= 0:
            return []
        clause, params = filter_clause(POSTGRES, tenant, where, alias="m")

        def work(conn: psycopg.Connection) -> list[tuple]:
            stats = conn.execute(
                f"SELECT s.docs, s.total_len, l.term, l.df FROM {self._s}.tenant_state s "
                f"JOIN {self._s}.lexicon l ON l.tenant_id = s.tenant_id AND l.term = ANY(%s) WHERE s.tenant_id = %s",
                (lexemes, tenant),
            ).fetchall()
            if not stats:
                return []
            docs, total_len = stats[0][0], stats[0][1]
            idf = {term: rows.bm25_idf(docs, df) for _, _, term, df in stats}
            found = [t for t in lexemes if t in idf]  # the query's order, as FTS5 sums phrases
            sql = pg_bm25(self._s, clause, len(found), rows.BM25_K1, rows.BM25_B)
            score_params = [value for t in found for value in (idf[t], t, t)]
            return conn.execute(sql, [*score_params, total_len / max(docs, 1), *params,
                                      rows.tsquery_text(found), limit]).fetchall()

        return [ScoredId(row[0], float(row[1])) for row in self._transaction(tenant, work, write=False)]

    def nearest(self, tenant: str, where: RecordFilter, model: str, vector: np.ndarray, limit: int) -> list[ScoredId]:
        if limit <= 0:
            return []
        vector = np.asarray(vector, dtype=np.float32)
        dim = int(vector.shape[0])
        clause, params = filter_clause(POSTGRES, tenant, where)
        indexed = dim <= _HNSW_MAX_DIM and self._has_index(model, dim)

        def work(conn: psycopg.Connection) -> list[tuple]:
            if indexed:
                size = conn.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM {self._s}.memories WHERE {clause} AND embedding_model = %s "
                    "LIMIT %s) AS scope", [*params, model, self.exact_threshold + 1],
                ).fetchone()[0]
                if size > self.exact_threshold:
                    conn.execute(f"SET LOCAL hnsw.ef_search = {min(max(self.ef_search, limit), 1000)}")
                    found = conn.execute(pg_nearest(self._s, clause, model, dim, indexed=True),
                                         [vector, *params, limit]).fetchall()
                    if len(found) >= min(limit, size):
                        self.vector_paths["hnsw"] += 1
                        return found
                    self.vector_paths["fallback"] += 1
                else:
                    self.vector_paths["exact"] += 1
            else:
                self.vector_paths["exact"] += 1
            return conn.execute(pg_nearest(self._s, clause, model, dim, indexed=False),
                                [vector, *params, limit]).fetchall()

        return [ScoredId(row[0], -float(row[1])) for row in self._transaction(tenant, work, write=False)]

    def vectors(self, tenant: str, ids: Sequence[str], model: str) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        sql = (f"SELECT id, embedding FROM {self._s}.memories WHERE tenant_id = %s AND embedding_model = %s "
               "AND id = ANY(%s) AND embedding IS NOT NULL")
        found = self._transaction(
            tenant, lambda conn: conn.execute(sql, (tenant, model, list(ids)), binary=True).fetchall(), write=False
        )
        return {row[0]: row[1].to_numpy().astype(np.float32, copy=True) for row in found}

    def versions(self, tenant: str, record_id: str) -> list[Version]:
        found = self._read(
            tenant,
            f"SELECT {rows.VERSION_COLUMNS} FROM {self._s}.memory_versions WHERE tenant_id = %s AND record_id = %s "
            "ORDER BY version",
            (tenant, record_id),
        )
        return [rows.version_from_row(row) for row in found]

    def audit(self, tenant: str, query: AuditQuery) -> list[AuditEvent]:
        sql = f"SELECT {rows.AUDIT_COLUMNS} FROM {self._s}.audit_log WHERE tenant_id = %s"
        params: list[Any] = [tenant]
        if query.record_id is not None:
            sql += " AND record_id = %s"
            params.append(query.record_id)
        if query.operation is not None:
            sql += " AND operation = %s"
            params.append(query.operation.value)
        if query.since is not None:
            sql += " AND at >= %s"
            params.append(POSTGRES.time_value(query.since))
        sql += " ORDER BY id LIMIT %s"
        return [rows.audit_from_row(row) for row in self._read(tenant, sql, [*params, query.limit])]

    def namespaces(self, tenant: str, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        sql = f"SELECT DISTINCT namespace FROM {self._s}.memories WHERE tenant_id = %s AND status != 'deleted'"
        params: list[Any] = [tenant]
        bounds = namespace_range(prefix)
        if bounds is not None:
            sql += " AND namespace >= %s AND namespace < %s"
            params += list(bounds)
        return [namespace_from_key(row[0]) for row in self._read(tenant, sql + " ORDER BY namespace", params)]

    def tenants(self) -> list[str]:
        sql = f"SELECT tenant_id FROM {self._s}.tenant_state WHERE docs > 0 ORDER BY tenant_id"
        return [row[0] for row in self._read(None, sql)]

    # -- background jobs ---------------------------------------------------------------------

    def claim_job(self, now: datetime, lease_seconds: float) -> Job | None:
        """Find due jobs with a read across tenants, then claim one inside its own
        tenant's transaction; the UPDATE re-checks that it is still due, so two
        workers never run the same job."""
        due = ("((status = 'queued' AND next_attempt_at <= %(now)s) "
               "OR (status = 'running' AND lease_until < %(now)s))")
        candidates = self._read(
            None,
            f"SELECT tenant_id, id FROM {self._s}.jobs WHERE {due} ORDER BY next_attempt_at LIMIT 8",
            {"now": now},
        )
        claim = (
            f"UPDATE {self._s}.jobs SET status = 'running', attempts = attempts + 1, lease_until = %(lease)s, "
            f"updated_at = %(now)s WHERE tenant_id = %(tenant)s AND id = %(id)s AND {due} RETURNING {rows.JOB_COLUMNS}"
        )
        lease = now + timedelta(seconds=lease_seconds)
        for tenant, job_id in candidates:
            found = self._transaction(
                tenant,
                lambda conn, t=tenant, j=job_id: conn.execute(
                    claim, {"now": now, "lease": lease, "tenant": t, "id": j}).fetchall(),
                write=True,
            )
            if found:
                return rows.job_from_row(found[0])
        return None

    def finish_job(
        self, tenant: str, job_id: str, status: JobStatus, at: datetime, *, error: str | None = None,
        result: dict[str, Any] | None = None, retry_at: datetime | None = None,
    ) -> None:
        if error is not None:
            error = error.replace("\x00", "\\x00").encode("utf-8", "replace").decode("utf-8")
        check_storable(WriteBatch(tenant, audit=(AuditDraft("worker", Operation.UPDATE, at, detail=result or {}),)))
        self._transaction(
            tenant,
            lambda conn: conn.execute(
                f"UPDATE {self._s}.jobs SET status = %s, last_error = coalesce(%s, last_error), result = %s, "
                "lease_until = NULL, next_attempt_at = coalesce(%s, next_attempt_at), updated_at = %s "
                "WHERE tenant_id = %s AND id = %s",
                (status.value, error, None if result is None else Jsonb(result), retry_at, at, tenant, job_id),
            ),
            write=True,
        )

    def jobs(self, tenant: str | None, statuses: Sequence[JobStatus] = (), limit: int = 100) -> list[Job]:
        sql, params = f"SELECT {rows.JOB_COLUMNS} FROM {self._s}.jobs WHERE true", []
        if tenant is not None:
            sql += " AND tenant_id = %s"
            params.append(tenant)
        if statuses:
            sql += " AND status = ANY(%s)"
            params.append([JobStatus(s).value for s in statuses])
        found = self._read(tenant or None, sql + " ORDER BY created_at DESC LIMIT %s", [*params, limit])
        return [rows.job_from_row(row) for row in found]

    def stats(self, tenant: str | None = None) -> Stats:
        return self._transaction(tenant or None, lambda conn: self._stats(conn, tenant), write=False)

    def _stats(self, conn: psycopg.Connection, tenant: str | None) -> Stats:
        s = self._s
        where, params = ("WHERE tenant_id = %s", [tenant]) if tenant else ("", [])

        def pairs(sql: str) -> dict[str, int]:
            return {key: count for key, count in conn.execute(sql, params).fetchall()}

        by_status = pairs(f"SELECT status, count(*) FROM {s}.memories {where} GROUP BY status")
        by_kind = pairs(f"SELECT kind, count(*) FROM {s}.memories {where} GROUP BY kind")
        models = pairs(f"SELECT coalesce(embedding_model, ''), count(*) FROM {s}.memories {where} GROUP BY 1")
        versions = conn.execute(f"SELECT count(*) FROM {s}.memory_versions {where}", params).fetchone()[0]
        audits = conn.execute(f"SELECT count(*) FROM {s}.audit_log {where}", params).fetchone()[0]
        tenants = conn.execute(f"SELECT count(DISTINCT tenant_id) FROM {s}.memories {where}", params).fetchone()[0]
        size, schema_version, rls = conn.execute(
            f"SELECT pg_total_relation_size('{s}.memories'), (SELECT max(version) FROM {s}.engram_migrations), "
            "(SELECT NOT (rolsuper OR rolbypassrls) FROM pg_roles WHERE rolname = current_user)"
        ).fetchone()
        return Stats(
            records=sum(by_status.values()),
            active=by_status.get("active", 0),
            by_status=by_status,
            by_kind=by_kind,
            versions=versions,
            audit_events=audits,
            tenants=tenants,
            embedding_models=models,
            extra={"schema": self.schema, "bytes_on_disk": size, "schema_version": schema_version,
                   "row_level_security_enforced": rls},
        )

    def schema_version(self) -> int:
        return self._read(None, f"SELECT max(version) FROM {self._s}.engram_migrations")[0][0]

    def execute_raw(self, sql: str, params: Sequence[Any] = (), *, tenant: str = "") -> list[tuple]:
        """For tests and tooling: run SQL as is (no tenant condition is added) in a
        transaction whose ``engram.tenant`` is ``tenant`` ("": no tenant, so row-level
        security shows nothing)."""
        def work(conn: psycopg.Connection) -> list[tuple]:
            cur = conn.execute(sql, params or None)
            return cur.fetchall() if cur.description else []

        return self._transaction(tenant, work, write=True)


_TF = rows.WRITE_COLUMNS.index("tf")
_DOC_LEN = rows.WRITE_COLUMNS.index("doc_len")
_INSERT = (
    "INSERT INTO {s}.memories (" + ", ".join(rows.WRITE_COLUMNS) + ") VALUES ("
    + ", ".join("%s::tsvector" if c == "tsv" else "%s" for c in rows.WRITE_COLUMNS) + ")"
)
_UPDATE = (
    "UPDATE {s}.memories SET "
    + ", ".join(f"{c} = %s::tsvector" if c == "tsv" else f"{c} = %s" for c in rows.WRITE_COLUMNS[2:])
    + " WHERE tenant_id = %s AND id = %s"
)


def _translate(exc: BaseException) -> EngramError:
    if _is_lost(exc):
        return ConnectionLostError(f"lost the connection to PostgreSQL: {exc}")
    if isinstance(exc, pg_errors.UniqueViolation):
        return ConflictError(f"write conflicts with stored data: {exc.diag.message_primary or exc}")
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return StorageError(f"PostgreSQL refused: {exc}")
    return StorageError(f"PostgreSQL error: {exc}")


def _lost_error(exc: BaseException, stage: str, write: bool) -> ConnectionLostError:
    if write and stage == "commit":
        what = "the connection was lost during COMMIT: the write may or may not have been applied"
    elif write:
        what = "the connection was lost before COMMIT: nothing was written"
    else:
        what = "the connection was lost and did not come back in time"
    return ConnectionLostError(f"{what} ({exc})")
