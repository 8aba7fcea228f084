"""The embedded backend: one SQLite file in WAL mode, safe for several processes.

Vectors are float32, packed per scope in chunks beside the fields search filters and
ranks on (store/sqlite_vectors.py), and searched exactly with numpy inside the caller's
scope (so scoping never loses recall); a scope's columns are cached in memory
(store/vector_cache.py) and invalidated by a per-tenant write sequence, which other
processes bump too.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import numpy as np

from ..errors import (
    ConflictError,
    CorruptDatabaseError,
    MigrationError,
    NotAnEngramDatabaseError,
    ReadOnlyStoreError,
    StorageError,
    StorageFullError,
)
from ..model import AuditEvent, Job, JobStatus, MemoryRecord, Stats, Version
from ..values.governance import PendingChange, PendingQuery, RecallEvent, RecallQuery, SampleQuery, WriteSample
from . import episodes_sql as episodes
from . import erase_sql as erase
from . import governance_sql as governance
from . import sqlite_jobs as job_rows
from . import sqlite_lexical as lexical
from . import sqlite_rows as rows
from . import sqlite_vectors as vector_chunks
from .base import AuditQuery, OrderBy, RankFields, RecordFilter, ScoredId, WriteBatch
from .codec import RANK_COLUMNS, namespace_from_key, namespace_key, namespace_range, rank_fields_from_rows
from .sql import SQLITE, audit_conditions, check_storable, filter_clause, order_clause
from .sqlite_migrations import APPLICATION_ID, MIGRATIONS
from .sqlite_vectors import PackedRows, packed
from .vector_cache import VectorCache

T = TypeVar("T")
_BUSY_RETRIES = 8
_QUICK_CHECK_MAX_BYTES = 256 * 1024 * 1024  # files up to this size are checked whole when opened for writing
_PAGE_SIZE = 8192
_MMAP_MB = 1024
# What `engram stats` names as the vector read path: the same on every platform (standard sqlite3
# and numpy). Scoring a cold scope inside SQLite with sqlite-vec was measured no faster than
# reading its vectors row by row, and a second SQLite library in the process is unsafe on one
# file (docs/BENCHMARKS.md, issue 22): cold scopes are read as packed chunks instead.
READ_PATH = ("exact numpy search over a per-scope columnar cache, cold scopes read as packed "
             f"{vector_chunks.CHUNK}-record chunks (no SQLite extension needed)")


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # the original error is the one worth raising

_GOVERNANCE = governance.Tables(SQLITE)
_EPISODES = episodes.Tables(SQLITE)
_ERASE = erase.Tables(SQLITE)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def _file_is_read_only(path: str) -> bool:
    """An existing file this process may not write (or whose folder it may not write:
    the WAL and its index live beside it) is opened read-only."""
    if path == ":memory:" or not os.path.exists(path):
        return False
    folder = os.path.dirname(os.path.abspath(path))
    return not (os.access(path, os.W_OK) and os.access(folder, os.W_OK))


class SQLiteStore(episodes.EpisodeReads):
    dialect = "sqlite"
    capabilities = frozenset({"exact_vectors", "multi_process"})

    def __init__(
        self, path: str | os.PathLike[str], *, busy_timeout_ms: int = 30_000, cache_mb: int = 512,
        read_only: bool | None = None, mmap_mb: int = _MMAP_MB,
    ) -> None:
        """``read_only``: None opens a file this process cannot write read-only (reads
        work, every write raises ReadOnlyStoreError); True forces it; False never.
        ``mmap_mb``: how much of the file SQLite reads through a memory map (0: none)."""
        self.path = str(path)
        if self.path != ":memory:":
            self.path = str(Path(self.path).expanduser())
        self.read_only = _file_is_read_only(self.path) if read_only is None else read_only
        if self.read_only and not os.path.exists(self.path):
            raise StorageError(f"cannot open {self.path} read-only: no such file")
        if self.path != ":memory:" and not self.read_only:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._busy_timeout_ms = busy_timeout_ms
        self._mmap_bytes = max(int(mmap_mb), 0) * 1024 * 1024
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._immutable = False  # read-only files opened without their WAL index (see _connect)
        self._owed_checkpoint = False  # a purge's WAL not emptied yet (a reader held it)
        self._corrupt: str | None = None  # why the file is known damaged: every write is refused
        # an empty file that was there before: never silently made into a store (issue 21 item 8)
        self._empty_before = self.path != ":memory:" and os.path.isfile(self.path) and not os.path.getsize(self.path)
        self._vectors = VectorCache(max_bytes=cache_mb * 1024 * 1024)
        # ":memory:" is one database for all of this store's connections (one per thread),
        # with SQLite's ordinary locking (the memdb VFS); it lives until the store closes
        self._memdb = f"file:/engram-{uuid.uuid4().hex}?vfs=memdb"
        self._connection()
        if not self.read_only:
            self._check_not_corrupt()
        self._migrate()

    # -- connections -------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise StorageError("the store is closed")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = self._open_connection()
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            try:
                self._retry_busy(lambda: self._check_is_engram(conn))
            except StorageError as exc:
                if isinstance(exc, NotAnEngramDatabaseError) or not (self.read_only and self._can_be_immutable()):
                    raise
                # a WAL database on a read-only mount, closed cleanly: SQLite cannot create
                # its -shm index there, and with no WAL to read nothing needs one
                conn.close()
                self._immutable = True
                conn = self._open_connection()
                self._retry_busy(lambda: self._check_is_engram(conn))
            if self._empty_before:
                self._refuse_an_empty_file(conn)
            if not self.read_only:
                # a new file: 8 KiB pages hold three 512-d float32 vectors where 4 KiB pages hold one
                # (a no-op once the file has tables)
                conn.execute(f"PRAGMA page_size = {_PAGE_SIZE}")
                # switching a new file to WAL takes an exclusive lock that skips the busy
                # handler: several processes opening it at once must retry
                self._retry_busy(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
            conn.execute("PRAGMA synchronous = NORMAL")
            # a cold scope's vectors are read from mapped pages instead of copied through
            # read(): those pages are the OS page cache's (file-backed, shared, reclaimable),
            # which benchmarks report apart from the process's own (anonymous) memory
            conn.execute(f"PRAGMA mmap_size = {self._mmap_bytes}")
            conn.execute("PRAGMA foreign_keys = ON")
            # a purge overwrites what it deletes (issue 11: the right to be forgotten)
            conn.execute("PRAGMA secure_delete = ON")
        except sqlite3.DatabaseError as exc:
            if "malformed" in str(exc):
                raise CorruptDatabaseError(f"{self.path} is damaged ({exc}): engram will not write to it") from exc
            if "not a database" in str(exc):
                raise NotAnEngramDatabaseError(f"{self.path} is not a SQLite database") from exc
            raise StorageError(f"cannot open {self.path}: {exc}") from exc
        return conn

    def _open_connection(self) -> sqlite3.Connection:
        if self.read_only:
            target = f"file:{quote(self.path)}?mode=ro" + ("&immutable=1" if self._immutable else "")
        elif self.path == ":memory:":  # every thread's connection reaches the same database
            target = self._memdb
        else:
            target = self.path
        conn = sqlite3.connect(target, timeout=self._busy_timeout_ms / 1000, isolation_level=None,
                               check_same_thread=False, uri=self.read_only or self.path == ":memory:")
        conn.row_factory = sqlite3.Row
        return conn

    def _refuse_an_empty_file(self, conn: sqlite3.Connection) -> None:
        """A 0-byte file found at open: another process creating a store there writes its
        header within moments (then go on); a file that stays empty is not a store."""
        deadline = time.monotonic() + min(self._busy_timeout_ms / 1000, 2.0)
        while not os.path.getsize(self.path):
            if time.monotonic() >= deadline:
                conn.close()
                raise NotAnEngramDatabaseError(
                    f"{self.path} is an empty file (0 bytes), not an engram database: refusing to make it one "
                    "(delete it to start a new store there)")
            time.sleep(0.05)
        self._empty_before = False

    def _check_not_corrupt(self) -> None:
        """SQLite's quick_check on a file opened for writing (up to 256 MiB: larger files
        rely on the reads that meet a damaged page): a damaged file is never written."""
        if self.path == ":memory:" or os.path.getsize(self.path) > _QUICK_CHECK_MAX_BYTES:
            return
        found = [row[0] for row in self._read("PRAGMA quick_check")]
        if found != ["ok"]:
            self.close()
            raise CorruptDatabaseError(
                f"{self.path} is damaged ({'; '.join(found[:3])}): engram will not write to it; restore a backup, "
                "or read what is left with SQLiteStore(path, read_only=True)")

    def _can_be_immutable(self) -> bool:
        """Read-only and nothing in a WAL: the file alone is the whole database."""
        wal = self.path + "-wal"
        return not os.path.exists(wal) or os.path.getsize(wal) == 0

    def _check_is_engram(self, conn: sqlite3.Connection) -> None:
        # one read transaction: another process creating the schema right now must
        # be seen either before (no tables, no id) or after (both), never half
        conn.execute("BEGIN")
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        finally:
            conn.execute("COMMIT")
        if app_id == APPLICATION_ID:
            return
        if app_id != 0 or tables:
            raise NotAnEngramDatabaseError(
                f"{self.path} is a SQLite database that engram did not create; refusing to touch it"
            )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for conn in self._connections:
                conn.close()
            self._connections.clear()

    # -- transactions ------------------------------------------------------------------------

    def _retry_busy(self, action: Callable[[], T]) -> T:
        """busy_timeout covers most waits; a few SQLITE_BUSY paths skip the handler."""
        for attempt in range(_BUSY_RETRIES):
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or attempt == _BUSY_RETRIES - 1:
                    raise self._translate(exc, "SQLite error") from exc
                time.sleep(min(0.05 * 2**attempt, 1.0))
        raise AssertionError("unreachable")

    def _translate(self, exc: sqlite3.Error, what: str) -> StorageError:
        """The driver's error as engram's, naming the real cause."""
        code = _primary_code(exc)
        if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            self._corrupt = str(exc)
            return CorruptDatabaseError(f"{what}: {self.path} is damaged ({exc}); engram no longer writes to it")
        if code == sqlite3.SQLITE_FULL:
            return StorageFullError(
                f"{what}: the disk holding {self.path} is full (or the database reached its size limit); "
                "nothing was written"
            )
        if code == sqlite3.SQLITE_READONLY:
            return ReadOnlyStoreError(f"{what}: {self.path} cannot be written ({exc}); nothing was written")
        return StorageError(f"{what}: {exc}")

    def _begin_immediate(self, conn: sqlite3.Connection) -> None:
        """Take the write lock, polling every 0.25-5 ms while another writer holds it.
        SQLite's own busy handler sleeps 1, 2, 5, ... up to 100 ms between tries, so a
        writer queued behind a 1 ms write often waited 50-100 ms; polling hands the lock
        over within a few milliseconds. The budget is the same busy timeout."""
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        delay = 0.00025
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as exc:
                    if not _is_busy(exc):
                        raise self._translate(exc, "SQLite error") from exc
                    if time.monotonic() >= deadline:
                        raise StorageError(
                            f"SQLite error: {exc} (another writer held {self.path} for "
                            f"{self._busy_timeout_ms / 1000:g} s)") from exc
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 1.5, 0.005)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.path} is open read-only (the file is not writable): writes are refused")
        if self._corrupt is not None:
            raise CorruptDatabaseError(f"{self.path} is damaged ({self._corrupt}): engram no longer writes to it")
        conn = self._connection()
        self._begin_immediate(conn)
        try:
            yield conn
        except BaseException:
            _rollback(conn)  # SQLite may have rolled back already (disk full): keep the real error
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(conn)
            raise self._translate(exc, "commit failed") from exc

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Every ``_read`` of this thread inside the block sees one snapshot of the file
        (a read transaction; in WAL mode writers go on meanwhile). Reads that combine
        figures from several statements (BM25 statistics and postings) need it: in
        autocommit each statement sees the latest commit (issue 21 item 2)."""
        conn = self._connection()
        if conn.in_transaction:  # already inside one (a write, or an outer snapshot)
            yield
            return
        self._retry_busy(lambda: conn.execute("BEGIN"))
        try:
            yield
        finally:
            _rollback(conn)  # a read transaction: nothing to commit

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        conn = self._connection()
        try:
            return self._retry_busy(lambda: conn.execute(sql, params).fetchall())
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc, "SQLite error") from exc

    # -- migrations --------------------------------------------------------------------------

    def _migrate(self) -> None:
        if self.read_only:
            self._check_schema_current()
            return
        with self._write() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at REAL NOT NULL)"
            )
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
            known = {version for version, _, _ in MIGRATIONS}
            if applied - known:
                raise MigrationError(
                    f"{self.path} has schema version {max(applied)}, newer than this engram knows ({max(known)})"
                )
            for version, name, sql in MIGRATIONS:
                if version in applied:
                    continue
                if callable(sql):
                    sql(conn)
                else:
                    for statement in filter(str.strip, sql.split(";")):
                        conn.execute(statement)
                conn.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", (version, name, time.time()))

    def _check_schema_current(self) -> None:
        try:
            applied = {row[0] for row in self._read("SELECT version FROM schema_migrations")}
        except StorageError as exc:
            raise MigrationError(f"{self.path} is open read-only and has no engram schema to read") from exc
        pending = {version for version, _, _ in MIGRATIONS} - applied
        if pending:
            raise MigrationError(
                f"{self.path} is open read-only but needs schema migrations {sorted(pending)}: "
                "open it once where it can be written"
            )

    def schema_version(self) -> int:
        return self._read("SELECT max(version) FROM schema_migrations")[0][0]

    # -- writes ------------------------------------------------------------------------------

    def apply(self, batch: WriteBatch) -> None:
        check_storable(batch)  # what PostgreSQL would refuse, refused here too
        try:
            with self._write() as conn:
                self._apply(conn, batch)
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"write conflicts with stored data: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc, "SQLite write failed") from exc
        if batch.purge_ids or batch.governance.purged_scopes or batch.episodes.drop_before is not None:
            self._owed_checkpoint = True
            self._truncate_wal(self._busy_timeout_ms / 1000)

    def _truncate_wal(self, budget_s: float) -> bool:
        """Copy the WAL into the file and empty it, so no old page image of what a purge
        deleted survives there (nor, in the file, the pages the copy replaces). A reader
        in the middle of a transaction blocks the copy: tried for at most ``budget_s`` (the
        busy timeout), without SQLite's busy handler, which would wait that long per try.
        True once done; else it stays owed (``erase_traces``, maintenance, the next purge)."""
        if self.path == ":memory:" or self.read_only:
            self._owed_checkpoint = False
            return True
        conn = self._connection()
        deadline = time.monotonic() + budget_s
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                except sqlite3.OperationalError as exc:
                    if not _is_busy(exc):
                        raise self._translate(exc, "checkpoint after purge failed") from exc
                    busy = 1
                if not busy:
                    self._owed_checkpoint = False
                    return True
                if time.monotonic() >= deadline:
                    return False
                time.sleep(min(0.05, max(deadline - time.monotonic(), 0.0)))
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")

    def erase_traces(self) -> str | None:
        """One try (no wait) at finishing a purge whose WAL could not be emptied yet."""
        if self._owed_checkpoint and not self._truncate_wal(0.0):
            return (f"a reader of {self.path} holds a transaction open, so the write-ahead log still holds page "
                    "images of what was purged; it is emptied as soon as the reader ends, by the next purge, "
                    "`engram maintain` or the worker's maintenance (or when the last connection closes)")
        return None

    def _apply(self, conn: sqlite3.Connection, batch: WriteBatch) -> None:
        tenant = batch.tenant
        if batch.holding is not None:
            erase.check_holding(conn, _ERASE, tenant, batch.holding)
        for namespace in batch.governance.purged_scopes:
            erase.erase_scope(conn, _ERASE, tenant, namespace, batch.purge_ids)
        indexer = lexical.Indexer(conn)
        for record_id in batch.purge_ids:
            rows.purge_record(conn, tenant, record_id, indexer)
        indexer.flush()  # each chunk that held purged records rewritten once
        existed = self._existing_ids(conn, tenant, [w.record.id for w in batch.records if w.expected_version is None])
        written: set[str] = set()
        for write in batch.records:
            record_id = write.record.id
            if write.expected_version is None:
                # a create: absent before this batch (one query for the batch) and not written earlier in it
                if record_id in existed or record_id in written:
                    raise ConflictError(f"record {record_id} already exists")
                rowid = rows.insert_record(conn, write)  # a fresh rowid: no postings to replace
            else:
                stored = self._check_version(conn, tenant, record_id, write.expected_version)
                if stored is not None:
                    if record_id in written:  # written earlier in this batch: its postings must be there to go
                        indexer.flush()
                    indexer.remove(stored)
                rowid = rows.upsert_record(conn, write)
            written.add(record_id)
            indexer.add(rowid, tenant, namespace_key(write.record.scope.namespace), write.terms,
                        rows.vector_entry(write))
        indexer.flush()
        rows.insert_versions(conn, tenant, batch.versions)
        for touch in batch.touches:
            rows.touch_record(conn, tenant, touch)
        rows.insert_audits(conn, tenant, batch.audit)
        for job in batch.jobs:
            job_rows.insert_job(conn, job)
        governance.apply_governance(conn, _GOVERNANCE, tenant, batch.governance, batch.purge_ids)
        episodes.apply_episodes(conn, _EPISODES, tenant, batch.episodes, batch.governance.purged_scopes)
        if batch.purge_ids:  # a scope left without records keeps no statistics row naming it
            conn.execute("DELETE FROM scopes WHERE tenant = ? AND docs <= 0", (tenant,))
        if batch.records or batch.purge_ids:
            conn.execute(
                "INSERT INTO tenant_state (tenant, seq) VALUES (?, 1) "
                "ON CONFLICT (tenant) DO UPDATE SET seq = seq + 1",
                (tenant,),
            )

    @staticmethod
    def _existing_ids(conn: sqlite3.Connection, tenant: str, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT id FROM memories WHERE tenant = ? AND id IN ({marks})"
            found.update(row[0] for row in conn.execute(sql, [tenant, *chunk]))
        return found

    @staticmethod
    def _check_version(conn: sqlite3.Connection, tenant: str, record_id: str, expected: int | None) -> int | None:
        """The stored row's rowid once its version is the expected one."""
        row = conn.execute("SELECT version, rowid FROM memories WHERE tenant = ? AND id = ?",
                           (tenant, record_id)).fetchone()
        stored = None if row is None else row[0]
        if stored != expected:
            if expected is None:
                raise ConflictError(f"record {record_id} already exists")
            raise ConflictError(
                f"record {record_id} is at version {stored}, expected {expected}: it changed meanwhile"
            )
        return None if row is None else int(row[1])

    # -- reads -------------------------------------------------------------------------------

    def get(self, tenant: str, ids: Sequence[str]) -> list[MemoryRecord]:
        if not ids:
            return []
        found: dict[str, MemoryRecord] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT {rows.RECORD_SELECT} FROM memories WHERE tenant = ? AND id IN ({marks})"
            for row in self._read(sql, [tenant, *chunk]):
                record = rows.record_from_row(row)
                found[record.id] = record
        return [found[i] for i in ids if i in found]

    def query(
        self, tenant: str, where: RecordFilter, *, order: OrderBy = "created_at", limit: int = 100, offset: int = 0,
        descending: bool | None = None,
    ) -> list[MemoryRecord]:
        clause, params = filter_clause(SQLITE, tenant, where)
        sql = (f"SELECT {rows.RECORD_SELECT} FROM memories WHERE {clause} "
               f"{order_clause(order, descending, 'rowid')} LIMIT ? OFFSET ?")
        return [rows.record_from_row(r) for r in self._read(sql, [*params, limit, offset])]

    def lexical(self, tenant: str, where: RecordFilter, terms: Sequence[str], limit: int) -> list[ScoredId]:
        if not terms:
            return []
        clause, params = filter_clause(SQLITE, tenant, where, alias="m")
        with self._snapshot():  # the statistics and the postings of one moment
            scopes = lexical.scopes_of(self._read, tenant, where.namespace, where.descendants,
                                       namespace_key(where.namespace))
            found = lexical.search(self._read, scopes, terms, clause, params, limit)
        return [ScoredId(key, score) for key, score in found]

    def nearest(self, tenant: str, where: RecordFilter, model: str, vector: np.ndarray, limit: int) -> list[ScoredId]:
        entry = self._vectors.get(tenant, where, model, self._tenant_seq(tenant), self._load_vectors)
        allowed, valid_at = None, None
        if where.valid_at is not None and not replace(where, valid_at=None).needs_sql:
            # the default search ("valid now") is checked on the cached validity windows,
            # not by listing every rowid of the scope in SQL on each query
            valid_at = SQLITE.time_value(where.valid_at)
        elif where.needs_sql:
            clause, params = filter_clause(SQLITE, tenant, where)
            allowed = [row[0] for row in self._read(f"SELECT rowid FROM memories WHERE {clause}", params)]
        return entry.nearest(vector, limit, statuses=where.statuses, kinds=where.kinds, allowed_rowids=allowed,
                             valid_at=valid_at)

    def _tenant_seq(self, tenant: str) -> int:
        found = self._read("SELECT seq FROM tenant_state WHERE tenant = ?", [tenant])
        return found[0][0] if found else 0

    def _load_vectors(self, tenant: str, namespace: tuple[str, ...], descendants: bool, model: str) -> PackedRows:
        with self._snapshot():  # the scopes and their chunks of one moment
            scopes = lexical.scopes_of(self._read, tenant, namespace, descendants, namespace_key(namespace))
            return packed(vector_chunks.read_scopes(self._read, [scope[0] for scope in scopes], model))

    def vectors(self, tenant: str, ids: Sequence[str], model: str) -> dict[str, np.ndarray]:
        # most asks come from a search that has just loaded the scope: serve them from the cache
        out = self._vectors.vectors(tenant, model, self._tenant_seq(tenant), ids) if ids else {}
        rest = [i for i in ids if i not in out]
        for start in range(0, len(rest), 500):
            with self._snapshot():  # the slots and the chunks they name, of one moment
                found = vector_chunks.vectors_of(self._read, tenant, model, rest[start : start + 500])
            out.update({key: np.frombuffer(blob, dtype="<f4").astype(np.float32, copy=False)
                        for key, blob in found.items()})
        return out

    def rank_fields(self, tenant: str, ids: Sequence[str], model: str) -> RankFields:
        # the pool of a search that has just loaded its scope: from the cached columns
        parts = self._vectors.rank_fields(tenant, model, self._tenant_seq(tenant), ids) if ids else []
        seen = {key for part in parts for key in part.ids}
        rest = [key for key in dict.fromkeys(ids) if key not in seen]
        for start in range(0, len(rest), 500):
            chunk = rest[start : start + 500]
            sql = (f"SELECT {', '.join(RANK_COLUMNS)} FROM memories WHERE tenant = ? "
                   f"AND id IN ({', '.join('?' * len(chunk))})")
            found = self._read(sql, [tenant, *chunk])
            if found:
                parts.append(rank_fields_from_rows(found))
        return RankFields.concat(parts)

    def versions(self, tenant: str, record_id: str) -> list[Version]:
        found = self._read(
            "SELECT * FROM memory_versions WHERE tenant = ? AND record_id = ? ORDER BY version", [tenant, record_id]
        )
        return [rows.version_from_row(row) for row in found]

    def audit(self, tenant: str, query: AuditQuery) -> list[AuditEvent]:
        where, params = audit_conditions(SQLITE, "tenant", tenant, query)
        return [rows.audit_from_sqlite(row) for row in self._read(f"SELECT * FROM audit_log {where}", params)]

    def namespaces(self, tenant: str, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        sql = "SELECT DISTINCT namespace FROM memories WHERE tenant = ? AND status != 'deleted'"
        params: list[Any] = [tenant]
        bounds = namespace_range(prefix)
        if bounds is not None:
            sql += " AND namespace >= ? AND namespace < ?"
            params += list(bounds)
        return [namespace_from_key(row[0]) for row in self._read(sql + " ORDER BY namespace", params)]

    def tenants(self) -> list[str]:
        return [row[0] for row in self._read("SELECT DISTINCT tenant FROM memories ORDER BY tenant")]

    # -- store-wide settings -------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        found = self._read("SELECT value FROM engram_meta WHERE key = ?", (key,))
        return found[0][0] if found else None

    def set_meta(self, key: str, value: str, *, only_if_absent: bool = False, expected: str | None = None) -> str:
        with self._write() as conn:
            if expected is not None:
                conn.execute("UPDATE engram_meta SET value = ? WHERE key = ? AND value = ?", (value, key, expected))
            else:
                verb = "INSERT OR IGNORE" if only_if_absent else "INSERT OR REPLACE"
                conn.execute(f"{verb} INTO engram_meta (key, value) VALUES (?, ?)", (key, value))
            found = conn.execute("SELECT value FROM engram_meta WHERE key = ?", (key,)).fetchone()
            return "" if found is None else str(found[0])

    # -- background jobs ---------------------------------------------------------------------

    def claim_job(self, now: datetime, lease_seconds: float) -> Job | None:
        with self._write() as conn:
            return job_rows.claim_due_job(conn, now, lease_seconds)

    def finish_job(
        self, tenant: str, job_id: str, status: JobStatus, at: datetime, *, error: str | None = None,
        result: dict[str, Any] | None = None, retry_at: datetime | None = None,
    ) -> None:
        with self._write() as conn:
            job_rows.finish_job(conn, tenant, job_id, status, at, error=error, result=result, retry_at=retry_at)

    def jobs(self, tenant: str | None, statuses: Sequence[JobStatus] = (), limit: int = 100) -> list[Job]:
        sql, params = "SELECT * FROM jobs WHERE 1 = 1", []
        if tenant is not None:
            sql += " AND tenant = ?"
            params.append(tenant)
        if statuses:
            sql += f" AND status IN ({', '.join('?' * len(statuses))})"
            params += [s.value for s in statuses]
        found = self._read(sql + " ORDER BY created_at DESC LIMIT ?", [*params, limit])
        return [job_rows.job_from_row(row) for row in found]

    def stats(self, tenant: str | None = None) -> Stats:
        where, params = ("WHERE tenant = ?", [tenant]) if tenant else ("", [])
        def pairs(sql: str) -> dict[str, int]:
            return {str(row[0]): int(row[1]) for row in self._read(sql, params)}

        by_status = pairs(f"SELECT status, count(*) FROM memories {where} GROUP BY status")
        by_kind = pairs(f"SELECT kind, count(*) FROM memories {where} GROUP BY kind")
        models = pairs(f"SELECT coalesce(embedding_model, ''), count(*) FROM memories {where} GROUP BY 1")
        versions = self._read(f"SELECT count(*) FROM memory_versions {where}", params)[0][0]
        audits = self._read(f"SELECT count(*) FROM audit_log {where}", params)[0][0]
        tenants = self._read(f"SELECT count(DISTINCT tenant) FROM memories {where}", params)[0][0]
        size = os.path.getsize(self.path) if self.path != ":memory:" else 0
        return Stats(
            records=sum(by_status.values()),
            active=by_status.get("active", 0),
            by_status=by_status,
            by_kind=by_kind,
            versions=versions,
            audit_events=audits,
            tenants=tenants,
            embedding_models=models,
            extra={"path": self.path, "bytes_on_disk": size, "schema_version": self.schema_version(),
                   "read_path": READ_PATH, "mmap_mb": self._mmap_bytes // (1024 * 1024),
                   "vector_cache": self._vectors.summary()},
        )

    # -- governance (store/governance_sql.py) -------------------------------------------------

    def pending_changes(self, tenant: str | None, query: PendingQuery) -> list[PendingChange]:
        sql, params = governance.pending_select(_GOVERNANCE, tenant, query)
        return [governance.pending_from_row(row) for row in self._read(sql, params)]

    def recalls(self, tenant: str, query: RecallQuery) -> list[RecallEvent]:
        sql, params = governance.recall_select(_GOVERNANCE, tenant, query)
        return [governance.recall_from_row(row) for row in self._read(sql, params)]

    def write_samples(self, tenant: str, query: SampleQuery) -> list[WriteSample]:
        sql, params = governance.sample_select(_GOVERNANCE, tenant, query)
        return [governance.sample_from_row(row) for row in self._read(sql, params)]

    # -- episodes (store/episodes_sql.py) --------------------------------------------------------

    _episode_tables = _EPISODES

    def _episode_rows(self, tenant: str | None, sql: str, params: Sequence[Any]) -> list[Any]:
        return self._read(sql, params)

    @contextmanager
    def scope_lease(self, tenant: str, namespace: tuple[str, ...], holder: str, now: datetime,
                    seconds: float) -> Iterator[bool]:
        """A lease row: taken when free or expired; released (if still ours) on exit. A
        holder that dies keeps it only until ``now + seconds``."""
        key, until = namespace_key(namespace), now.timestamp() + seconds
        with self._write() as conn:
            conn.execute("INSERT INTO consolidation_state (tenant, namespace) VALUES (?, ?) ON CONFLICT DO NOTHING",
                         (tenant, key))
            got = conn.execute(
                "UPDATE consolidation_state SET lease_holder = ?, lease_until = ? WHERE tenant = ? AND namespace = ? "
                "AND (lease_holder IS NULL OR lease_until IS NULL OR lease_until <= ? OR lease_holder = ?)",
                (holder, until, tenant, key, now.timestamp(), holder)).rowcount == 1
        try:
            yield got
        finally:
            if got and not self._closed:
                with self._write() as conn:
                    conn.execute("UPDATE consolidation_state SET lease_holder = NULL, lease_until = NULL "
                                 "WHERE tenant = ? AND namespace = ? AND lease_holder = ?", (tenant, key, holder))

    def execute_raw(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """For tests and tooling: run SQL as is (no tenant condition is added)."""
        return [tuple(row) for row in self._read(sql, params)]

