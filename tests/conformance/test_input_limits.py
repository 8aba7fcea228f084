"""Input limits (engram/limits.py, issue 11 items 2 and 7): every entry point refuses
oversized metadata, tags and categories and metadata nested too deeply with a typed
error and writes nothing; a record stored before the limits existed never breaks the
reads of its scope."""

from __future__ import annotations

import io
import json

import pytest
from fastapi.testclient import TestClient

from engram import InvalidValueError, MemoryDraft, Settings
from engram.errors import ImportFormatError
from engram.limits import MAX_OFFSET, InputLimits, bounded_json, nesting_depth
from engram.server.http import create_app

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)

KEY = "key-acme-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}


def nested(levels: int) -> dict:
    root: dict = {}
    node = root
    for _ in range(levels - 1):
        node["a"] = {}
        node = node["a"]
    return root


def small_limits_memory(backend, clock):
    settings = Settings(auto_worker=False, max_metadata_bytes=1000, max_metadata_depth=4, max_tags=3,
                        max_tag_chars=10, max_category_chars=12)
    return backend.memory(clock=clock, settings=settings)


OVER = {
    "metadata too big": {"metadata": {"blob": "x" * 2000}},
    "metadata too deep": {"metadata": nested(5)},
    "metadata far too deep": {"metadata": nested(5000)},
    "too many tags": {"tags": ["a", "b", "c", "d"]},
    "tag too long": {"tags": ["x" * 11]},
    "category too long": {"category": "c" * 13},
}


@pytest.mark.parametrize("case", sorted(OVER))
def test_remember_over_a_limit_is_refused_and_nothing_is_written(backend, clock, alice, case):
    memory = small_limits_memory(backend, clock)
    with pytest.raises(InvalidValueError):
        memory.remember("Ana likes tea", alice, **OVER[case])
    with pytest.raises(InvalidValueError):
        memory.remember_many([MemoryDraft("a"), MemoryDraft("b", **OVER[case])], alice)
    assert memory.list(alice).items == ()
    assert memory.audit.list(alice) == []


@pytest.mark.parametrize("case", sorted(OVER))
def test_update_over_a_limit_is_refused_and_the_record_is_unchanged(backend, clock, alice, case):
    memory = small_limits_memory(backend, clock)
    record = memory.remember("Ana likes tea", alice, tags=["a"], metadata={"k": 1})
    with pytest.raises(InvalidValueError):
        memory.update(record.id, alice, **OVER[case])
    assert memory.get(record.id, alice) == record


def test_limits_at_the_edge_are_accepted(backend, clock, alice):
    memory = small_limits_memory(backend, clock)
    record = memory.remember("Ana likes tea", alice, metadata=nested(4), tags=["a", "b", "x" * 10],
                             category="c" * 12)
    assert memory.get(record.id, alice).metadata == nested(4)


def test_import_of_an_oversized_record_is_refused_whole(backend, clock, alice):
    source = backend.memory(clock=clock)
    source.remember("first", alice)
    source.remember("second", alice, metadata={"blob": "x" * 2000})
    buffer = io.StringIO()
    source.transfer.export_to(buffer, alice)
    exported = buffer.getvalue()
    moved = exported.replace('"acme"', '"globex"')
    memory = small_limits_memory(backend, clock)
    with pytest.raises(InvalidValueError):
        memory.transfer.import_from(io.StringIO(moved))
    assert memory.stats().records == 2  # the source's two, nothing imported into globex


def test_an_import_line_nested_too_deeply_is_a_typed_error(backend, clock):
    memory = backend.memory(clock=clock)
    header = json.dumps({"format": "engram.export", "version": 1, "tenant": "acme", "namespace": [],
                         "exported_at": "2026-01-01T00:00:00+00:00"})
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(ImportFormatError, match="line 2: the JSON is nested too deeply"):
        memory.transfer.import_from(io.StringIO(header + "\n" + deep + "\n"))


def test_offsets_beyond_the_database_range_are_refused(backend, clock, alice):
    memory = backend.memory(clock=clock)
    memory.remember("Ana likes tea", alice)
    assert memory.list(alice, offset=MAX_OFFSET).items == ()
    for offset in (MAX_OFFSET + 1, 2**63, 2**64):
        with pytest.raises(InvalidValueError, match="offset"):
            memory.list(alice, offset=offset)
    with pytest.raises(InvalidValueError, match="limit"):
        memory.list(alice, limit=2**63)


def test_http_deep_metadata_is_a_422_and_the_scope_stays_readable(backend, clock):
    memory = backend.memory(clock=clock, settings=Settings(auto_worker=False))
    client = TestClient(create_app(memory, api_keys={KEY: "acme"}), raise_server_exceptions=False)
    kept = client.post("/v1/memories", json={"content": "Ana likes tea", "scope": {"user": "ana"}}, headers=AUTH)
    assert kept.status_code == 201
    for levels in (33, 300, 900):
        answer = client.post("/v1/memories", json={"content": "deep", "scope": {"user": "ana"},
                                                   "metadata": nested(levels)}, headers=AUTH)
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"] == "InvalidValueError"
    listed = client.get("/v1/memories", params={"user": "ana"}, headers=AUTH)
    assert [item["content"] for item in listed.json()["items"]] == ["Ana likes tea"]
    answer = client.get("/v1/memories", params={"user": "ana", "offset": 2**63}, headers=AUTH)
    assert answer.status_code == 422


def test_a_record_stored_before_the_limits_never_breaks_reads(backend, clock, alice):
    """A deep record planted under the Store protocol (as an older engram could have
    written it) is listed, fetched, searched and shown in history over HTTP; the deep
    part is shown as JSON text."""
    memory = backend.memory(clock=clock, settings=Settings(auto_worker=False))
    record = memory.remember("Ana likes green tea", alice)
    deep = json.dumps(nested(300))
    backend.raw("UPDATE memories SET metadata = %s WHERE id = %s".replace("%s", "?" if backend.name == "sqlite"
                                                                          else "%s"), (deep, record.id))
    client = TestClient(create_app(memory, api_keys={KEY: "acme"}), raise_server_exceptions=False)
    user = {"user": "alice"}
    for answer in (
        client.get("/v1/memories", params=user, headers=AUTH),
        client.get(f"/v1/memories/{record.id}", params=user, headers=AUTH),
        client.get(f"/v1/memories/{record.id}/history", params=user, headers=AUTH),
        client.post("/v1/search", json={"query": "green tea", "scope": user}, headers=AUTH),
    ):
        assert answer.status_code == 200, answer.text
    shown = client.get(f"/v1/memories/{record.id}", params=user, headers=AUTH).json()["metadata"]
    assert nesting_depth(shown) <= 65
    assert memory.forget(record.id, alice).status.value == "deleted"  # a state change is never stuck


def test_bounded_json_keeps_shallow_values_and_stringifies_the_deep_part():
    assert bounded_json({"a": [1, {"b": 2}]}) == {"a": [1, {"b": 2}]}
    shown = bounded_json(nested(10), depth=3)
    assert shown == {"a": {"a": {"a": json.dumps(nested(7), separators=(",", ":"))}}}


def test_limits_are_checked_when_built():
    with pytest.raises(InvalidValueError):
        InputLimits(metadata_depth=65)
    with pytest.raises(InvalidValueError):
        InputLimits(tags=0)
