"""Choose the lexical weight of past-conversation search (BM25 vs vectors over turns)
by leave-one-unit-out cross-validation on LoCoMo conversations and LongMemEval questions.

    python bench/turn_weight_cv.py --locomo ../shared/bench/locomo/locomo_dev.json \
        --longmemeval ../shared/bench/longmemeval/longmemeval_s_dev60.json.gz

For each held-out unit, the weight with the best mean recall@5 on the other units is
applied to it; the table reports each weight's recall@5, the held-out (cross-validated)
recall@5 and which weights the folds chose.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections import Counter
from pathlib import Path

from engram import Memory, PIIPolicy, Scope, Settings, USEEmbedder
from engram.episodes.search import SearchOptions, embed_missing, rank_turns
from engram.eval.data import load
from engram.model import Message
from engram.store.sqlite import SQLiteStore

SCOPE = Scope("bench", ("users", "u"))
WEIGHTS = (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
K = 5


def unit_recalls(unit, embedder) -> dict[float, float]:
    path = Path(tempfile.mkdtemp()) / "cv.db"
    with Memory(SQLiteStore(str(path)), embedder=embedder, settings=Settings(auto_worker=False),
                pii=PIIPolicy(default="allow", actions={})) as memory:
        sessions: dict[str, list] = {}
        for doc in unit.docs:
            sessions.setdefault(doc.group or "s", []).append(doc)
        for session, docs in sessions.items():
            memory.threads.record([Message("user", d.text, d.id, None, d.at) for d in docs], SCOPE, thread_id=session)
        embed_missing(memory._core, SCOPE, False, 10**9)
        out = {}
        for weight in WEIGHTS:
            scores = []
            for query in unit.queries:
                ranked = rank_turns(memory._core, SCOPE, query.text, SearchOptions(lexical_weight=weight,
                                                                                   embed_limit=0))
                top = {t.message_id for t, _ in ranked[:K]}
                scores.append(len(query.gold & top) / len(query.gold))
            out[weight] = statistics.fmean(scores)
        return out


def cross_validate(per_unit: list[dict[float, float]]) -> tuple[float, Counter]:
    held, chosen = [], Counter()
    for i, unit in enumerate(per_unit):
        others = [u for j, u in enumerate(per_unit) if j != i]
        best = max(WEIGHTS, key=lambda w: (statistics.fmean(u[w] for u in others), -abs(w - 0.6)))
        chosen[best] += 1
        held.append(unit[best])
    return statistics.fmean(held), chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path)
    parser.add_argument("--longmemeval", type=Path)
    parser.add_argument("--out", type=Path, default=Path("bench/results/turn_weight_cv.json"))
    args = parser.parse_args()
    embedder = USEEmbedder()
    results = {}
    for name, path in (("locomo", args.locomo), ("longmemeval", args.longmemeval)):
        if path is None:
            continue
        per_unit = [unit_recalls(unit, embedder) for unit in load(name, path).units]
        cv, chosen = cross_validate(per_unit)
        results[name] = {"units": len(per_unit),
                         "recall_at_5": {str(w): statistics.fmean(u[w] for u in per_unit) for w in WEIGHTS},
                         "cv_recall_at_5": cv, "chosen": {str(w): n for w, n in chosen.items()}}
        print(name, json.dumps(results[name]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
