"""Scopes and isolation: tenants never see each other; namespaces match segment by segment."""

import pytest

from engram import FakeHashEmbedder, Memory, NotFoundError, Scope
from engram.store.base import RecordFilter

from .conftest import KNOWN_CAPABILITIES

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)


def test_capabilities_are_declared_from_the_known_vocabulary(backend):
    assert backend.capabilities <= KNOWN_CAPABILITIES
    assert backend.store().dialect == backend.name


def test_memory_open_selects_the_backend(backend, alice):
    with Memory.open(backend.target, embedder=FakeHashEmbedder()) as memory:
        assert memory._store.dialect == backend.name
        record = memory.remember("opened through Memory.open", alice)
        assert memory.get(record.id, alice).content == "opened through Memory.open"


def test_tenants_are_isolated_everywhere(memory):
    acme, globex = Scope("acme", ("users", "alice")), Scope("globex", ("users", "alice"))
    mine = memory.remember("acme secret plan", acme)
    memory.remember("globex secret plan", globex)
    with pytest.raises(NotFoundError):
        memory.get(mine.id, globex)
    with pytest.raises(NotFoundError):
        memory.history(mine.id, globex)
    assert [h.record.content for h in memory.search("secret plan", globex)] == ["globex secret plan"]
    assert [r.content for r in memory.list(globex).items] == ["globex secret plan"]
    assert memory._store.get("globex", [mine.id]) == []
    assert memory._store.vectors("globex", [mine.id], memory.embedder.name) == {}
    assert memory._store.versions("globex", mine.id) == []
    assert all(e.tenant == "globex" for e in memory.audit.list(globex))
    assert memory._store.tenants() == ["acme", "globex"]
    assert memory.stats("globex").records == 1
    assert memory.stats().records == 2


def test_namespaces_match_segment_by_segment(memory):
    exact = Scope("acme", ("users", "alice"))
    nested = Scope("acme", ("users", "alice", "private"))
    sibling = Scope("acme", ("users", "alice2"))
    for scope, text in ((exact, "tea exact"), (nested, "tea nested"), (sibling, "tea sibling")):
        memory.remember(text, scope)
    assert {h.record.content for h in memory.search("tea", exact)} == {"tea exact"}
    assert {h.record.content for h in memory.search("tea", exact, include_descendants=True)} == {
        "tea exact", "tea nested"}
    assert {r.content for r in memory.list(exact, include_descendants=True).items} == {"tea exact", "tea nested"}
    assert {h.record.content for h in memory.search("tea", Scope("acme"), include_descendants=True)} == {
        "tea exact", "tea nested", "tea sibling"}
    assert memory.search("tea", Scope("acme")) == []
    assert memory.scopes.namespaces(Scope("acme", ("users",))) == [
               ("users", "alice"), ("users", "alice", "private"), ("users", "alice2")]
    assert memory.scopes.namespaces(exact) == [("users", "alice"), ("users", "alice", "private")]


def test_get_outside_the_records_scope_is_not_found(memory, alice, bob):
    record = memory.remember("alice only", alice)
    with pytest.raises(NotFoundError):
        memory.get(record.id, bob)
    assert memory.get(record.id, Scope("acme", ("users",))).id == record.id  # a parent scope contains it


@pytest.mark.parametrize("label", [
    "O'Brien; DROP TABLE memories; --", "100%_done", "back\\slash", "空格 和 中文", "emoji 🧠", "a.b", "*",
    "x" * 256,
])
def test_unusual_labels_are_plain_data(memory, label):
    scope = Scope(label, (label, "notes"))
    record = memory.remember(f"note under {label}", scope)
    assert memory.get(record.id, scope).scope == scope
    assert [r.id for r in memory.list(scope).items] == [record.id]
    assert memory.scopes.namespaces(Scope(label)) == [(label, "notes")]
    assert label in memory._store.tenants()
    assert len(memory._store.query(label, RecordFilter(namespace=(label, "notes")))) == 1
    assert len(memory._store.query("acme", RecordFilter(descendants=True))) == 0


def test_a_wildcard_tenant_name_sees_only_itself(memory, alice):
    memory.remember("acme data", alice)
    star = Scope("*", ("users", "alice"))
    memory.remember("star data", star)
    assert [r.content for r in memory.list(star).items] == ["star data"]
    assert [h.record.content for h in memory.search("data", star)] == ["star data"]
    assert memory.stats("*").records == 1
