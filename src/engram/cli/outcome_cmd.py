"""`engram eval outcome`: is the memory the agent needs in the prompt, and nothing stale or false?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import typer

from ..errors import ConfigError


def _choices(text: str, allowed: tuple[str, ...], option: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    wrong = [c for c in chosen if c not in allowed]
    if not chosen or wrong:
        raise ConfigError(f"{option} takes a comma-separated subset of {', '.join(allowed)}, got {text!r}")
    return chosen


def outcome_command(
    split: Annotated[str, typer.Option(help="dev, heldout or dev,heldout (heldout is never tuned on)")]
    = "dev,heldout",
    lang: Annotated[str, typer.Option(help="en, zh or en,zh")] = "en,zh",
    facts: Annotated[str, typer.Option(help="extracted (through add()), given (remember/supersede/forget), "
                                            "turns (every user turn kept verbatim: the baseline), comma-separated")]
    = "extracted,given,turns",
    budget: Annotated[int, typer.Option(help="Token budget of each context() block")] = 400,
    utterances: Annotated[bool, typer.Option(help="Also score the fresh single utterances, changes and forgets")]
    = True,
    setting: Annotated[list[str] | None, typer.Option("--set", help="Settings override, key=value (repeatable)")]
    = None,
    data: Annotated[Path | None, typer.Option(help="Scenario folder with dev/ and heldout/ (default: shipped)")]
    = None,
    out: Annotated[Path | None, typer.Option(help="Also write the results JSON (every probe included) here")]
    = None,
    show_misses: Annotated[int, typer.Option(help="Print up to N probes that missed or showed a forbidden memory")]
    = 0,
    markdown: Annotated[bool, typer.Option(help="Print Markdown tables (for docs/BENCHMARKS.md)")] = False,
    quiet: Annotated[bool, typer.Option(help="No progress bar")] = False,
) -> None:
    """The outcome benchmark: multi-session scenarios with probes (see docs/BENCHMARKS.md)."""
    from rich.console import Console

    from ..eval.outcome import report
    from ..eval.outcome.play import MODES, Mode
    from ..eval.outcome.run import OutcomeConfig, run_outcome
    from ..eval.outcome.scenarios import LANGUAGES, SPLITS
    from ..progress import progress_bar
    from .common import key_values, run

    console = Console()  # tables; the progress bar goes to stderr, so `--markdown > out.md` holds the tables only

    def build() -> OutcomeConfig:
        modes = cast(tuple[Mode, ...], _choices(facts, MODES, "--facts"))
        return OutcomeConfig(splits=_choices(split, SPLITS, "--split"), languages=_choices(lang, LANGUAGES, "--lang"),
                             modes=modes, budget_tokens=budget, utterances=utterances,
                             settings=key_values(setting), data=data, out=out)

    config = run(build)
    with progress_bar(Console(stderr=True), disable=quiet) as bar:
        def progress(label: str, total: int):
            task = bar.add_task(label, total=total)
            return lambda n: bar.advance(task, n)

        results = run(lambda: run_outcome(config, progress=progress))
    if markdown:  # as plain text: a console would wrap table rows at its width (80 columns when piped)
        typer.echo(report.markdown(results))
    else:
        for table in report.rich_tables(results):
            console.print(table)
    for line in report.misses(results, show_misses) if show_misses else []:
        typer.echo(line)
    if out is not None:
        typer.echo(f"results: {out}", err=markdown)
