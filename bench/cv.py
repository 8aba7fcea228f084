"""Choose retrieval settings by cross-validation over units, and report the spread.

    python bench/cv.py RESULTS.json [RESULTS.json ...] [--metric recall@5] [--json]

Each RESULTS.json is the output of ``engram eval`` on ONE dataset (same queries in
every file; several files = several index settings, e.g. --cjk modes); every
retriever of every file is a candidate ("file:retriever"). Folds are the units the
settings must generalise across:

- MADial: the users (tune on one user's dialogues, report on the other's, swap);
- LoCoMo: the conversations (leave one conversation out);
- LongMemEval: five folds of questions (each question is its own haystack).

For each fold the candidate with the best mean metric on the OTHER folds is chosen
and scored on the held-out fold. Printed: per fold the choice and its held-out
score, the cross-validated mean with its min/max over folds, and for comparison
the held-out scores of the defaults ("hybrid" of the first file) and of the plain
BM25 and vector baselines.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

DEFAULT_METRIC = {"madial": "recall@5", "locomo": "recall@5", "longmemeval": "session.recall_all@5"}


def fold_of(dataset: str, row: Mapping[str, Any], index: int) -> str:
    if dataset == "madial":
        return str(row["category"])  # "user 1", "user 2"
    if dataset == "locomo":
        return str(row["id"]).split("/", 1)[0]  # the conversation
    return f"fold {index % 5 + 1}"


def metric_of(metrics: Mapping[str, Any], name: str) -> float:
    value: Any = metrics
    for part in name.split("."):
        value = value[part]
    return float(value)


def candidates(files: Sequence[Path], metric: str) -> tuple[str, dict[str, dict[str, float]], dict[str, str]]:
    """(dataset, {candidate: {query id: score}}, {query id: fold})."""
    dataset = ""
    scores: dict[str, dict[str, float]] = {}
    folds: dict[str, str] = {}
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))
        if dataset and data["dataset"] != dataset:
            raise SystemExit(f"{file}: dataset {data['dataset']}, expected {dataset}")
        dataset = data["dataset"]
        metric = metric or DEFAULT_METRIC[dataset]
        for index, row in enumerate(data["per_query"]):
            folds[row["id"]] = fold_of(dataset, row, index)
            for name, result in row["retrievers"].items():
                scores.setdefault(f"{file.stem}:{name}", {})[row["id"]] = metric_of(result["metrics"], metric)
    return dataset, scores, folds


def mean_over(scores: Mapping[str, float], ids: Sequence[str]) -> float:
    return statistics.fmean(scores[i] for i in ids) if ids else 0.0


def cross_validate(scores: Mapping[str, Mapping[str, float]], folds: Mapping[str, str],
                   compare: Sequence[str]) -> dict[str, Any]:
    names = sorted(set(folds.values()))
    common = [q for q in folds if all(q in s for s in scores.values())]
    rows = []
    for fold in names:
        train = [q for q in common if folds[q] != fold]
        test = [q for q in common if folds[q] == fold]
        best = max(sorted(scores), key=lambda name: mean_over(scores[name], train))
        row = {"fold": fold, "queries": len(test), "chosen": best, "held_out": round(mean_over(scores[best], test), 4)}
        for name in compare:
            row[name] = round(mean_over(scores[name], test), 4)
        rows.append(row)

    def spread(key: str) -> dict[str, float]:
        values = [row[key] for row in rows]
        return {"mean": round(statistics.fmean(values), 4), "min": min(values), "max": max(values)}

    return {"folds": rows, "cv": spread("held_out"), **{name: spread(name) for name in compare},
            "all_queries": {name: round(mean_over(scores[name], common), 4) for name in sorted(scores)}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--metric", default="")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    dataset, scores, folds = candidates(args.results, args.metric)
    first = args.results[0].stem
    compare = [name for name in (f"{first}:hybrid", f"{first}:bm25", f"{first}:vector") if name in scores]
    report = {"dataset": dataset, "metric": args.metric or DEFAULT_METRIC[dataset],
              **cross_validate(scores, folds, compare)}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{dataset} · {report['metric']} · {len(report['folds'])} folds")
    for row in report["folds"]:
        others = " ".join(f"{name.split(':', 1)[1]}={row[name]:.3f}" for name in compare)
        print(f"  {row['fold']:>12} (n={row['queries']}): chose {row['chosen']} -> {row['held_out']:.3f} | {others}")
    for key in ("cv", *compare):
        s = report[key]
        print(f"  {key:>40}: mean {s['mean']:.3f} (min {s['min']:.3f}, max {s['max']:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
