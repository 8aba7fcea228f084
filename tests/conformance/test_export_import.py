"""Export/import (JSONL): lossless within a backend and across backends."""

import io

import pytest

from engram import ConflictError, FakeHashEmbedder, ImportFormatError, Memory, Scope, ValidationError

from . import pgtools

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)


def _fill(memory: Memory, scope: Scope) -> None:
    kept = memory.remember("prefers tea", scope, kind="preference", tags=["drinks"], metadata={"n": 1})
    memory.update(kept.id, scope, content="prefers green tea", reason="more precise")
    gone = memory.remember("old address", scope)
    memory.forget(gone.id, scope)
    memory.remember("private note", scope.child("private"), sensitivity="personal")


def _snapshot(memory: Memory, scope: Scope):
    items = memory.list(scope, include_descendants=True, statuses=None, limit=100).items
    return [(r, memory.history(r.id, scope)) for r in sorted(items, key=lambda r: r.id)]


def test_export_then_import_into_an_empty_store_is_lossless(make_backend, backend, alice, clock):
    source = backend.memory(clock=clock)
    _fill(source, alice)
    buffer = io.StringIO()
    assert source.transfer.export_to(buffer, alice) == 3
    target = make_backend(backend.name).memory(clock=clock)
    result = target.transfer.import_from(io.StringIO(buffer.getvalue()))
    assert (result.imported, result.skipped, result.tenant) == (3, 0, "acme")
    assert _snapshot(target, alice) == _snapshot(source, alice)
    assert [h.record.content for h in target.search("green tea", alice)] == ["prefers green tea"]


def test_export_from_one_backend_imports_into_the_other(make_backend, alice, clock):
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    sqlite_mem = make_backend("sqlite").memory(clock=clock)
    pg_mem = make_backend("postgres").memory(clock=clock)
    _fill(sqlite_mem, alice)
    first = io.StringIO()
    sqlite_mem.transfer.export_to(first, alice)
    pg_mem.transfer.import_from(io.StringIO(first.getvalue()))
    assert _snapshot(pg_mem, alice) == _snapshot(sqlite_mem, alice)
    back = io.StringIO()
    pg_mem.transfer.export_to(back, alice)
    fresh = make_backend("sqlite").memory(clock=clock)
    fresh.transfer.import_from(io.StringIO(back.getvalue()))
    assert _snapshot(fresh, alice) == _snapshot(sqlite_mem, alice)


def test_import_conflicts_and_bad_files_write_nothing(backend, alice, clock):
    memory = backend.memory(clock=clock)
    _fill(memory, alice)
    exported = io.StringIO()
    memory.transfer.export_to(exported, alice)
    text = exported.getvalue()
    before = memory.stats("acme")
    with pytest.raises(ConflictError):
        memory.transfer.import_from(io.StringIO(text))
    broken = text.rstrip("\n") + "\n{not json\n"
    with pytest.raises(ImportFormatError) as info:
        memory.transfer.import_from(io.StringIO(broken), on_conflict="replace")
    assert info.value.line == len(text.splitlines()) + 1
    after = memory.stats("acme")
    assert (after.records, after.versions, after.audit_events) == (before.records, before.versions,
                                                                    before.audit_events)
    replaced = memory.transfer.import_from(io.StringIO(text), on_conflict="replace")
    assert replaced.imported == 3
    assert memory.transfer.import_from(io.StringIO(text), on_conflict="skip").skipped == 3


def test_import_of_a_nul_byte_is_refused_alike(backend, alice, clock):
    memory = backend.memory(clock=clock, embedder=FakeHashEmbedder())
    memory.remember("clean", alice, tags=["ok"])
    exported = io.StringIO()
    memory.transfer.export_to(exported, alice)
    poisoned = exported.getvalue().replace('"ok"', '"o\\u0000k"')
    target_stats = memory.stats("acme")
    with pytest.raises(ValidationError):
        memory.transfer.import_from(io.StringIO(poisoned), on_conflict="replace")
    assert memory.stats("acme").versions == target_stats.versions
