"""`engram import | reindex`: long runs with a progress bar (on stderr, so --json
output stays clean)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Annotated, Any, cast

import typer
from rich.progress import Progress, TaskID

from ..errors import ConflictError, ImportConflictError, InvalidValueError
from ..memory import Memory
from ..progress import progress_bar
from ..shapes import import_data, reindexed_data
from ..text.tokenize import CJKMode, Tokenizer
from .common import DbOption, JsonOption, errors, fail, opened, print_json, run, say


class CountingReader:
    """A text file read line by line that reports how far it got."""

    def __init__(self, handle: IO[str], on_line: Callable[[int, int], None]) -> None:
        self._handle = handle
        self._on_line = on_line
        self.lines = 0
        self.size = 0  # bytes read

    def readline(self, size: int | None = -1) -> str:
        try:
            line = self._handle.readline()
        except UnicodeDecodeError:
            raise InvalidValueError(f"the file is not UTF-8 text (after line {self.lines})") from None
        if line:
            self.lines += 1
            size = len(line.encode("utf-8"))
            self.size += size
            self._on_line(self.lines, size)
        return line

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def _import(memory: Memory, stream: IO[str], on_conflict: str, progress: Callable[[int, int], None]) -> Any:
    try:
        return memory.transfer.import_from(stream, on_conflict=cast(Any, on_conflict), actor="cli", progress=progress)
    except ImportConflictError as exc:
        raise ConflictError(exc.worded("run it again with --on-conflict skip or --on-conflict replace")) from None


def import_command(
    source: Annotated[Path, typer.Argument(help="A JSONL export (engram export); - reads standard input")],
    on_conflict: Annotated[str, typer.Option(help="error | skip | replace")] = "error",
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Import a JSONL export in one transaction (all-or-nothing)."""
    from_stdin = str(source) == "-"
    if not from_stdin and not source.is_file():
        fail(f"no such file: {source}" if not source.exists() else f"not a file: {source}", 2)
    name = "standard input" if from_stdin else source.name
    with (opened(db, create=True, all_or_nothing=True) as memory, _input(source) as handle,
          progress_bar(errors, of_bytes=True) as bar):
        reading = bar.add_task(f"reading {name}", total=None if from_stdin else source.stat().st_size, lines=0)
        writing = bar.add_task("embedding and writing", total=None, lines=0, start=False)
        reader = CountingReader(handle, lambda lines, size: bar.update(reading, advance=size, lines=lines))

        def written(done: int, total: int) -> None:
            bar.start_task(writing)
            bar.update(writing, completed=done, total=total, lines=done)

        stream = cast(IO[str], reader)  # the importer reads lines, which is all a CountingReader does
        result = run(lambda: _import(memory, stream, on_conflict, written))
        bar.update(reading, description=f"read {name}", total=reader.size, completed=reader.size)
        bar.update(writing, description=f"imported {result.imported} memories")
    data = import_data(result)
    if json_out:
        print_json(data)
    else:
        say(f"imported {data['imported']}, skipped {data['skipped']} (tenant {data['tenant']})")


@contextmanager
def _input(source: Path) -> Iterator[IO[str]]:
    """The file, or standard input for ``-`` (left open: it is not ours)."""
    if str(source) == "-":
        yield sys.stdin
        return
    with source.open(encoding="utf-8") as handle:
        yield handle


def reindex_command(
    batch_size: Annotated[int, typer.Option(help="Memories embedded per batch")] = 256,
    cjk_tokenizer: Annotated[
        str | None, typer.Option("--cjk-tokenizer", help="Rebuild the lexical terms with this CJK mode "
                                 "(jieba, bigram, jieba+bigram); default: the store's own")
    ] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Re-embed memories whose vectors came from another model, and rebuild lexical
    terms made by another tokenizer (reads keep working; every change audited)."""
    settings: dict[str, Any] = {"rebuild_terms": True}
    if cjk_tokenizer is not None:
        settings["cjk_tokenizer"] = run(lambda: Tokenizer(cast(CJKMode, cjk_tokenizer))).mode  # a typed error
    with opened(db, **settings) as memory:
        tokenizer, rebuilt = memory.tokenizer.name, memory.terms_rebuilt
        model = memory.embedder.name
        stats = run(lambda: memory.stats())
        total = sum(count for name, count in stats.embedding_models.items() if name != model)
        if total == 0:
            count = 0
        else:
            errors.print(f"{total} memories to re-embed with {model}", highlight=False)
            with progress_bar(errors) as bar:
                task = bar.add_task(f"re-embedding with {model}", total=total)
                count = run(lambda: memory.maintenance.reindex(batch_size=batch_size, progress=_advancer(bar, task)))
    if json_out:
        print_json(reindexed_data(count, tokenizer, rebuilt))
        return
    if rebuilt:
        say(f"rebuilt the lexical terms of {rebuilt} memories with tokenizer {tokenizer}")
    if total == 0:
        say(f"nothing to re-embed: every vector comes from {model}; lexical terms by tokenizer {tokenizer}")
    else:
        say(f"re-embedded {count} memories")


def _advancer(bar: Progress, task: TaskID) -> Callable[[int, int], None]:
    """memory.maintenance.reindex reports (done, total) per pass; the bar counts across passes."""
    last = 0

    def progress(done: int, _total: int) -> None:
        nonlocal last
        bar.advance(task, done - last if done > last else done)
        last = done

    return progress


def register(app: typer.Typer) -> None:
    app.command("import")(import_command)
    app.command("reindex")(reindex_command)
