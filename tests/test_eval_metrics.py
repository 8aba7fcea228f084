"""Ranking metrics on hand-computed examples."""

from __future__ import annotations

import math

import pytest

from engram.eval.metrics import (
    group_ranking,
    hit_at,
    ndcg_at,
    query_metrics,
    recall_all_at,
    recall_at,
    summarize,
)

RANKED = ["a", "x", "b", "y", "z", "c"]
GOLD = {"a", "b", "c"}


def test_recall_hit_and_recall_all():
    assert recall_at(RANKED, GOLD, 1) == pytest.approx(1 / 3)
    assert recall_at(RANKED, GOLD, 3) == pytest.approx(2 / 3)
    assert recall_at(RANKED, GOLD, 10) == 1.0
    assert hit_at(RANKED, GOLD, 1) == 1.0 and hit_at(RANKED, {"c"}, 5) == 0.0
    assert recall_all_at(RANKED, GOLD, 5) == 0.0 and recall_all_at(RANKED, GOLD, 6) == 1.0


def test_ndcg_by_hand():
    # relevant at ranks 1 and 3 of k=3; ideal puts the 3 relevant items at ranks 1..3
    dcg = 1 / math.log2(2) + 1 / math.log2(4)
    ideal = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(RANKED, GOLD, 3) == pytest.approx(dcg / ideal)
    # one gold item at rank 2: 1/log2(3) over an ideal of 1
    assert ndcg_at(["x", "a"], {"a"}, 5) == pytest.approx(1 / math.log2(3))
    assert ndcg_at(["x"], set(), 5) == 0.0


def test_recall_without_gold_is_an_error():
    with pytest.raises(ValueError):
        recall_at(RANKED, set(), 5)


def test_group_ranking_first_appearance():
    turns = ["s1_1", "s2_4", "s1_3", "s3_1"]
    assert group_ranking(turns, lambda t: t.split("_")[0]) == ["s1", "s2", "s3"]


def test_query_metrics_and_summary():
    row = query_metrics(["a", "b"], {"b"}, (1, 2), ("recall", "hit"))
    assert row == {"recall@1": 0.0, "recall@2": 1.0, "hit@1": 0.0, "hit@2": 1.0}
    rows = [
        {"category": "1", "metrics": {"recall@1": 1.0}},
        {"category": "1", "metrics": {"recall@1": 0.0}},
        {"category": "2", "metrics": {"recall@1": 1.0}},
    ]
    summary = summarize(rows)
    assert summary["n"] == 3
    assert summary["overall"]["recall@1"] == pytest.approx(2 / 3)
    assert summary["by_category"]["1"] == {"n": 2, "recall@1": 0.5}


def test_summary_of_levels():
    rows = [{"category": "t", "metrics": {"turn": {"r@1": 1.0}, "session": {"r@1": 1.0}}},
            {"category": "t", "metrics": {"turn": {"r@1": 0.0}, "session": {"r@1": 1.0}}}]
    assert summarize(rows)["overall"] == {"turn": {"r@1": 0.5}, "session": {"r@1": 1.0}}
