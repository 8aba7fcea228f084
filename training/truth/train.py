"""Train the judge and write ``src/engram/pipeline/judge/weights.npz``.

    PYTHONPATH=src python -m training.truth.train            # select by cross-validation, then fit on all
    PYTHONPATH=src python -m training.truth.train --fixed    # reuse the settings in settings.json

Selection: per head, the n-gram scale and the L2 strength with the best mean accuracy
over the cross-validation folds (by writer when two writers have data); never on
training fit, never on the held-out sets.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engram.pipeline.judge.heads import HEADS
from engram.pipeline.judge.learned import WEIGHTS

from .crossval import Fold, selection_folds
from .dataset import DATA, Row, rows
from .model import CLASSES, HeadConfig, design, embed, head_rows, labels, save, train_head
from .softmax import Design

SETTINGS = Path(__file__).with_name("settings.json")
SLICE = Path(__file__).parents[2] / "tests" / "data" / "judge_slice.jsonl"
ALPHAS = (0.0, 0.5, 1.0, 2.0, 3.0)
L2S = (1e-5, 3e-5, 1e-4)


def head_accuracy(full: Design, data: Sequence[Row], head: str, config: HeadConfig, folds: Sequence[Fold]) -> float:
    usable = set(head_rows(data, head).tolist())
    scores = []
    for _, train, test in folds:
        train_rows = [data[i] for i in train]
        model = train_head(full.subset(train), train_rows, head, config)
        test = np.array([i for i in test if i in usable], dtype=np.int64)
        if not len(test):
            continue
        predicted = model.predict(full.subset(test))
        scores.append(float(np.mean(predicted == labels([data[i] for i in test], head))))
    return float(np.mean(scores))


def select(full: Design, data: Sequence[Row], folds: Sequence[Fold]) -> dict[str, HeadConfig]:
    chosen = {}
    for head in HEADS:
        results = {}
        for alpha in ALPHAS:
            for l2 in L2S:
                config = HeadConfig(alpha, l2)
                results[config] = head_accuracy(full, data, head, config, folds)
                print(f"  {head:10s} alpha={alpha:<4} l2={l2:<7g} cv accuracy {results[config]:.3f}", flush=True)
        chosen[head] = max(results, key=lambda c: (round(results[c], 4), c.l2))  # ties: the stronger L2
        print(f"{head}: chose {chosen[head]} ({results[chosen[head]]:.3f})", flush=True)
    return chosen


def snapshot_version(data: Sequence[Row]) -> str:
    digest = hashlib.sha256("\n".join(f"{r.writer}\t{r.text}\t{r.utterance}\t{r.subject}\t{r.slot}"
                                      for r in data).encode()).hexdigest()[:12]
    return f"judge-{len(data)}-{digest}"


def write_slice(held_out: Sequence[Row], path: Path) -> None:
    """The fixed held-out slice the tests check the shipped weights on (never trained on)."""
    lines = [json.dumps({"text": r.text, "lang": r.lang, "type": r.utterance, "subject": r.subject_text or r.subject,
                         "subject_kind": r.subject, "slot": r.slot, "writer": r.writer}, ensure_ascii=False)
             for r in held_out]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"held-out slice: {len(lines)} lines -> {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fixed", action="store_true", help="reuse settings.json instead of selecting")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=WEIGHTS)
    args = parser.parse_args()
    skipped: Counter = Counter()
    data = rows(args.data, skipped)
    print(f"{len(data)} rows ({dict(Counter(r.writer for r in data))}); skipped {dict(skipped)}")
    write_slice(rows(args.data, part="slice"), SLICE)
    full = design([r.text for r in data], embed([r.text for r in data]))
    if args.fixed:
        settings = json.loads(SETTINGS.read_text())
        configs = {h: HeadConfig(**settings[h]) for h in HEADS}
    else:
        folds = selection_folds(data)
        print("selection folds:", [name for name, _, _ in folds])
        configs = select(full, data, folds)
        SETTINGS.write_text(json.dumps({h: vars(c) for h, c in configs.items()}, indent=2) + "\n")
    models = {head: train_head(full, data, head, configs[head]) for head in HEADS}
    version = snapshot_version(data)
    save(models, args.out, version)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB), version {version}; "
          f"classes {[len(CLASSES[h]) for h in HEADS]}")


if __name__ == "__main__":
    main()
