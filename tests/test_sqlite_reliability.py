"""SQLite under hostile conditions (issue 11): typed errors that name the real cause,
read-only files, and a purge that leaves no trace of the content in the file or WAL."""

import os
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram import (
    FakeHashEmbedder,
    InvalidValueError,
    Memory,
    ReadOnlyStoreError,
    Scope,
    StorageError,
    StorageFullError,
)
from engram.cli import app
from engram.store.sqlite import SQLiteStore

SCOPE = Scope("acme", ("users", "ana"))


def test_a_full_disk_is_a_typed_error_and_nothing_is_half_written(db_path):
    store = SQLiteStore(db_path)
    memory = Memory(store, embedder=FakeHashEmbedder())
    kept = memory.remember("kept before the disk filled up", SCOPE)
    pages = store.execute_raw("PRAGMA page_count")[0][0]
    store.execute_raw(f"PRAGMA max_page_count = {pages + 2}")  # this connection's size limit: a full disk
    with pytest.raises(StorageFullError, match="full") as caught:
        for i in range(100):
            memory.remember("a long memory that needs pages " * 100 + str(i), SCOPE)
    assert "no transaction is active" not in str(caught.value)
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    store.execute_raw("PRAGMA max_page_count = 1073741823")
    contents = {hit.content for hit in memory.list(SCOPE).items}
    assert kept.content in contents
    assert store.execute_raw("PRAGMA integrity_check") == [("ok",)]
    memory.close()


def test_a_read_only_database_reads_and_refuses_writes(db_path):
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder()) as memory:
        record = memory.remember("tea with lemon in the morning", SCOPE)
    before = Path(db_path).read_bytes()
    with Memory(SQLiteStore(db_path, read_only=True), embedder=FakeHashEmbedder()) as memory:
        assert memory.get(record.id, SCOPE).content == record.content
        assert [hit.record.id for hit in memory.search("lemon tea", SCOPE)] == [record.id]
        with pytest.raises(ReadOnlyStoreError, match="read-only"):
            memory.remember("another", SCOPE)
        with pytest.raises(ReadOnlyStoreError):
            memory.purge(record.id, SCOPE)
    assert Path(db_path).read_bytes() == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files; the explicit read_only test covers it")
def test_a_file_without_write_permission_opens_read_only(db_path):
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder()) as memory:
        memory.remember("tea with lemon", SCOPE)
    os.chmod(db_path, 0o444)
    store = SQLiteStore(db_path)
    assert store.read_only
    with pytest.raises(ReadOnlyStoreError):
        Memory(store, embedder=FakeHashEmbedder()).remember("x", SCOPE)


def test_read_only_refuses_a_file_that_needs_migrations(tmp_path):
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()
    with pytest.raises(StorageError):
        SQLiteStore(str(path), read_only=True)


def test_import_of_a_missing_file_is_a_typed_error(db_path, tmp_path):
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder()) as memory:
        with pytest.raises(InvalidValueError, match="no such file"):
            memory.transfer.import_from(tmp_path / "missing.jsonl")
        with pytest.raises(InvalidValueError, match="cannot write"):
            memory.transfer.export_to(tmp_path / "no-such-folder" / "out.jsonl", SCOPE)


def test_cli_import_of_a_missing_file_prints_one_line(db_path, tmp_path):
    result = CliRunner().invoke(app, ["import", str(tmp_path / "missing.jsonl"), "--db", db_path])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "no such file" in result.output
    assert len(result.output.strip().splitlines()) == 1


# needles long enough that no record id, timestamp or vector byte run matches them by chance
# (a 4-digit needle such as "8876" turned up inside unrelated hex ids)
SECRET = "Zanzibarquux Vexillomancer phoned from extension 73921846"
NEEDLES = [b"zanzibarquux", b"Zanzibarquux", b"vexillom", b"Vexillomancer", b"73921846"]


def _traces(path: str) -> list[str]:
    found = []
    for name in (path, path + "-wal"):
        if os.path.exists(name):
            data = Path(name).read_bytes()
            found += [f"{os.path.basename(name)}:{needle.decode()}" for needle in NEEDLES if needle in data]
    return found


def test_purge_leaves_no_trace_in_the_file_or_its_wal(db_path):
    memory = Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder())
    for i in range(50):
        memory.remember(f"ordinary memory number {i} about tea and lemons", SCOPE)
    secret = memory.remember(SECRET, SCOPE)
    memory.update(secret.id, SCOPE, content=SECRET + " again")  # a second version, a second FTS entry
    assert _traces(db_path)  # the scan finds the content while it is stored
    memory.purge(secret.id, SCOPE, reason="right to be forgotten")
    assert _traces(db_path) == []  # already once purge() returns, other connections still open
    assert all("Zanzibarquux" not in hit.record.content for hit in memory.search("Zanzibarquux", SCOPE))
    memory.close()
    assert _traces(db_path) == []
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
