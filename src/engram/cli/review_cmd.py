"""`engram review sample | list | mark`: write accuracy, judged by people on a sample."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ..governance.shapes import sample_data
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

review = typer.Typer(help="Write accuracy: queue a sample of recent writes and judge them.", no_args_is_help=True)


@review.command("sample")
def sample(
    n: Annotated[int, typer.Option("--n", help="How many writes to queue")] = 20,
    days: Annotated[float, typer.Option(help="Writes of the last N days")] = 7.0,
    actor: Annotated[str | None, typer.Option(help="Only writes by actors matching this pattern, e.g. pipeline")]
    = None,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None,
) -> None:
    """Queue a random sample of recent writes (not yet queued) for review."""
    from datetime import timedelta

    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, user, agent, ns))
        since = memory.clock.now() - timedelta(days=days)
        queued = run(lambda: memory.quality.sample(scope, n=n, since=since, actor=actor))
    console.print(f"queued {len(queued)} write(s) for review")


@review.command("list")
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
        print_json([sample_data(i) for i in items])
        return
    table = Table()
    for column in ("sample", "written by", "at", "content", "verdict"):
        table.add_column(column, overflow="fold")
    for item in items:
        s = item.sample
        table.add_row(s.id, s.actor, s.written_at.isoformat(timespec="minutes"),
                      item.written.content if item.written else "(purged)", s.verdict.value if s.verdict else "")
    console.print(table)


@review.command("mark")
def mark(
    sample_id: str,
    verdict: Annotated[str, typer.Argument(help="correct | wrong | should_not_store")],
    note: Annotated[str | None, typer.Option(help="Why")] = None,
    reviewer: ReviewerOpt = None, db: DbOption = None, tenant: TenantOption = "default",
) -> None:
    """Judge one sampled write."""
    with opened(db) as memory:
        run(lambda: memory.quality.mark(sample_id, scope_from(tenant, None, None, None), verdict,
                                        reviewer=reviewer_name(reviewer), note=note))
    console.print(f"marked {sample_id} {verdict}")


def register(app: typer.Typer) -> None:
    app.add_typer(review, name="review")
