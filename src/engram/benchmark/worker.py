"""One system per child process, driven over a pipe by the speed benchmark.

A child holds exactly one system, so its resident memory is that system's (plus
the shared embedder model, measured alone first as the baseline). The parent
sends one request at a time and the child times only the system call, so pipe
overhead never enters the figures and no two systems run at once. A search is
timed twice: wall time, and the process's CPU time (on busy shared cores the
wall time of a call includes the time slices other processes took meanwhile;
the CPU time is what the system itself spent).
"""

from __future__ import annotations

import time
import traceback
from multiprocessing.connection import Connection
from pathlib import Path

from .stats import rss_bytes
from .systems import PeerUnavailable, build, directory_bytes

WARMUP_TEXTS = ["warm-up sentence for the embedder", "预热一下模型"]


class TimedEmbedder:
    """The shared embedder, timing query embeddings: a search's time beyond it is the system's own."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        if hasattr(inner, "dims"):
            self.dims = inner.dims
        self.query_seconds = 0.0

    def embed(self, texts, *, role="passage"):
        if role != "query":
            return self.inner.embed(texts, role=role)
        start = time.perf_counter()
        try:
            return self.inner.embed(texts, role=role)
        finally:
            self.query_seconds += time.perf_counter() - start


def serve(conn: Connection, name: str, workdir: str, embedder_name: str, threads: int | None = None) -> None:
    try:
        from .embedders import bench_embedder

        embedder = bench_embedder(embedder_name, threads)
        embedder.embed(WARMUP_TEXTS)
        embedder.embed(WARMUP_TEXTS[:1], role="query")
        memory = rss_bytes()
        embedder = TimedEmbedder(embedder)
        system = build(name, Path(workdir), embedder)
    except PeerUnavailable as exc:
        conn.send(("unavailable", str(exc)))
        return
    except Exception:
        conn.send(("error", traceback.format_exc()))
        return
    conn.send(("ready", {"rss_baseline": memory["rss"], "anon_baseline": memory.get("anon"),
                         "binding": getattr(system, "binding", None)}))
    while True:
        request = conn.recv()
        try:
            reply = _handle(system, Path(workdir), request, embedder)
        except Exception:
            reply = ("error", traceback.format_exc())
        conn.send(reply)
        if request[0] == "close":
            return


def _handle(system, workdir: Path, request: tuple, embedder: TimedEmbedder) -> tuple:
    kind = request[0]
    if kind == "write":
        _, user, texts = request
        start = time.perf_counter()
        system.write(user, texts)
        return ("ok", time.perf_counter() - start)
    if kind == "search":
        _, user, query, k = request
        embedder.query_seconds = 0.0
        start, cpu = time.perf_counter(), time.process_time()
        found = system.search(user, query, k)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        return ("ok", wall * 1000.0, found, embedder.query_seconds * 1000.0, cpu * 1000.0)
    if kind == "stats":
        return ("ok", {**rss_bytes(), "disk": directory_bytes(workdir)})
    if kind == "close":
        system.close()
        return ("ok",)
    raise ValueError(f"unknown request {kind!r}")
