"""The scale-out backend: PostgreSQL with pgvector, through psycopg 3 and a pool.

- Tenant isolation in the database: every transaction runs ``SET LOCAL
  engram.tenant`` and forced row-level security hides other tenants' rows even
  from a query that forgets its tenant condition (when the role is not a
  superuser and has no BYPASSRLS; the store still adds the condition itself).
- Lexical search ranks with FTS5's BM25 over the terms the SQLite backend
  indexes, with document frequencies kept per scope (tenant, namespace) so
  ranking in one scope never depends on another's data.
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import psycopg
from psycopg import errors as pg_errors
from psycopg import sql as pgsql
from psycopg.types import TypeInfo
from psycopg_pool import ConnectionPool, PoolTimeout

from ..errors import ConflictError, ConnectionLostError, EngramError, InvalidValueError, StorageError
from ..model import AuditEvent, Job, JobStatus, MemoryRecord, Stats, Version, check_label
from ..values.governance import PendingChange, PendingQuery, RecallEvent, RecallQuery, SampleQuery, WriteSample
from . import episodes_sql as episodes
from . import governance_sql as governance
from . import postgres_jobs as jobs
from . import postgres_rows as rows
from .base import AuditQuery, OrderBy, RankFields, RecordFilter, ScoredId, WriteBatch
from .codec import RANK_COLUMNS, namespace_from_key, namespace_key, namespace_range, rank_fields_from_rows
from .episodes_sql import POSTGRES_TABLES as EPISODE_TABLES
from .governance_sql import POSTGRES_TABLES as GOVERNANCE_TABLES
from .postgres_migrations import ALL_TENANTS, TENANT_SETTING, migrate
from .postgres_writes import apply_batch
from .sql import (
    POSTGRES,
    audit_conditions,
    check_storable,
    filter_clause,
    hnsw_count_cap,
    hnsw_ef,
    order_clause,
    pg_bm25,
    pg_create_vector_index,
    pg_nearest,
    pg_vector_index_name,
)

T = TypeVar("T")
log = logging.getLogger("engram.postgres")

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_HNSW_MAX_DIM = 2000  # pgvector's limit for indexing the vector type
_BUILD_MEMORY = "256MB"  # maintenance_work_mem for building an HNSW index after a bulk load
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


def _one(cursor: psycopg.Cursor[Any]) -> tuple[Any, ...]:
    """The one row a query always returns (an aggregate, a function call)."""
    row = cursor.fetchone()
    if row is None:
        raise StorageError("PostgreSQL returned no row where one was expected")
    return row


class PostgresStore(episodes.EpisodeReads):
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
        prepare_threshold: int | None = 5,
        hnsw: bool = True,
    ) -> None:
        conninfo, url_options = split_url(url)
        schema = schema or url_options.get("schema", "engram")
        if not _SCHEMA_NAME.match(schema):
            raise InvalidValueError(f"schema {schema!r} must be a lower-case SQL identifier")
        self.url = url
        self.schema = schema
        self._s = f'"{schema}"'
        self._governance = governance.Tables(POSTGRES, f"{self._s}.")
        self._episode_tables = episodes.Tables(POSTGRES, f"{self._s}.")
        self.exact_threshold = int(url_options.get("exact_threshold", exact_threshold))
        self.ef_search = int(url_options.get("ef_search", ef_search))
        self._hnsw = (hnsw_m, hnsw_ef_construction)
        # Without HNSW every vector search is exact: writes skip the index upkeep, which
        # dominates their cost; right when searches stay within scopes of thousands.
        self.hnsw = url_options.get("hnsw", "on" if hnsw else "off").lower() not in ("off", "false", "0", "no")
        self._retry_seconds = retry_seconds
        self._indexes: dict[tuple[str, int], tuple[bool, float]] = {}
        self.vector_paths: Counter[str] = Counter()  # "hnsw", "exact", "fallback": how searches ran
        self._vector_info: TypeInfo | None = None
        self._index_sizes: dict[tuple[str, int], tuple[int, float]] = {}  # (model, dim): (rows, when read)
        self._iterative: bool | None = None  # pgvector >= 0.8: HNSW scans go on until the filter is filled
        self._closed = False
        kwargs = {"autocommit": True, "connect_timeout": connect_timeout, "application_name": "engram",
                  "prepare_threshold": prepare_threshold}  # None: no server-side prepared statements
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
        """Teach each new connection the vector type (looked up once per store)."""
        try:
            from pgvector.psycopg.vector import register_vector_info
        except ImportError:  # older pgvector-python: one lookup per connection
            from pgvector.psycopg import register_vector

            register_vector(conn)
            return
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
        # BEGIN and the tenant in one round trip. A SET LOCAL statement, not set_config(),
        # so that Citus forwards it to the shards (citus.propagate_set_commands = 'local').
        # A read runs in one snapshot (REPEATABLE READ): reads that combine several
        # statements, such as BM25's statistics and postings, see one moment (issue 21
        # item 2). A read-only transaction never fails to serialize.
        begin = pgsql.SQL("BEGIN{}; SET LOCAL {} = {}").format(
            pgsql.SQL(" ISOLATION LEVEL REPEATABLE READ READ ONLY" if read_only else ""),
            pgsql.SQL(TENANT_SETTING), pgsql.Literal(tenant)
        )
        with self._pool.connection() as conn:
            conn.execute(begin)
            stage.name = "work"
            try:
                result = work(conn)
            except BaseException:
                _rollback(conn)
                raise
            stage.name = "commit"
            conn.execute("COMMIT")
            stage.name = "done"
            return result

    def _read(self, tenant: str | None, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple]:
        return self._transaction(tenant, lambda conn: conn.execute(sql, params).fetchall(), write=False)

    # -- writes ------------------------------------------------------------------------------

    def apply(self, batch: WriteBatch) -> None:
        check_storable(batch)
        for write in batch.records:
            if write.embedding is not None and write.record.embedding_model:
                self._ensure_vector_index(write.record.embedding_model, int(write.embedding.shape[0]))
        self._transaction(batch.tenant, lambda conn: apply_batch(conn, self._s, batch), write=True)

    # -- vector indexes ----------------------------------------------------------------------

    def _has_index(self, model: str, dim: int) -> bool:
        known = self._indexes.get((model, dim))
        if known is not None and (known[0] or time.monotonic() - known[1] < 60):
            return known[0]
        name = f"{self.schema}.{pg_vector_index_name(model, dim)}"
        exists = self._transaction(None, lambda c: _one(c.execute("SELECT to_regclass(%s)", (name,)))[0],
                                   write=False) is not None
        self._indexes[(model, dim)] = (exists, time.monotonic())
        return exists

    def _index_rows(self, conn: psycopg.Connection, model: str, dim: int) -> int:
        """The rows the model's HNSW index holds, as the planner's statistics say (the table's
        estimate when larger: an index not analyzed since a load undercounts); cached 60 s."""
        known = self._index_sizes.get((model, dim))
        if known is not None and time.monotonic() - known[1] < 60:
            return known[0]
        found = conn.execute(
            "SELECT greatest(coalesce((SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)), 0), "
            "coalesce((SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)), 0))",
            (f"{self.schema}.{pg_vector_index_name(model, dim)}", f"{self.schema}.memories")).fetchone()
        rows = max(int(found[0]) if found else 0, 0)
        self._index_sizes[(model, dim)] = (rows, time.monotonic())
        return rows

    def _iterative_scans(self, conn: psycopg.Connection) -> bool:
        """Whether the server's pgvector has iterative index scans (0.8.0 on): a filtered
        HNSW search then keeps walking the graph until ``limit`` rows pass the filter,
        instead of returning the few of its ef_search nearest that do."""
        if self._iterative is None:
            found = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            version = tuple(int(part) for part in re.findall(r"\d+", found[0])[:2]) if found else (0, 0)
            self._iterative = version >= (0, 8)
        return self._iterative

    def _ensure_vector_index(self, model: str, dim: int) -> None:
        """The first write of a model creates its partial HNSW index (if this role may)."""
        if not self.hnsw or dim > _HNSW_MAX_DIM or ((model, dim) in self._indexes and self._indexes[(model, dim)][0]):
            return
        if self._has_index(model, dim):
            return
        sql = pg_create_vector_index(self._s, model, dim, *self._hnsw)
        try:
            with self._pool.connection() as conn:
                conn.execute(sql)
        except (pg_errors.InsufficientPrivilege, pg_errors.UniqueViolation, pg_errors.DuplicateTable) as exc:
            log.warning("no HNSW index for %s (%s); its vector search stays exact until an owner runs: %s",
                        model, exc, sql)
        except (psycopg.Error, PoolTimeout) as exc:
            raise _translate(exc) from exc
        self._indexes.pop((model, dim), None)

    @contextmanager
    def bulk_load(self, model: str, dim: int) -> Iterator[None]:
        """Load many records without per-row HNSW upkeep (the cost that caps steady writes
        at a few hundred per second): the model's HNSW index is dropped for the load and
        built once afterwards, which is several times faster than growing the graph row by
        row. Meanwhile vector searches of that model are exact (slower on large scopes,
        never wrong). Batches of 50 records or more go through COPY either way."""
        index = f"{self._s}.{pg_vector_index_name(model, dim)}"
        try:
            with self._pool.connection() as conn:
                conn.execute(f"DROP INDEX IF EXISTS {index}")
        except (psycopg.Error, PoolTimeout) as exc:
            raise _translate(exc) from exc
        self._indexes[(model, dim)] = (False, time.monotonic())
        building = self.hnsw
        self.hnsw = False  # no index creation by the load's first write
        try:
            yield
        finally:
            self.hnsw = building
            if building and dim <= _HNSW_MAX_DIM:
                try:
                    with self._pool.connection() as conn:
                        conn.execute(f"SET maintenance_work_mem = '{_BUILD_MEMORY}'")
                        conn.execute(pg_create_vector_index(self._s, model, dim, *self._hnsw))
                        conn.execute("RESET maintenance_work_mem")
                except (psycopg.Error, PoolTimeout) as exc:
                    raise _translate(exc) from exc
            self._indexes.pop((model, dim), None)

    def erase_traces(self) -> str | None:
        """PostgreSQL cannot overwrite deleted rows in place: say what finishes a purge."""
        return ("PostgreSQL keeps the purged rows' old versions in the table files until "
                "`store.vacuum(full=True)` (VACUUM FULL, docs/POSTGRES.md) rewrites them, and in its write-ahead log "
                "until checkpoints recycle it")

    def vacuum(self, *, full: bool = False) -> None:
        """Reclaim the dead row versions that updates and purges leave in the tables.
        ``full=True`` rewrites every table and index (an exclusive lock while it runs), so
        no byte of a purged record stays in the live files; a plain VACUUM only marks the
        space reusable. Needs the schema owner (or a superuser). The WAL keeps the old rows
        until checkpoints recycle it, archives and backups for their retention."""
        tables = ("memories", "memory_versions", "audit_log", "scope_lexicon", "scope_state", "jobs",
                  *GOVERNANCE_TABLES, *EPISODE_TABLES)
        option = "(FULL) " if full else ""
        try:
            with self._pool.connection() as conn:  # autocommit: VACUUM cannot run in a transaction
                for table in tables:
                    conn.execute(f"VACUUM {option}{self._s}.{table}")
        except (psycopg.Error, PoolTimeout) as exc:
            raise _translate(exc) from exc

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
        self, tenant: str, where: RecordFilter, *, order: OrderBy = "created_at", limit: int = 100, offset: int = 0,
        descending: bool | None = None,
    ) -> list[MemoryRecord]:
        clause, params = filter_clause(POSTGRES, tenant, where)
        sql = (f"SELECT {rows.SELECT_RECORD} FROM {self._s}.memories WHERE {clause} "
               f"{order_clause(order, descending, 'seq')} LIMIT %s OFFSET %s")
        return [rows.record_from_row(r) for r in self._read(tenant, sql, [*params, limit, offset])]

    def lexical(self, tenant: str, where: RecordFilter, terms: Sequence[str], limit: int) -> list[ScoredId]:
        lexemes = list(dict.fromkeys(rows.lexeme(t) for t in terms))
        if not lexemes or limit <= 0:
            return []
        clause, params = filter_clause(POSTGRES, tenant, where, alias="m")

        scope, scope_params = _scope_condition(where)

        def work(conn: psycopg.Connection) -> list[tuple]:
            # the statistics of the scopes this query covers, and of nothing else
            totals = _one(conn.execute(
                "SELECT coalesce(sum(docs), 0)::bigint, coalesce(sum(total_len), 0)::bigint "
                f"FROM {self._s}.scope_state WHERE tenant_id = %s{scope}", (tenant, *scope_params)))
            docs, total_len = totals if totals is not None else (0, 0)
            if not docs:
                return []
            df: dict[str, int] = dict(conn.execute(
                f"SELECT term, sum(df)::bigint FROM {self._s}.scope_lexicon WHERE tenant_id = %s AND term = ANY(%s)"
                f"{scope} GROUP BY term", (tenant, lexemes, *scope_params)).fetchall())
            idf = {term: rows.bm25_idf(docs, int(count)) for term, count in df.items() if count > 0}
            found = [t for t in lexemes if t in idf]  # the query's order, as FTS5 sums phrases
            if not found:
                return []
            sql = pg_bm25(self._s, clause, len(found), rows.BM25_K1, rows.BM25_B)
            score_params = [value for t in found for value in (idf[t], t, t)]
            return conn.execute(sql, [*score_params, total_len / docs, *params,
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
                index_rows = self._index_rows(conn, model, dim)
                cap = hnsw_count_cap(self.exact_threshold, index_rows, limit)
                size = _one(conn.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM {self._s}.memories WHERE {clause} AND embedding_model = %s "
                    "LIMIT %s) AS scope", [*params, model, cap + 1],
                ))[0]
                iterative = self._iterative_scans(conn)
                ef = hnsw_ef(size, index_rows, limit, self.ef_search, iterative=iterative) \
                    if size > self.exact_threshold else None
                if ef is not None:
                    conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
                    if iterative:
                        conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
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

    def rank_fields(self, tenant: str, ids: Sequence[str], model: str) -> RankFields:
        wanted = [i for i in dict.fromkeys(ids) if isinstance(i, str) and "\x00" not in i]
        if not wanted:
            return RankFields.concat([])
        found = self._read(tenant, f"SELECT {', '.join(RANK_COLUMNS)} FROM {self._s}.memories "
                                   "WHERE tenant_id = %s AND id = ANY(%s)", (tenant, wanted))
        return rank_fields_from_rows(found)

    def versions(self, tenant: str, record_id: str) -> list[Version]:
        found = self._read(
            tenant,
            f"SELECT {rows.VERSION_COLUMNS} FROM {self._s}.memory_versions WHERE tenant_id = %s AND record_id = %s "
            "ORDER BY version",
            (tenant, record_id),
        )
        return [rows.version_from_row(row) for row in found]

    def audit(self, tenant: str, query: AuditQuery) -> list[AuditEvent]:
        where, params = audit_conditions(POSTGRES, "tenant_id", tenant, query)
        sql = f"SELECT {rows.AUDIT_COLUMNS} FROM {self._s}.audit_log {where}"
        return [rows.audit_from_row(row) for row in self._read(tenant, sql, params)]

    def namespaces(self, tenant: str, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        sql = f"SELECT DISTINCT namespace FROM {self._s}.memories WHERE tenant_id = %s AND status != 'deleted'"
        params: list[Any] = [tenant]
        bounds = namespace_range(prefix)
        if bounds is not None:
            sql += " AND namespace >= %s AND namespace < %s"
            params += list(bounds)
        return [namespace_from_key(row[0]) for row in self._read(tenant, sql + " ORDER BY namespace", params)]

    def tenants(self) -> list[str]:
        sql = f"SELECT DISTINCT tenant_id FROM {self._s}.scope_state WHERE docs > 0 ORDER BY tenant_id"
        return [row[0] for row in self._read(None, sql)]

    # -- store-wide settings (no tenant: they describe the whole schema) ----------------------

    def meta(self, key: str) -> str | None:
        found = self._read(None, f"SELECT value FROM {self._s}.engram_meta WHERE key = %s", (key,))
        return found[0][0] if found else None

    def set_meta(self, key: str, value: str, *, only_if_absent: bool = False, expected: str | None = None) -> str:
        conflict = "DO NOTHING" if only_if_absent else "DO UPDATE SET value = excluded.value"
        insert = f"INSERT INTO {self._s}.engram_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) {conflict}"
        swap = f"UPDATE {self._s}.engram_meta SET value = %s WHERE key = %s AND value = %s"
        select = f"SELECT value FROM {self._s}.engram_meta WHERE key = %s"

        def work(conn: psycopg.Connection) -> str:
            if expected is not None:
                conn.execute(swap, (value, key, expected))
            else:
                conn.execute(insert, (key, value))
            found = conn.execute(select, (key,)).fetchone()
            return "" if found is None else str(found[0])

        return self._transaction("", work, write=True)

    # -- background jobs (postgres_jobs) -----------------------------------------------------

    def claim_job(self, now: datetime, lease_seconds: float) -> Job | None:
        return jobs.claim(self, now, lease_seconds)

    def finish_job(
        self, tenant: str, job_id: str, status: JobStatus, at: datetime, *, error: str | None = None,
        result: dict[str, Any] | None = None, retry_at: datetime | None = None,
    ) -> None:
        jobs.finish(self, tenant, job_id, status, at, error=error, result=result, retry_at=retry_at)

    def jobs(self, tenant: str | None, statuses: Sequence[JobStatus] = (), limit: int = 100) -> list[Job]:
        return jobs.listing(self, tenant, statuses, limit)

    def stats(self, tenant: str | None = None) -> Stats:
        return self._transaction(tenant or None, lambda conn: self._stats(conn, tenant), write=False)

    def _stats(self, conn: psycopg.Connection, tenant: str | None) -> Stats:
        s = self._s
        where, params = ("WHERE tenant_id = %s", [tenant]) if tenant else ("", [])

        def pairs(sql: str) -> dict[str, int]:
            return dict(conn.execute(sql, params).fetchall())

        by_status = pairs(f"SELECT status, count(*) FROM {s}.memories {where} GROUP BY status")
        by_kind = pairs(f"SELECT kind, count(*) FROM {s}.memories {where} GROUP BY kind")
        models = pairs(f"SELECT coalesce(embedding_model, ''), count(*) FROM {s}.memories {where} GROUP BY 1")
        versions = _one(conn.execute(f"SELECT count(*) FROM {s}.memory_versions {where}", params))[0]
        audits = _one(conn.execute(f"SELECT count(*) FROM {s}.audit_log {where}", params))[0]
        tenants = _one(conn.execute(f"SELECT count(DISTINCT tenant_id) FROM {s}.memories {where}", params))[0]
        size, schema_version, rls = _one(conn.execute(
            "SELECT (SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'), "
            f"(SELECT max(version) FROM {s}.engram_migrations), "
            "(SELECT NOT (rolsuper OR rolbypassrls) FROM pg_roles WHERE rolname = current_user)",
            (self.schema,),
        ))
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

    # -- governance (store/governance_sql.py) -------------------------------------------------

    def pending_changes(self, tenant: str | None, query: PendingQuery) -> list[PendingChange]:
        sql, params = governance.pending_select(self._governance, tenant, query)
        return [governance.pending_from_row(row) for row in self._read(tenant, sql, params)]

    def recalls(self, tenant: str, query: RecallQuery) -> list[RecallEvent]:
        sql, params = governance.recall_select(self._governance, tenant, query)
        return [governance.recall_from_row(row) for row in self._read(tenant, sql, params)]

    def write_samples(self, tenant: str, query: SampleQuery) -> list[WriteSample]:
        sql, params = governance.sample_select(self._governance, tenant, query)
        return [governance.sample_from_row(row) for row in self._read(tenant, sql, params)]

    # -- episodes (store/episodes_sql.py) --------------------------------------------------------

    def _episode_rows(self, tenant: str | None, sql: str, params: Sequence[Any]) -> list[Any]:
        return self._read(tenant, sql, params)

    @contextmanager
    def scope_lease(self, tenant: str, namespace: tuple[str, ...], holder: str, now: datetime,
                    seconds: float) -> Iterator[bool]:
        """A session advisory lock held on one pooled connection for the run: released
        when the run ends, or by the server when the holder's connection dies. The holder
        is also written in the scope's consolidation row while it runs: the run's writes
        check it is still there (a purge of the scope deletes it)."""
        if self._closed:
            raise StorageError("the store is closed")
        key = f"engram.consolidate.{self.schema}.{tenant}\x1f{namespace_key(namespace)}"
        scope_key, until = namespace_key(namespace), datetime.fromtimestamp(now.timestamp() + seconds, tz=now.tzinfo)
        with self._pool.connection() as conn:
            got = bool(_one(conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)))[0])
            try:
                if got:
                    self._transaction(tenant, lambda c: c.execute(
                        f"INSERT INTO {self._s}.consolidation_state AS s (tenant_id, namespace, lease_holder, "
                        "lease_until) VALUES (%s, %s, %s, %s) ON CONFLICT (tenant_id, namespace) DO UPDATE SET "
                        "lease_holder = excluded.lease_holder, lease_until = excluded.lease_until",
                        (tenant, scope_key, holder, until)), write=True)
                yield got
            finally:
                if got and not conn.broken:
                    if not self._closed:
                        self._transaction(tenant, lambda c: c.execute(
                            f"UPDATE {self._s}.consolidation_state SET lease_holder = NULL, lease_until = NULL "
                            "WHERE tenant_id = %s AND namespace = %s AND lease_holder = %s",
                            (tenant, scope_key, holder)), write=True)
                    conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))

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


def _scope_condition(where: RecordFilter) -> tuple[str, list[str]]:
    """The namespace condition on the statistics tables for the scopes a query covers."""
    if not where.descendants:
        return " AND namespace = %s", [namespace_key(where.namespace)]
    bounds = namespace_range(where.namespace)
    if bounds is None:
        return "", []
    return " AND namespace >= %s AND namespace < %s", list(bounds)


def _rollback(conn: psycopg.Connection) -> None:
    if not conn.broken and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        try:
            conn.execute("ROLLBACK")
        except psycopg.Error:
            pass  # the pool discards a connection it cannot reset


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
