"""Issue 2's guard: with engram's default settings and embedder, hybrid retrieval
beats BM25 alone on a slice of LoCoMo, both measured here in the same run (a
relative check: no absolute score is assumed).

Both retrievers search the same index, where each reply carries the question it
answers (``Source.reply_to``); that made BM25 alone find most answers within the
top 5 (full LoCoMo: BM25 0.669, hybrid 0.679, a tie on some conversations), so
the margin that must hold on every slice is at 10, and hybrid must beat vectors
alone at both cut-offs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.eval.runner import EvalConfig, run_eval

BENCH = Path(os.environ.get("ENGRAM_BENCH_DIR") or Path(__file__).resolve().parents[2] / "shared" / "bench")
LOCOMO = BENCH / "locomo" / "locomo_dev.json"


@pytest.mark.skipif(not LOCOMO.exists(), reason="../shared/bench is not available")
def test_hybrid_beats_bm25_on_a_locomo_slice(tmp_path):
    config = EvalConfig(dataset="locomo", data=LOCOMO, ks=(5, 10), retrievers=("hybrid",), limit_units=2,
                        out=tmp_path / "results.json", cache_dir=tmp_path / "cache")
    results = run_eval(config)
    scores = {name: summary["overall"] for name, summary in results["retrievers"].items()}
    assert results["queries"] > 200
    assert scores["hybrid"]["recall@10"] > scores["bm25"]["recall@10"], scores
    assert scores["hybrid"]["hit@10"] > scores["bm25"]["hit@10"], scores
    for k in (5, 10):
        assert scores["hybrid"][f"recall@{k}"] > scores["vector"][f"recall@{k}"], scores
