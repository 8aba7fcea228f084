"""Forget (soft) and purge (hard, the right to be forgotten)."""

import pytest

from engram import NotFoundError, Operation, Scope
from engram.store.base import RecordFilter
from engram.text.tokenize import query_terms

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)


def test_purge_removes_record_versions_vector_and_terms(memory, alice):
    record = memory.remember("my passport number is X123", alice)
    memory.update(record.id, alice, content="my passport number is Y456")
    memory.purge(record.id, alice, reason="user request")
    with pytest.raises(NotFoundError):
        memory.get(record.id, alice)
    assert memory._store.versions("acme", record.id) == []
    assert memory._store.vectors("acme", [record.id], memory.embedder.name) == {}
    assert memory._store.lexical("acme", RecordFilter(namespace=alice.namespace), ["passport"], 10) == []
    assert memory.search("passport", alice) == []
    purge = memory.audit.list(alice, operation="purge")
    assert [(e.record_id, e.detail["reason"]) for e in purge] == [(record.id, "user request")]
    assert all("passport" not in str(dict(e.detail)) for e in memory.audit.list(alice))
    assert memory.stats("acme").records == 0
    assert memory._store.tenants() == []


def test_purge_scope_takes_the_subtree_only(memory):
    alice = Scope("acme", ("users", "alice"))
    private = alice.child("private")
    alice2 = Scope("acme", ("users", "alice2"))
    for scope in (alice, private, alice2):
        memory.remember(f"note in {'/'.join(scope.namespace)}", scope)
    assert memory.purge_scope(alice).records == 2
    assert memory.list(alice, include_descendants=True).items == ()
    assert [r.content for r in memory.list(alice2).items] == ["note in users/alice2"]
    assert memory.scopes.namespaces(Scope("acme")) == [("users", "alice2")]


def test_purged_terms_stop_counting_in_bm25(memory, alice, bob):
    """After a purge, lexical scores equal those of a store that never held the record."""
    memory.remember("shared words about tea", alice)
    doomed = memory.remember("tea tea tea everywhere", alice)
    memory.remember("coffee and tea", bob)
    memory.purge(doomed.id, alice)
    before = memory._store.lexical("acme", RecordFilter(namespace=bob.namespace), query_terms("tea coffee"), 10)
    memory.remember("tea tea tea everywhere", alice)
    memory.purge(memory.list(alice).items[-1].id, alice)
    after = memory._store.lexical("acme", RecordFilter(namespace=bob.namespace), query_terms("tea coffee"), 10)
    assert before == after and len(after) == 1


def test_purged_then_recreated_id_starts_a_fresh_history(memory, alice):
    record = memory.remember("first life", alice)
    memory.update(record.id, alice, content="second version")
    memory.purge(record.id, alice)
    from engram.writes import MemoryDraft

    again = memory.remember_many([MemoryDraft("second life", id=record.id)], alice)[0]
    assert again.id == record.id
    assert [v.version for v in memory.history(record.id, alice)] == [1]
    assert [e.operation for e in memory.audit.list(alice, record_id=record.id)] == [
             Operation.CREATE, Operation.UPDATE, Operation.PURGE, Operation.CREATE]
