"""The retrieval steps the benchmarks chose: min-max fusion, context and date lifts,
transcript rewriting, long-query weighting. Small cases, hand-checked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from engram import FakeClock, FakeHashEmbedder, Memory, Scope, Settings
from engram.errors import InvalidValueError
from engram.model import Source
from engram.search.retrieve import (
    RetrievalSettings,
    fuse_minmax,
    lexical_share,
    lift_by_context,
    lift_inside,
)
from engram.search.rewrite import rewrite_query, transcript_lines
from engram.search.timehints import TimeWindow, time_window
from engram.store.base import ScoredId
from engram.store.sqlite import SQLiteStore
from engram.text.tokenize import query_terms
from engram.writes import MemoryDraft

NOW = datetime(2023, 8, 20, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("query", "start", "end"), [
    ("What did Maria share on 16 June, 2023?", datetime(2023, 6, 15), datetime(2023, 6, 18)),
    ("What did Melanie paint on October 13, 2023?", datetime(2023, 10, 12), datetime(2023, 10, 15)),
    ("notes from 2023-06-16", datetime(2023, 6, 15), datetime(2023, 6, 18)),
    ("What did they paint in July 2023?", datetime(2023, 7, 1), datetime(2023, 8, 8)),
    ("2023年12月的晚会", datetime(2023, 12, 1), datetime(2024, 1, 8)),
    ("2024年2月28日玩了什么", datetime(2024, 2, 27), datetime(2024, 3, 1)),
])
def test_absolute_dates(query, start, end):
    assert time_window(query, NOW) == TimeWindow(start.replace(tzinfo=UTC), end.replace(tzinfo=UTC))


def test_relative_dates_and_none():
    yesterday = time_window("what did I eat yesterday?", NOW)
    assert yesterday == TimeWindow(datetime(2023, 8, 19, tzinfo=UTC), datetime(2023, 8, 20, tzinfo=UTC))
    month = time_window("plants I bought in the last month", NOW)
    assert month.contains(NOW - timedelta(days=30)) and not month.contains(NOW - timedelta(days=90))
    assert time_window("How many times has Melanie gone to the beach in 2023?", NOW) is None  # a year is too broad
    assert time_window("where do I keep my sneakers", NOW) is None
    no_such_day = time_window("on 31 February, 2023", NOW)  # falls back to the month
    assert no_such_day.start == datetime(2023, 2, 1, tzinfo=UTC)


def test_rewrite_keeps_the_users_lines():
    transcript = '<Bart>:"我今天拿到了满分！"\n<Assistant>:"哇，太棒了！"\n<Bart>:"我应该怎么庆祝？"'
    assert rewrite_query(transcript) == "我今天拿到了满分！\n我应该怎么庆祝？"
    assert rewrite_query("Alice: hi\nBob: hello") == "hi\nhello"  # no assistant: labels dropped only
    question = "When did Caroline go to the LGBTQ support group?"
    assert rewrite_query(question) == question
    assert transcript_lines("Note: one line only") is None
    assert transcript_lines("Alice: hi\nthis line has no speaker") is None


def test_minmax_scales_each_list():
    lexical = [ScoredId("a", 10.0), ScoredId("b", 5.0)]
    vector = [ScoredId("b", 0.9), ScoredId("c", 0.8), ScoredId("d", 0.7)]
    pool = fuse_minmax(lexical, vector, {"a": 0.6}, 0.5)
    fused = dict(zip(pool.ids, pool.relevance.tolist()))
    assert pool.ids == ["a", "b", "c", "d"]  # lexical first, then vector-only, in list order
    assert fused["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)  # cosine under the pool's floor
    assert fused["b"] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert fused["c"] == pytest.approx(0.5 * 0.0 + 0.5 * 0.5)
    assert pool.vector[1] == pytest.approx(0.9)  # the raw cosine stays the signal shown
    single = fuse_minmax([], [ScoredId("x", 0.5)], {"y": 0.4}, 0.5)
    assert dict(zip(single.ids, single.relevance.tolist())) == {"x": 0.5, "y": 0.0}
    assert single.best(1).ids == ["x"]


def test_long_queries_lean_on_vectors():
    settings = RetrievalSettings(lexical_weight=0.6, long_query_terms=4)
    assert lexical_share(settings, len(query_terms("red apple pie"))) == pytest.approx(0.6)
    assert lexical_share(settings, len(query_terms("one two three four five six seven eight"))) == pytest.approx(0.3)
    assert lexical_share(RetrievalSettings(retriever="bm25"), 2) == 1.0
    with pytest.raises(InvalidValueError):
        RetrievalSettings(long_query_terms=-1)


def _record(memory, scope, key, thread, at):
    return memory.remember_many([MemoryDraft(f"memory {key}", valid_from=at, source=Source(thread_id=thread),
                                             id=key.ljust(32, "0"))], scope)[0]


def test_context_lifts_neighbours_and_thread(tmp_path):
    scope = Scope("t", ("u",))
    with Memory(SQLiteStore(str(tmp_path / "m.db")), embedder=FakeHashEmbedder(), clock=FakeClock()) as memory:
        start = datetime(2023, 1, 1, tzinfo=UTC)
        records = {
            "a": _record(memory, scope, "a", "s1", start),
            "b": _record(memory, scope, "b", "s1", start + timedelta(seconds=30)),
            "c": _record(memory, scope, "c", "s1", start + timedelta(hours=2)),
            "d": _record(memory, scope, "d", "s2", start + timedelta(seconds=60)),
        }
    order = [records[key] for key in "abcd"]
    relevance = np.array([0.9, 0.2, 0.2, 0.2])
    threads = [r.source.thread_id for r in order]
    times = np.array([r.valid_from.timestamp() for r in order])
    settings = RetrievalSettings(neighbour_weight=0.5, neighbour_window_s=120, thread_weight=0.0)
    a, b, c, d = lift_by_context(relevance, threads, times, settings).tolist()
    assert b == pytest.approx(0.2 + 0.5 * 0.9 * 0.8)  # said 30 s after a strong hit
    assert c == pytest.approx(0.2)  # same thread, hours later
    assert d == pytest.approx(0.2)  # other thread
    assert a >= 0.9  # nothing is pushed down
    by_thread = lift_by_context(relevance, threads, times, RetrievalSettings(neighbour_weight=0, thread_weight=0.1))
    assert by_thread[2] == pytest.approx(0.2 + 0.1 * 0.9 * 0.8)
    window = TimeWindow(start - timedelta(days=1), start + timedelta(minutes=5))
    inside = lift_inside(relevance, times, window, 0.5)
    assert inside[1] == pytest.approx(0.6) and inside[2] == pytest.approx(0.2)


def test_a_date_in_the_query_finds_that_days_memories(tmp_path):
    scope = Scope("t", ("u",))
    clock = FakeClock(datetime(2024, 1, 1, tzinfo=UTC))
    settings = Settings(db=str(tmp_path / "m.db"), embedder="fake-hash")
    with Memory.open(settings.db, embedder=FakeHashEmbedder(), settings=settings, clock=clock) as memory:
        memory.remember_many([MemoryDraft(f"went hiking with friends, trip number {i}",
                                          valid_from=datetime(2023, 3, 1, tzinfo=UTC) + timedelta(days=7 * i))
                              for i in range(20)], scope)
        hits = memory.search("what did I do on 24 May, 2023?", scope, k=3)
        assert hits[0].record.valid_from.date().isoformat() == "2023-05-24"
        plain = Memory(memory._store, embedder=FakeHashEmbedder(), settings=Settings(db=settings.db, time_weight=0),
                       clock=clock)
        assert plain.search("what did I do on 24 May, 2023?", scope, k=3)[0].record.valid_from.day != 24
