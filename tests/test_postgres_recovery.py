"""Lost connections: a write cut mid-transaction raises ConnectionLostError and
leaves nothing half-written; reads retry with backoff; after a server restart
the same Memory keeps working (the pool reconnects), no app restart needed."""

from __future__ import annotations

import threading
import time

import pytest

from engram import ConnectionLostError, FakeHashEmbedder, Memory, Scope
from engram.store.postgres import PostgresStore

try:
    from conformance import pgtools
except ImportError:  # tests/ collected as a package
    from tests.conformance import pgtools

ALICE = Scope("acme", ("users", "alice"))


@pytest.fixture(scope="module")
def server():
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    return pgtools.session_server()


@pytest.fixture
def memory(server):
    schema = server.new_schema()
    mem = Memory(PostgresStore(server.url_for(schema=schema), timeout=5, retry_seconds=15),
                 embedder=FakeHashEmbedder())
    yield mem
    mem.close()
    server.drop_schema(schema)


def _engram_backends(server, schema_hint: str | None = None) -> list[int]:
    return [row[0] for row in server.sql(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'engram' AND pid != pg_backend_pid()")]


def _terminate(server, pids) -> None:
    for pid in pids:
        server.sql("SELECT pg_terminate_backend(%s)", (pid,))


def test_reads_and_writes_survive_killed_idle_connections(server, memory):
    record = memory.remember("survives", ALICE)
    pids = _engram_backends(server)
    assert pids
    _terminate(server, pids)
    assert [h.record.id for h in memory.search("survives", ALICE)] == [record.id]
    _terminate(server, _engram_backends(server))
    again = memory.remember("written after the kill", ALICE)  # nothing was sent before the loss: retried
    assert memory.get(again.id, ALICE).content == "written after the kill"


def test_a_write_cut_mid_transaction_is_typed_and_leaves_nothing(server, memory):
    memory.remember("first", ALICE)  # creates the scope's statistics row
    before = memory.stats("acme")
    schema = memory._store.schema
    blocker = server.connect()
    blocker.execute("BEGIN")
    blocker.execute(f'SELECT * FROM "{schema}".scope_state WHERE tenant_id = %s FOR UPDATE', ("acme",))
    outcome: dict[str, BaseException | None] = {}

    def write():
        try:
            memory.remember_many([f"batch item {i}" for i in range(50)], ALICE)
            outcome["error"] = None
        except BaseException as exc:
            outcome["error"] = exc

    writer = threading.Thread(target=write)
    writer.start()
    victim = _wait_for_lock_waiter(server)  # rows are inserted, the statistics row is locked
    server.sql("SELECT pg_terminate_backend(%s)", (victim,))
    writer.join(30)
    blocker.execute("ROLLBACK")
    blocker.close()
    assert isinstance(outcome["error"], ConnectionLostError)
    assert "nothing was written" in str(outcome["error"])
    after = memory.stats("acme")
    assert (after.records, after.versions, after.audit_events) == (before.records, before.versions,
                                                                    before.audit_events)
    assert [r.content for r in memory.list(ALICE, limit=100).items] == ["first"]
    memory.remember_many(["batch item again"], ALICE)
    assert memory.stats("acme").records == before.records + 1


def _wait_for_lock_waiter(server, timeout: float = 20.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = server.sql("SELECT pid FROM pg_stat_activity WHERE application_name = 'engram' "
                          "AND wait_event_type = 'Lock'")
        if rows:
            return rows[0][0]
        time.sleep(0.02)
    raise AssertionError("the writer never waited on the lock")


@pytest.fixture
def own_server():
    """A server of our own: restarting the session's would disturb nothing, but this
    keeps the test independent of how the session's server was provided."""
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    if pgtools.session_server().managed is False:
        pytest.skip("ENGRAM_TEST_PG_URL points at an external server, which these tests cannot restart")
    server = pgtools.start_pgserver()
    yield server
    server.stop()


def test_after_a_server_restart_the_same_memory_recovers(own_server):
    store = PostgresStore(own_server.url_for(schema="app"), timeout=5, retry_seconds=30)
    with Memory(store, embedder=FakeHashEmbedder()) as memory:
        record = memory.remember("before the restart", ALICE)
        own_server.restart()
        assert memory.get(record.id, ALICE).content == "before the restart"
        after = memory.remember("after the restart", ALICE)
        assert {h.record.id for h in memory.search("restart", ALICE)} == {record.id, after.id}


def test_a_read_waits_out_a_short_outage(own_server):
    store = PostgresStore(own_server.url_for(schema="app"), timeout=3, retry_seconds=30)
    with Memory(store, embedder=FakeHashEmbedder()) as memory:
        record = memory.remember("patient read", ALICE)
        own_server.pg_ctl("-m", "fast", "stop")
        restarted = threading.Timer(1.5, own_server.handle.ensure_postgres_running)
        restarted.start()
        started = time.monotonic()
        assert memory.get(record.id, ALICE).content == "patient read"
        assert time.monotonic() - started >= 1.0
        restarted.join()


def test_a_write_while_the_server_is_down_fails_typed_then_works(own_server):
    store = PostgresStore(own_server.url_for(schema="app"), timeout=1, retry_seconds=2)
    with Memory(store, embedder=FakeHashEmbedder()) as memory:
        memory.remember("before", ALICE)
        own_server.pg_ctl("-m", "fast", "stop")
        with pytest.raises(ConnectionLostError):
            memory.remember("while down", ALICE)
        own_server.handle.ensure_postgres_running()
        deadline = time.monotonic() + 30
        while True:
            try:
                memory.remember("after", ALICE)
                break
            except ConnectionLostError:
                assert time.monotonic() < deadline, "the pool never reconnected"
                time.sleep(0.2)
        assert sorted(r.content for r in memory.list(ALICE).items) == ["after", "before"]


def test_an_unreachable_server_is_a_typed_error():
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    with pytest.raises(ConnectionLostError):
        PostgresStore("postgresql://nobody@/postgres?host=/nonexistent-socket-dir", connect_timeout=1, timeout=1)
