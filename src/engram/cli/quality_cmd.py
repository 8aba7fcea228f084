"""`engram quality sample | list | mark | report`: write accuracy, judged by people on a
sample of writes, and the quality report (``memory.quality``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from functools import partial
from typing import Annotated

import typer
from rich.table import Table

from ..governance.quality import QualityReport
from ..shapes.governance import report_data, sample_data
from .approvals_cmd import ReviewerOpt, reviewer_name
from .common import (
    AgentOption,
    DbOption,
    JsonOption,
    NsOption,
    TenantOption,
    UserOption,
    console,
    opened,
    print_json,
    run,
    scope_from,
)
from .tables import counted

quality = typer.Typer(help="Memory quality: queue a sample of recent writes, judge them, and the report "
                           "(write accuracy, recall hit rate, repeats, PII actions, latency).", no_args_is_help=True)


@quality.command("sample")
def sample(
    n: Annotated[int, typer.Option("--n", help="How many writes to queue")] = 20,
    days: Annotated[float, typer.Option(help="Writes of the last N days")] = 7.0,
    actor: Annotated[str | None, typer.Option(help="Only writes by actors matching this pattern, e.g. pipeline")]
    = None,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Queue a random sample of recent writes (not yet queued) for review."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, user, agent, ns))
        since = memory.clock.now() - timedelta(days=days)
        queued = run(lambda: memory.quality.sample(scope, n=n, since=since, actor=actor))
    if json_out:
        print_json({"items": [sample_data(s) for s in queued]})  # POST /v1/quality/sample
        return
    console.print(f"queued {len(queued)} write(s) for review")


@quality.command("list")
def list_cmd(
    reviewed: Annotated[bool, typer.Option("--reviewed", help="Show judged samples instead")] = False,
    limit: int = 50,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Samples awaiting a verdict (or judged ones), with what was written."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, user, agent, ns))
        items = run(lambda: memory.quality.list(scope, reviewed=reviewed, limit=limit))
    if json_out:
        print_json({"items": [sample_data(i) for i in items]})  # GET /v1/quality/samples
        return
    table = Table()
    for column in ("sample", "written by", "at", "content", "verdict"):
        table.add_column(column, overflow="fold")
    for item in items:
        s = item.sample
        table.add_row(s.id, s.actor, s.written_at.isoformat(timespec="minutes"),
                      item.written.content if item.written else "(purged)", s.verdict.value if s.verdict else "")
    console.print(table)


@quality.command("mark")
def mark(
    sample_id: str,
    verdict: Annotated[str, typer.Argument(help="correct | wrong | should_not_store")],
    note: Annotated[str | None, typer.Option(help="Why")] = None,
    reviewer: ReviewerOpt = None, db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Judge one sampled write."""
    with opened(db) as memory:
        marked = run(lambda: memory.quality.mark(sample_id, scope_from(tenant, None, None, None), verdict,
                                                 reviewer=reviewer_name(reviewer), note=note))
    if json_out:
        print_json(sample_data(marked))  # POST /v1/quality/samples/{id}
        return
    console.print(f"marked {sample_id} {verdict}")


@quality.command("report")
def report(
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
    if json_out:  # one tenant: GET /v1/quality's shape; every tenant: {"items": [that, …]}
        print_json(report_data(reports[0]) if tenant else {"items": [report_data(r) for r in reports]})
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
        ("repeat rate", f"{_rate(r.repeat_rate)} ({r.repeats} of {counted(r.turns, 'turn')})"),
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
    app.add_typer(quality, name="quality")
