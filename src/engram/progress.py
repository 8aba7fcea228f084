"""The one progress bar engram's long commands show (import, reindex, benchmarks, evaluation):
what is running, a bar, done of total (or lines and bytes of a file), elapsed time and an ETA."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def progress_bar(console: Console, *, of_bytes: bool = False, disable: bool = False) -> Progress:
    """``of_bytes``: count a file read in bytes (tasks carry a ``lines`` field) instead of items."""
    counts = [TextColumn("{task.fields[lines]} lines"), DownloadColumn()] if of_bytes else [MofNCompleteColumn()]
    return Progress(TextColumn("{task.description}"), BarColumn(), *counts, TimeElapsedColumn(),
                    TimeRemainingColumn(), console=console, disable=disable)
