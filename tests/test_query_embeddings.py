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


def test_the_context_block_fits_its_budget_exactly_as_rendering_each_trial_would():
    """build_context counts the block's size as hits are added; the choice must equal
    rendering every trial block and estimating its tokens (the former way)."""
    import random
    from datetime import UTC, datetime

    from engram.model import Kind, MemoryRecord, SearchHit, Signals
    from engram.search.context import build_context, estimate_tokens, render

    rnd = random.Random(3)
    words = ["tea", "report", "deadline", "绿茶", "周末爬山", "Berlin", "a much longer sentence about the project"]
    now = datetime(2024, 1, 1, tzinfo=UTC)
    for trial in range(60):
        hits = [SearchHit(MemoryRecord(
            id=f"r{trial}-{i}", scope=Scope("t", ("u",)), kind=rnd.choice(list(Kind)),
            content=" ".join(rnd.choices(words, k=rnd.randint(1, 12))), importance=0.5, confidence=1.0,
            created_at=now, updated_at=now, valid_from=now), 1.0 - i / 100, Signals()) for i in range(rnd.randint(1, 30))]
        budget = rnd.randint(5, 300)
        for language in ("en", "zh"):
            chosen: list = []
            for hit in hits:
                if estimate_tokens(render([h.record for h in chosen + [hit]], language)) <= budget:
                    chosen = chosen + [hit]
            block = build_context(hits, "q", budget, language)
            assert [h.record.id for h in block.hits] == [h.record.id for h in chosen]
            assert block.tokens == estimate_tokens(render([h.record for h in chosen], language)) <= budget or not chosen
