"""A query is embedded once: per context() whatever the number of scopes, and again
only when it falls out of the recent-queries LRU."""

from __future__ import annotations

import numpy as np
import pytest

from engram import FakeClock, FakeHashEmbedder, Memory, Scope
from engram.embed.query_cache import QueryCache
from engram.store.sqlite import SQLiteStore


class CountingEmbedder(FakeHashEmbedder):
    """The fake hash embedder, counting the texts it embeds per role."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, int] = {"query": 0, "passage": 0}

    def embed(self, texts, *, role="passage"):
        self.calls[role] += len(texts)
        return super().embed(texts, role=role)


@pytest.fixture
def counted(tmp_path):
    embedder = CountingEmbedder()
    with Memory(SQLiteStore(str(tmp_path / "m.db")), embedder=embedder, clock=FakeClock()) as memory:
        yield memory, embedder


def test_context_over_user_and_org_embeds_the_query_once(counted):
    memory, embedder = counted
    user, org = Scope.for_user("acme", "alice"), Scope.for_org("acme", "ops")
    memory.remember("alice drinks green tea every morning", user)
    memory.remember("the ops team orders tea on Fridays", org)
    before = embedder.calls["query"]
    block = memory.context("who drinks tea", [user, org])
    assert embedder.calls["query"] - before == 1
    assert {hit.record.scope for hit in block.hits} == {user, org}


def test_a_repeated_query_is_served_from_the_lru_and_a_new_one_is_not(counted):
    memory, embedder = counted
    alice = Scope.for_user("acme", "alice")
    memory.remember("alice drinks green tea every morning", alice)
    first = memory.search("what does alice drink", alice)
    again = memory.search("what does alice drink", alice)
    assert embedder.calls["query"] == 1
    assert [(h.record.id, h.score) for h in first] == [(h.record.id, h.score) for h in again]
    memory.search("something else entirely", alice)
    assert embedder.calls["query"] == 2


def test_the_lru_drops_the_least_recently_used_and_hands_out_read_only_rows():
    inner = CountingEmbedder()
    cache = QueryCache(inner, size=2)
    a = cache.embed(["a"], role="query")[0]
    cache.embed(["b"], role="query")
    cache.embed(["a"], role="query")  # a is now the most recent
    cache.embed(["c"], role="query")  # drops b
    assert inner.calls["query"] == 3
    cache.embed(["a"], role="query")
    assert inner.calls["query"] == 3
    cache.embed(["b"], role="query")
    assert inner.calls["query"] == 4
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 1.0
    np.testing.assert_array_equal(a, inner.embed(["a"], role="query")[0])


def test_passages_are_never_cached():
    inner = CountingEmbedder()
    cache = QueryCache(inner)
    cache.embed(["same text"])
    cache.embed(["same text"])
    assert inner.calls["passage"] == 2 and inner.calls["query"] == 0
