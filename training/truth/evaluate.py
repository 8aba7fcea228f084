"""Figures for docs/JUDGE.md: cross-validation by writer, by slot group (slots never seen
in training) and per language; statement pairs (changes caught, false supersession);
the rule pipeline's keep/drop and forget decisions on the same lines as the baseline.

    PYTHONPATH=src python -m training.truth.evaluate             # cross-validation only
    PYTHONPATH=src python -m training.truth.evaluate --heldout   # also the held-out sets (report only, never tune)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engram.pipeline.judge.heads import HEADS
from engram.pipeline.judge.learned import LearnedJudge, default_judge
from engram.slots import Judgement, Utterance

from .baseline import rule_judgements
from .crossval import by_slot_group, by_writer
from .dataset import DATA, Pair, Row, pairs, rows
from .heldout import heldout_report
from .metrics import PairScores, Scores, pair_scores, scores, table
from .model import HeadConfig, design, embed, save, train_head
from .softmax import Design
from .train import SETTINGS


def settings() -> dict[str, HeadConfig]:
    saved = json.loads(SETTINGS.read_text())
    return {h: HeadConfig(**saved[h]) for h in HEADS}


def fold_judge(full: Design, data: Sequence[Row], train: np.ndarray, configs: dict[str, HeadConfig]) -> LearnedJudge:
    chosen = [data[i] for i in train]
    models = {h: train_head(full.subset(train), chosen, h, configs[h]) for h in HEADS}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "weights.npz"
        save(models, path, "fold")
        return LearnedJudge(path)


def judged(judge: LearnedJudge, texts: Sequence[str], vectors: np.ndarray) -> list[Judgement]:
    return judge.judge(list(texts), vectors=vectors) if len(texts) else []


def by_language(name: str, chosen: Sequence[Row], said: Sequence[Judgement]) -> list[tuple[str, list[str]]]:
    lines = [(name, scores(chosen, said).cells())]
    for lang in ("en", "zh"):
        index = [i for i, r in enumerate(chosen) if r.lang == lang]
        if index:
            lines.append((f"  {lang}", scores([chosen[i] for i in index], [said[i] for i in index]).cells()))
    return lines


def writer_section(full: Design, data: Sequence[Row], vectors: np.ndarray, configs, pair_data, pair_vectors) -> None:
    lines, pair_lines = [], []
    for name, train, test in by_writer(data):
        judge = fold_judge(full, data, train, configs)
        chosen = [data[i] for i in test]
        lines += by_language(name, chosen, judged(judge, [r.text for r in chosen], vectors[test]))
        tested = [i for i, p in enumerate(pair_data) if p.writer in name.split("test ")[1].split("+")]
        pair_lines += pair_rows(name, judge, [pair_data[i] for i in tested], pair_vectors, tested)
    print(table("cross-validation by writer", Scores.HEADER, lines), "\n")
    print(table("pairs, judge trained on the other writer", PairScores.HEADER, pair_lines), "\n")


def pair_rows(name: str, judge: LearnedJudge, chosen: Sequence[Pair], pair_vectors, index) -> list:
    if not chosen:
        return []
    old_v, new_v = pair_vectors
    old = judged(judge, [p.old for p in chosen], old_v[index])
    new = judged(judge, [p.new for p in chosen], new_v[index])
    out = [(name, pair_scores(chosen, old, new).cells())]
    for lang in ("en", "zh"):
        keep = [i for i, p in enumerate(chosen) if p.lang == lang]
        out.append((f"  {lang}", pair_scores([chosen[i] for i in keep], [old[i] for i in keep],
                                             [new[i] for i in keep]).cells()))
    return out


def slot_section(full: Design, data: Sequence[Row], vectors: np.ndarray, configs) -> None:
    lines = []
    for name, train, test in by_slot_group(data):
        judge = fold_judge(full, data, train, configs)
        chosen = [data[i] for i in test]
        said = judged(judge, [r.text for r in chosen], vectors[test])
        s = scores(chosen, said)
        lines.append((name, [str(s.n), _f(s.utterance), _f(s.durable_recall), _f(s.subject)]))
    print(table("slots left out (durable lines)", ("n", "type", "judged durable", "subject kind"), lines), "\n")


def _f(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def baseline_section(data: Sequence[Row]) -> None:
    lines = by_language("rules (keep/drop, forget) on every writer line", data, rule_judgements([r.text for r in data]))
    print(table("baseline", Scores.HEADER, lines), "\n")


def cost_section(vectors: np.ndarray, texts: Sequence[str]) -> None:
    judge = default_judge()
    batch, batch_vectors = list(texts[:5]), vectors[:5]
    for _ in range(50):
        judge.judge(batch, vectors=batch_vectors)
    runs = []
    for _ in range(200):
        start = time.perf_counter()
        judge.judge(batch, vectors=batch_vectors)
        runs.append(time.perf_counter() - start)
    print(f"cost of judge(5 texts, vectors given): median {np.median(runs) * 1e3:.3f} ms, "
          f"p95 {np.percentile(runs, 95) * 1e3:.3f} ms\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--heldout", action="store_true", help="also report on the held-out sets (never tune on them)")
    parser.add_argument("--skip-cv", action="store_true")
    args = parser.parse_args()
    data, pair_data = rows(DATA), pairs(DATA)
    vectors = embed([r.text for r in data])
    full = design([r.text for r in data], vectors)
    pair_vectors = (embed([p.old for p in pair_data]), embed([p.new for p in pair_data])) if pair_data else None
    print(f"{len(data)} lines, {len(pair_data)} pairs; settings {settings()}\n")
    if not args.skip_cv:
        configs = settings()
        writer_section(full, data, vectors, configs, pair_data, pair_vectors)
        slot_section(full, data, vectors, configs)
        baseline_section(data)
    if args.heldout:
        heldout_report(default_judge())
    cost_section(vectors, [r.text for r in data])
    print("utterance classes:", [u.value for u in Utterance])


if __name__ == "__main__":
    main()
