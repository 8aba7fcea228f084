"""Issue 21 item 9: the LangGraph and Deep Agents contract points. A Deep Agents write
without a prior read replaces the file even when another writer got there first (the
protocol's blind write), a write after a read stays a compare-and-swap; an EngramStore
batch holding one invalid op is refused whole before any op runs; a NUL in a stored
value is a typed refusal (docs/INTEGRATIONS.md)."""

from __future__ import annotations

import _common
import blind_writes
import pytest

pytest.importorskip("deepagents")

from langgraph.store.base import PutOp

from engram import FakeHashEmbedder, InvalidValueError, Memory, Settings, WriteIntent
from engram.integrations.deepagents import EngramBackend
from engram.integrations.langgraph import EngramStore

NAMESPACE = ("agents", "helper", "files")


def _open(url: str, **kw) -> Memory:
    return Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False), **kw)


def test_a_blind_write_replaces_the_file_even_when_another_writer_got_there_first(tmp_path):
    path = str(tmp_path / "m.db")
    with _open(path) as other:
        other_files = EngramBackend(other, namespace=NAMESPACE)
        assert other_files.write("/notes.md", "first\n").error is None
        raced = []

        def another_writer_first(intent: WriteIntent) -> None:  # lands between our read and our commit
            if intent.actor == "agent" and not raced and intent.record and "mine" in intent.record.content:
                raced.append(other_files.write("/notes.md", "theirs\n"))

        with _open(path, policies=[another_writer_first]) as memory:
            mine = EngramBackend(memory, namespace=NAMESPACE)  # never read the file
            result = mine.write("/notes.md", "mine\n")
            assert raced and raced[0].error is None
            assert result.error is None, result.error
            assert mine.read_text("/notes.md") == "mine\n"


def test_a_write_after_a_read_stays_a_compare_and_swap(tmp_path):
    from langchain_core.runnables.config import var_child_runnable_config

    path = str(tmp_path / "m.db")
    token = var_child_runnable_config.set({"configurable": {"thread_id": "t1"}})  # as inside a graph's tool call
    try:
        _read_then_write(path)
    finally:
        var_child_runnable_config.reset(token)


def _read_then_write(path: str) -> None:
    with _open(path) as memory, _open(path) as other:
        mine, theirs = EngramBackend(memory, namespace=NAMESPACE), EngramBackend(other, namespace=NAMESPACE)
        assert mine.write("/notes.md", "first\n").error is None
        mine.read("/notes.md")
        assert theirs.write("/notes.md", "theirs\n").error is None
        refused = mine.write("/notes.md", "mine\n")
        assert refused.error and "read" in refused.error.lower()
        assert theirs.read_text("/notes.md") == "theirs\n"


def test_a_batch_with_one_invalid_op_is_refused_before_any_op_runs(backend_name):
    result = blind_writes.run(backend_name, threads=4, times=5)
    assert result["errors"] == 0, result["first_error"]
    assert result["refused"] == result["batches"] and result["applied_before_refusal"] == 0


def test_a_nul_in_a_stored_value_is_a_typed_refusal(tmp_path):
    with _open(str(tmp_path / "m.db")) as memory:
        store = EngramStore(memory)
        with pytest.raises(InvalidValueError, match="NUL"):
            store.put(("docs",), "k", {"text": "a\x00b"})
        with pytest.raises(InvalidValueError):
            store.batch([PutOp(("docs",), "ok", {"text": "fine"}), PutOp(("docs",), "k", {"text": "a\x00b"})])
        assert store.get(("docs",), "ok") is None
        assert "NUL" in EngramBackend(memory, namespace=NAMESPACE).write("/a.md", "a\x00b").error


def test_both_backends_blind_writes(backend_name):
    target = _common.new_target(backend_name)
    try:
        assert blind_writes.blind(target.url, 4, 5)["errors"] == 0
    finally:
        target.close()
