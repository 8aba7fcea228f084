"""Issue 11 items 1, 3 and 6 (fixed in the store layer) through the reliability suite's
own scripts: no cross-tenant side channel, no trace of purged text in the database
files, typed errors for a read-only file and a missing import file."""

from __future__ import annotations

import json
import os
import stat

import pii_scan
import pytest
import tenant_attack
from typer.testing import CliRunner

from engram import EngramError, FakeHashEmbedder, Memory, Scope, Settings
from engram.cli import app


def test_item_1_no_side_channel_between_tenants(backend_name):
    result = tenant_attack.run(backend_name, rounds=0, side_documents=20)
    assert not result["side_channel"]["changed"], result["side_channel"]


def test_item_3_purged_text_leaves_no_trace_in_the_database_files(backend_name):
    result = pii_scan.run(backend_name, records=8)
    assert result["found"]["purged"] == 0


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="file modes do not bind root")
def test_item_6_a_read_only_database_opens_for_reading_and_refuses_writes_typed(tmp_path):
    path = tmp_path / "ro.db"
    with Memory.open(str(path), embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False)) as memory:
        memory.remember("Ana likes tea", Scope("acme"))
    for name in os.listdir(tmp_path):
        os.chmod(tmp_path / name, stat.S_IRUSR)
    os.chmod(tmp_path, stat.S_IRUSR | stat.S_IXUSR)
    try:
        with Memory.open(str(path), embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False)) as memory:
            assert [r.content for r in memory.list(Scope("acme")).items] == ["Ana likes tea"]
            with pytest.raises(EngramError):
                memory.remember("more", Scope("acme"))
    finally:
        os.chmod(tmp_path, stat.S_IRWXU)


def test_item_6_importing_a_missing_file_is_a_typed_error(tmp_path, monkeypatch):
    with Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder(),
                     settings=Settings(auto_worker=False)) as memory:
        with pytest.raises(EngramError):
            memory.transfer.import_from(str(tmp_path / "missing.jsonl"))
    monkeypatch.setenv("ENGRAM_DB", str(tmp_path / "m.db"))
    monkeypatch.setenv("ENGRAM_EMBEDDER", "fake-hash")
    result = CliRunner().invoke(app, ["import", str(tmp_path / "missing.jsonl")])
    assert result.exit_code != 0 and not isinstance(result.exception, FileNotFoundError), json.dumps(
        result.output)


def test_purging_a_user_leaves_no_trace_of_their_conversations_in_the_sqlite_files(tmp_path):
    """Kept turns (episodes) are purged with the user: their rows, their FTS5 segments
    and the WAL's page images."""
    path = tmp_path / "turns.db"
    alice, bob = Scope.for_user("acme", "alice"), Scope.for_user("acme", "bob")
    settings = Settings(auto_worker=False)
    with Memory.open(str(path), embedder=FakeHashEmbedder(), settings=settings) as memory:
        memory.add([{"role": "user", "content": "My neighbour Quillonbright fixed the zeppelintrunk yesterday"}],
                   alice, thread_id="t-alice")
        memory.add([{"role": "user", "content": "Bob keeps his notes in plain text files"}], bob, thread_id="t-bob")
        assert memory.threads.search("zeppelintrunk", alice)
        memory.purge_scope(alice)
        assert not memory.threads.search("zeppelintrunk", alice)
        assert memory.threads.search("notes", bob)
    leftovers = {f.name: f.read_bytes() for f in tmp_path.iterdir() if f.name.startswith("turns.db")}
    for word in (b"quillonbright", b"Quillonbright", b"zeppelintrunk"):
        assert not any(word in data for data in leftovers.values()), (word, sorted(leftovers))
