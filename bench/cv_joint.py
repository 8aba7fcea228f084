"""One setting for every dataset, chosen by cross-validation across units of all of them.

    python bench/cv_joint.py RESULTS.json [RESULTS.json ...] [PREFIX::RESULTS.json ...] [--json]

Each RESULTS.json is one ``engram eval`` run on one dataset; a retriever label
(e.g. ``-r lw07:lexical_weight=0.7``) is one candidate setting, and a candidate
must be measured on every dataset. ``PREFIX::file`` puts PREFIX before the file's
labels, so runs of another embedder join as candidates of their own (``usem3::``).
Targets: MADial recall@5 per language, LoCoMo recall@5, and for
LongMemEval both session and turn recall_all@5. Units are those of bench/cv.py
(MADial users, LoCoMo conversations, five folds of LongMemEval questions).

For each unit held out, a candidate is chosen on everything else and scored on the
held-out unit. The objective is the mean over targets of the candidate's mean on
that target's remaining queries (every dataset counts the same, whatever its
size). ``--rule mean`` chooses the best objective. ``--rule targets`` chooses,
among the candidates that meet every target on the remaining queries, the best
objective; a target is met at or above the ``--baseline`` candidate's figure on
the same queries (not lower than today) and at or above a ``--floor`` given for
it (e.g. ``--floor madial=0.65``, any target whose name starts with "madial"); if
no candidate meets them all, the one with the least total shortfall. Printed: per target
the held-out mean (min, max over its units) of the cross-validated choice, the
table of every candidate per target with its spread over units, and the folds'
choices.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cv import fold_of, metric_of

TARGET_METRICS = {"madial": ("recall@5",), "locomo": ("recall@5",),
                  "longmemeval": ("session.recall_all@5", "turn.recall_all@5")}

# {target: {candidate: {query id: score}}}, {target: {query id: unit}}
Scores = dict[str, dict[str, dict[str, float]]]
Units = dict[str, dict[str, str]]


def load(args: Sequence[str]) -> tuple[Scores, Units]:
    scores: Scores = {}
    units: Units = {}
    for arg in args:
        prefix, _, path = arg.rpartition("::")
        file = Path(path)
        data = json.loads(file.read_text(encoding="utf-8"))
        dataset = data["dataset"]
        name = f"{dataset} {data['language']}" if data.get("language") else dataset
        for metric in TARGET_METRICS[dataset]:
            target = f"{name} {metric}"
            # several files of one target: their labels join (a label repeated is the same run)
            per: dict[str, dict[str, float]] = scores.setdefault(target, {})
            for index, row in enumerate(data["per_query"]):
                # a unit is held out of every target of its dataset (LongMemEval: session and turn)
                units.setdefault(target, {})[row["id"]] = f"{name}: {fold_of(dataset, row, index)}"
                for label, result in row["retrievers"].items():
                    name_of = f"{prefix} {label}" if prefix else label
                    per.setdefault(name_of, {}).setdefault(row["id"], metric_of(result["metrics"], metric))
    shared = set.intersection(*(set(per) for per in scores.values()))
    return {t: {c: s for c, s in per.items() if c in shared} for t, per in scores.items()}, units


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def target_mean(scores: Mapping[str, float], ids: Sequence[str]) -> float:
    return mean([scores[q] for q in ids])


def objective(scores: Scores, units: Units, candidate: str, held: str | None) -> float:
    """Mean over targets of the candidate's mean on the queries outside the held-out unit."""
    per_target = []
    for target, per in scores.items():
        ids = [q for q, unit in units[target].items() if unit != held]
        per_target.append(target_mean(per[candidate], ids))
    return mean(per_target)


class Chooser:
    """Picks a candidate on the queries outside one held-out unit (see --rule)."""

    def __init__(self, scores: Scores, units: Units, rule: str, baseline: str | None,
                 floors: Mapping[str, float]) -> None:
        if rule == "targets" and baseline is None and not floors:
            raise SystemExit("--rule targets needs --baseline or --floor")
        if baseline is not None and baseline not in next(iter(scores.values())):
            raise SystemExit(f"--baseline {baseline!r} is not a candidate")
        self.scores, self.units, self.rule, self.baseline, self.floors = scores, units, rule, baseline, floors

    def train_means(self, candidate: str, held: str | None) -> dict[str, float]:
        out = {}
        for target, per in self.scores.items():
            ids = [q for q, unit in self.units[target].items() if unit != held]
            out[target] = target_mean(per[candidate], ids)
        return out

    def shortfall(self, candidate: str, held: str | None) -> float:
        got = self.train_means(candidate, held)
        base = self.train_means(self.baseline, held) if self.baseline else {}
        short = 0.0
        for target, value in got.items():
            need = max([base.get(target, 0.0)] + [f for k, f in self.floors.items() if target.startswith(k)])
            short += max(0.0, need - value - 1e-9)
        return short

    def choose(self, candidates: Sequence[str], held: str | None) -> str:
        def rank(c: str) -> tuple[float, float]:
            fall = self.shortfall(c, held) if self.rule == "targets" else 0.0
            return (-fall, objective(self.scores, self.units, c, held))
        return max(candidates, key=rank)


def spread(values: Sequence[float]) -> dict[str, float]:
    return {"mean": round(mean(values), 4), "min": round(min(values), 4), "max": round(max(values), 4)}


def cross_validate(scores: Scores, units: Units, chooser: Chooser) -> dict[str, Any]:
    candidates = sorted(next(iter(scores.values())))
    folds, targets = [], {}
    for target in scores:
        held_out = []
        for unit in sorted(set(units[target].values())):
            best = chooser.choose(candidates, unit)
            ids = [q for q, u in units[target].items() if u == unit]
            held_out.append(target_mean(scores[target][best], ids))
            folds.append({"target": target, "unit": unit, "chosen": best, "held_out": round(held_out[-1], 4)})
        table = {}
        for cand in candidates:
            per_unit = [target_mean(scores[target][cand], [q for q, u in units[target].items() if u == unit])
                        for unit in sorted(set(units[target].values()))]
            table[cand] = {"all": round(target_mean(scores[target][cand], list(units[target])), 4),
                           **spread(per_unit)}
        targets[target] = {"cv": spread(held_out), "candidates": table}
    overall = {c: round(objective(scores, units, c, None), 4) for c in candidates}
    return {"targets": targets, "folds": folds, "objective_all_data": overall,
            "shortfall_all_data": {c: round(chooser.shortfall(c, None), 4) for c in candidates},
            "chosen_on_all_data": chooser.choose(candidates, None)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="results files, each optionally PREFIX::file")
    parser.add_argument("--rule", choices=("mean", "targets"), default="mean")
    parser.add_argument("--baseline", help="the candidate no target may fall below (--rule targets)")
    parser.add_argument("--floor", action="append", default=[], help="TARGET_PREFIX=VALUE (--rule targets)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    scores, units = load(args.results)
    floors = {key: float(value) for key, _, value in (item.partition("=") for item in args.floor)}
    report = cross_validate(scores, units, Chooser(scores, units, args.rule, args.baseline, floors))
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    candidates = list(report["objective_all_data"])
    print("candidate".ljust(34) + "".join(t[:22].rjust(24) for t in report["targets"]) + "  objective shortfall")
    for cand in candidates:
        cells = "".join(
            f"{v['all']:.3f} ({v['min']:.3f}-{v['max']:.3f})".rjust(24)
            for v in (report["targets"][t]["candidates"][cand] for t in report["targets"]))
        fall = f"    {report['shortfall_all_data'][cand]:.4f}" if args.rule == "targets" else "    -"
        print(cand[:34].ljust(34) + cells + f"  {report['objective_all_data'][cand]:.4f}{fall}")
    print("cross-validated (held-out mean, min-max over units):")
    for target, data in report["targets"].items():
        chosen = [f["chosen"].split(":")[0] for f in report["folds"] if f["target"] == target]
        cv = data["cv"]
        print(f"  {target:>36}: {cv['mean']:.3f} ({cv['min']:.3f}-{cv['max']:.3f})  chose {', '.join(chosen)}")
    print(f"chosen on all data: {report['chosen_on_all_data']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
