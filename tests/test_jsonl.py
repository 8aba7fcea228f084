"""Export/import: lossless round trip, validation before any write."""

import io
import json

import pytest

from engram import ConflictError, FakeHashEmbedder, ImportFormatError, Memory, Scope
from engram.store.sqlite import SQLiteStore


def exported(memory, scope) -> str:
    buffer = io.StringIO()
    memory.transfer.export_to(buffer, scope)
    return buffer.getvalue()


@pytest.fixture
def target(tmp_path, clock):
    with Memory(SQLiteStore(str(tmp_path / "target.db")), embedder=FakeHashEmbedder(), clock=clock) as mem:
        yield mem


def test_round_trip_is_lossless_including_versions(memory, target, alice, clock):
    a = memory.remember("张三 likes tea", alice, kind="preference", tags=["drinks"], metadata={"n": 1})
    clock.advance(minutes=5)
    memory.update(a.id, alice, content="张三 likes green tea", reason="refined")
    b = memory.remember("deleted later", alice.child("private"))
    memory.forget(b.id, alice.child("private"))
    text = exported(memory, Scope("acme"))
    result = target.transfer.import_from(io.StringIO(text))
    assert (result.imported, result.skipped) == (2, 0)
    for record_id, scope in ((a.id, alice), (b.id, alice.child("private"))):
        assert target.get(record_id, scope) == memory.get(record_id, scope)
        assert target.history(record_id, scope) == memory.history(record_id, scope)
    assert exported(target, Scope("acme")).splitlines()[1:] == text.splitlines()[1:]
    assert target.search("green tea", alice)[0].record.id == a.id


def test_malformed_line_is_reported_with_its_number_and_nothing_is_written(memory, target, alice):
    memory.remember_many(["one", "two"], alice)
    lines = exported(memory, alice).splitlines()
    lines.insert(2, '{"record": {"id": "x"')
    with pytest.raises(ImportFormatError) as info:
        target.transfer.import_from(io.StringIO("\n".join(lines)))
    assert info.value.line == 3
    assert target.stats().records == 0


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d["record"].update(importance=3), "importance"),
        (lambda d: d["record"].update(kind="opinion"), "kind"),
        (lambda d: d["record"].pop("content"), "content"),
        (lambda d: d["record"].update(namespace=["users", ""]), "empty"),
        (lambda d: d["record"].update(tenant="other"), "tenant"),
    ],
)
def test_invalid_records_are_refused_with_the_line(memory, target, alice, mutate, message):
    memory.remember("x", alice)
    header, line = exported(memory, alice).splitlines()
    data = json.loads(line)
    mutate(data)
    with pytest.raises(ImportFormatError, match=message) as info:
        target.transfer.import_from(io.StringIO(header + "\n" + json.dumps(data)))
    assert info.value.line == 2


def test_not_an_export(target):
    with pytest.raises(ImportFormatError, match="not an engram export"):
        target.transfer.import_from(io.StringIO('{"hello": 1}\n'))
    with pytest.raises(ImportFormatError, match="empty"):
        target.transfer.import_from(io.StringIO(""))


def test_conflicts_error_skip_or_replace(memory, target, alice):
    record = memory.remember("original", alice)
    text = exported(memory, alice)
    target.transfer.import_from(io.StringIO(text))
    with pytest.raises(ConflictError):
        target.transfer.import_from(io.StringIO(text))
    assert target.transfer.import_from(io.StringIO(text), on_conflict="skip").skipped == 1
    target.update(record.id, alice, content="changed in target")
    assert target.transfer.import_from(io.StringIO(text), on_conflict="replace").imported == 1
    assert target.get(record.id, alice).content == "original"
    assert len(target.history(record.id, alice)) == 1
