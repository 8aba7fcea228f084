"""SQLite-specific guarantees: file identity, migrations, atomic batches, WAL."""

import sqlite3

import numpy as np
import pytest

from engram import ConflictError, Memory, MigrationError, NotAnEngramDatabaseError, Operation
from engram.model import Version
from engram.store.base import RecordWrite, WriteBatch
from engram.store.sqlite import SQLiteStore
from engram.store.sqlite_migrations import MIGRATIONS


def test_refuses_a_file_that_is_not_sqlite(tmp_path):
    path = tmp_path / "notes.db"
    path.write_bytes(b"this is a text file, not a database" * 100)
    with pytest.raises(NotAnEngramDatabaseError):
        SQLiteStore(str(path))
    assert path.read_bytes().startswith(b"this is a text file")


def test_refuses_someone_elses_sqlite_database(tmp_path):
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(NotAnEngramDatabaseError, match="did not create"):
        SQLiteStore(str(path))
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("customers",)]


def test_refuses_a_database_from_a_newer_engram(db_path):
    SQLiteStore(db_path).close()
    with sqlite3.connect(db_path) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 0)")
    with pytest.raises(MigrationError, match="newer"):
        SQLiteStore(db_path)


def test_reopening_keeps_data_and_schema_version(db_path, alice):
    from engram import FakeHashEmbedder

    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder()) as memory:
        record = memory.remember("persisted", alice)
    store = SQLiteStore(db_path)
    assert store.schema_version() == max(version for version, _, _ in MIGRATIONS)
    assert store.get("acme", [record.id])[0].content == "persisted"
    assert store.execute_raw("PRAGMA journal_mode") == [("wal",)]
    store.close()


def test_a_file_from_before_reply_to_is_migrated_in_place(db_path, alice, monkeypatch):
    """A database written by engram before migration 3 opens, gains the reply_to
    column, and its records read back unchanged (with no reply_to)."""
    from engram import FakeHashEmbedder, Source
    from engram.store import sqlite as sqlite_module

    monkeypatch.setattr(sqlite_module, "MIGRATIONS", MIGRATIONS[:2])
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
    old_store = SQLiteStore(db_path)
    assert old_store.schema_version() == 2
    old_store.execute_raw(
        "INSERT INTO memories (tenant, id, namespace, kind, content, importance, confidence, sensitivity, status, "
        "version, valid_from, created_at, updated_at, actor) VALUES ('acme', 'old1', ?, 'fact', 'lives in Oslo', "
        "0.5, 1.0, 'normal', 'active', 1, 0, 0, 0, 'user')",
        ["users\x1falice\x1f"],
    )
    old_store.close()
    monkeypatch.setattr(sqlite_module, "MIGRATIONS", MIGRATIONS)
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder()) as memory:
        assert memory._store.schema_version() == max(version for version, _, _ in MIGRATIONS)
        assert memory.get("old1", alice).source == Source(actor="user")
        assert memory.get("old1", alice).content == "lives in Oslo"


def test_a_failing_batch_rolls_back_entirely(memory, alice):
    first = memory.remember("first", alice)
    second = memory.remember("second", alice)
    good = RecordWrite(first, "first", np.zeros(64, np.float32), expected_version=1)
    stale = RecordWrite(second, "second", None, expected_version=7)  # wrong version
    version = Version(first.id, 2, Operation.UPDATE, "test", first.updated_at, None, first)
    with pytest.raises(ConflictError):
        memory._store.apply(WriteBatch("acme", records=(good, stale), versions=(version,)))
    assert [v.version for v in memory.history(first.id, alice)] == [1]
    assert memory.get(first.id, alice) == first


def test_inserting_an_existing_id_is_a_conflict(memory, alice):
    record = memory.remember("original", alice)
    with pytest.raises(ConflictError, match="already exists"):
        memory._store.apply(WriteBatch("acme", records=(RecordWrite(record, "x", None, None),)))


def test_vector_cache_sees_writes_from_another_connection(db_path, alice):
    from engram import FakeHashEmbedder

    reader = Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder())
    writer = Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder())
    writer.remember("green tea", alice)
    assert [h.record.content for h in reader.search("green tea", alice, retriever="vector")] == ["green tea"]
    writer.remember("black coffee", alice)
    found = {h.record.content for h in reader.search("black coffee", alice, retriever="vector")}
    assert "black coffee" in found
    reader.close()
    writer.close()


def test_an_in_memory_store_is_one_database_for_every_thread_and_private_to_its_store():
    import threading

    from engram import FakeHashEmbedder, Memory, Scope

    first = Memory.open(":memory:", embedder=FakeHashEmbedder())
    other = Memory.open(":memory:", embedder=FakeHashEmbedder())
    scope = Scope("acme")

    def write(i: int) -> None:
        for j in range(10):
            first.remember(f"fact {i} {j}", scope)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert first.stats("acme").records == 40 and other.stats().records == 0
    finally:
        first.close()
        other.close()
