"""`engram metrics`: memory quality on the live store (table or --json)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from functools import partial
from typing import Annotated

import typer
from rich.table import Table

from ..governance.quality import QualityReport
from ..governance.shapes import report_data
from .common import DbOption, JsonOption, console, opened, print_json, run


def metrics(
    hours: Annotated[float, typer.Option(help="The window: the last N hours")] = 24.0,
    db: DbOption = None,
    tenant: Annotated[str | None, typer.Option("--tenant", "-t", envvar="ENGRAM_TENANT",
                                               help="One tenant (default: every tenant)")] = None,
    json_out: JsonOption = False,
) -> None:
    """Write accuracy, recall hit rate, repeat rate, writes and skips, PII actions,
    pending approvals and recall latency."""
    with opened(db) as memory:
        tenants = [tenant] if tenant else run(memory.scopes.tenants)
        window = timedelta(hours=hours)
        reports = [run(partial(memory.quality.report, name, window=window)) for name in tenants]
    if json_out:
        print_json([report_data(r) for r in reports])
        return
    for report in reports:
        console.print(_table(report))


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _table(r: QualityReport) -> Table:
    window = f"{r.since.isoformat(timespec='minutes')} → {r.until.isoformat(timespec='minutes')}"
    table = Table(title=f"{r.tenant} · {window}")
    table.add_column("metric")
    table.add_column("value", overflow="fold")
    a = r.accuracy
    ci = f" (95% CI {a.low:.1%}–{a.high:.1%})" if a.low is not None and a.high is not None else ""
    rows = [
        ("write accuracy", f"{_rate(a.rate)} of {a.reviewed} reviewed{ci}; {a.awaiting_review} awaiting review"),
        ("recall hit rate", f"{_rate(r.hit_rate)} ({r.used} of {r.recalled_for_answers} recalled memories used)"),
        ("repeat rate", f"{_rate(r.repeat_rate)} ({r.repeats} of {r.turns} turns)"),
        ("recalls", f"{r.recalls}; latency p50 {_ms(r.latency.p50_ms)}, p95 {_ms(r.latency.p95_ms)}"),
        ("add() events", _pairs(r.add_events)),
        ("skipped by reason", _pairs(r.skipped)),
        ("changes", _pairs(r.changes)),
        ("pending approvals", f"{r.pending}; decided {_pairs(r.decisions)}"),
        ("PII actions", "; ".join(f"{kind}: {_pairs(actions)}" for kind, actions in r.pii_actions.items()) or "-"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def _pairs(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"


def register(app: typer.Typer) -> None:
    app.command("metrics")(metrics)
