"""Hybrid retrieval behaviour: scoping, filters, signals, CJK, context blocks."""

import os
from datetime import timedelta
from pathlib import Path

import pytest

from engram import InvalidValueError, Kind, Scope
from engram.eval.data import load_locomo


def test_search_is_segment_exact_unless_descendants_asked(memory):
    exact = Scope("acme", ("users", "alice"))
    nested = Scope("acme", ("users", "alice", "private"))
    sibling = Scope("acme", ("users", "alice2"))
    for scope, text in ((exact, "tea exact"), (nested, "tea nested"), (sibling, "tea sibling")):
        memory.remember(text, scope)
    assert {h.record.content for h in memory.search("tea", exact)} == {"tea exact"}
    found = {h.record.content for h in memory.search("tea", exact, include_descendants=True)}
    assert found == {"tea exact", "tea nested"}


def test_filters_kind_tags_category_metadata_time(memory, alice, clock):
    memory.remember("report style short", alice, kind="preference", tags=["reports"], metadata={"level": 1})
    clock.advance(days=2)
    memory.remember("report approval three levels", alice, kind="rule", category="finance",
                    metadata={"level": 3, "team": "ops"})
    def contents(**kw):
        return {h.record.content for h in memory.search("report", alice, **kw)}
    assert contents(kinds=["rule"]) == {"report approval three levels"}
    assert contents(tags=["reports"]) == {"report style short"}
    assert contents(category="finance") == {"report approval three levels"}
    assert contents(metadata={"level": {"$gte": 2}}) == {"report approval three levels"}
    assert contents(metadata={"team": {"$ne": "ops"}}) == {"report style short"}
    assert contents(metadata={"level": 1}) == {"report style short"}
    assert contents(created_after=clock.now() - timedelta(days=1)) == {"report approval three levels"}


@pytest.mark.parametrize("bad", [{"metadata": {"a": {"$regex": "x"}}}, {"metadata": {"a b": 1}}, {"k": 0},
                                 {"kinds": ["opinion"]}, {"retriever": "magic"}])
def test_bad_search_arguments_are_typed_errors(memory, alice, bad):
    memory.remember("anything", alice)
    with pytest.raises(InvalidValueError):
        memory.search("anything", alice, **bad)


def test_hits_explain_themselves(real_memory, alice):
    real_memory.remember("I prefer concise reports with bullet points", alice, kind="preference", importance=0.9)
    real_memory.remember("The office is closed on Fridays", alice)
    hits = real_memory.search("how should reports be written", alice, k=2)
    top = hits[0]
    assert top.record.content.startswith("I prefer concise reports")
    assert top.signals.lexical == 1.0 and top.signals.vector > hits[1].signals.vector
    assert top.signals.importance == 0.9 and 0 < top.signals.recency <= 1
    assert top.score > hits[1].score


def test_chinese_lexical_search_finds_words_inside_sentences(memory, alice):
    memory.remember("我们公司采用三级审批流程", alice, kind="rule")
    memory.remember("张三喜欢喝绿茶", alice)
    hits = memory.search("审批流程是什么", alice, retriever="bm25")
    assert [h.record.content for h in hits] == ["我们公司采用三级审批流程"]


def test_min_score_and_k(memory, alice):
    memory.remember_many([f"coffee note {i}" for i in range(20)], alice)
    assert len(memory.search("coffee", alice, k=5)) == 5
    assert memory.search("coffee", alice, min_score=0.99) == []


def test_context_groups_by_kind_within_budget_deterministically(real_memory, alice):
    real_memory.remember("Prefers concise reports", alice, kind="preference")
    real_memory.remember("Company uses a three-level approval flow for reports", alice, kind="rule")
    real_memory.remember("Quarterly reports go to Zhang San", alice, kind="fact")  # related: the floor keeps it
    real_memory.remember("Submit the quarterly report by Friday", alice, kind="todo")
    block = real_memory.context("write the quarterly report", alice, budget_tokens=400)
    text = block.text
    assert text.index("### Preferences") < text.index("### Facts") < text.index("### Rules") < text.index("### To-dos")
    assert block.tokens <= 400
    again = real_memory.context("write the quarterly report", alice, budget_tokens=400)
    assert again.text == text
    small = real_memory.context("write the quarterly report", alice, budget_tokens=25)
    assert small.tokens <= 25 and small.dropped > 0 and len(small.hits) >= 1


def test_context_from_user_and_org_scopes(memory, alice):
    org = Scope.for_org("acme", "acme-corp")
    memory.remember("Travel must be booked through the portal", org, kind=Kind.RULE, read_only=True)
    memory.remember("Prefers aisle seats when travelling", alice, kind=Kind.PREFERENCE)
    block = memory.context("book travel", [alice, org])
    assert "portal" in block.text and "aisle" in block.text



LOCOMO = Path(os.environ.get("ENGRAM_BENCH_DIR") or Path(__file__).resolve().parents[2] / "shared" / "bench") \
    / "locomo" / "locomo_dev.json"


@pytest.mark.skipif(not LOCOMO.exists(), reason="../shared/bench is not available")
def test_asking_for_more_results_never_reorders_the_first_ones(real_memory, alice):
    """The top results come from a pool of fixed size (Settings.candidate_pool), so
    search(k=5) is the start of search(k=20) and of search(k=200), even when the
    deeper search reaches past that pool. (Before, the pool grew with k and 67 of
    80 LoCoMo questions got a different top 5 at k=100.)"""
    conversation = load_locomo(LOCOMO).units[0]
    real_memory.remember_many([doc.text for doc in conversation.docs[:400]], alice)
    for question in conversation.queries[:40]:
        first = [h.record.id for h in real_memory.search(question.text, alice, k=5)]
        assert [h.record.id for h in real_memory.search(question.text, alice, k=20)][:5] == first, question.text
        deep = [h.record.id for h in real_memory.search(question.text, alice, k=200)]
        assert deep[:5] == first and len(deep) == len(set(deep)) == 200, question.text
