"""`engram add | jobs | worker`: the extraction pipeline from the command line."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..pipeline.messages import normalize_messages
from .common import (
    AgentOption,
    DbOption,
    JsonOption,
    NsOption,
    TenantOption,
    console,
    opened,
    print_json,
    run,
    scope_from,
)

UserOpt = Annotated[str | None, typer.Option("--user", "-u", help="User id (scope users/<id>)")]


def _read_turns(text: str | None, file: Path | None) -> list[str]:
    if file is not None:
        return [line for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
    if text:
        return [text]
    raise typer.BadParameter("give the text to add, or --file with one user turn per line")


def register(app: typer.Typer) -> None:
    @app.command()
    def add(
        text: Annotated[str | None, typer.Argument(help="What the user said")] = None,
        file: Annotated[Path | None, typer.Option(help="A file with one user turn per line")] = None,
        thread: Annotated[str | None, typer.Option(help="Thread id recorded as the source")] = None,
        background: Annotated[bool, typer.Option(help="Queue it and return at once")] = False,
        force: Annotated[bool, typer.Option(help="Extract even if the trigger would not fire")] = False,
        db: DbOption = None, tenant: TenantOption = "default", user: UserOpt = None, agent: AgentOption = None,
        ns: NsOption = None, json_out: JsonOption = False,
    ) -> None:
        """Extract memories from conversation text and reconcile them with the store."""
        turns = _read_turns(text, file)
        with opened(db, auto_worker=False) as memory:  # the CLI exits at once: `engram worker` drains
            scope = run(lambda: scope_from(tenant, user, agent, ns))
            messages = run(lambda: normalize_messages(turns))
            result = run(lambda: memory.add(messages, scope, thread_id=thread, background=background, force=force,
                                            actor="cli"))
        if json_out:
            print_json({"job_id": result.job_id, "triggered": result.triggered, "trigger": result.trigger_reason,
                        "events": [{"event": e.event, "content": e.content, "kind": e.kind.value if e.kind else None,
                                    "reason": e.reason, "record_id": e.record_id} for e in result.events]})
            return
        if result.job_id:
            console.print(f"queued job {result.job_id}")
            return
        table = Table(title=f"trigger: {result.trigger_reason}")
        for column in ("event", "kind", "content", "reason"):
            table.add_column(column, overflow="fold")
        for e in result.events:
            table.add_row(e.event, e.kind.value if e.kind else "", e.content, e.reason)
        console.print(table)

    @app.command()
    def jobs(
        status: Annotated[list[str] | None, typer.Option("--status", help="queued, running, done, parked")] = None,
        limit: int = 50,
        db: DbOption = None,
        tenant: Annotated[str | None, typer.Option("--tenant", "-t", envvar="ENGRAM_TENANT")] = None,
        json_out: JsonOption = False,
    ) -> None:
        """Background jobs, newest first, with attempts and the last error."""
        with opened(db) as memory:
            found = run(lambda: memory.jobs(tenant, status or (), limit))
        if json_out:
            print_json([{"id": j.id, "tenant": j.tenant, "status": j.status.value, "attempts": j.attempts,
                         "last_error": j.last_error, "created_at": j.created_at.isoformat()} for j in found])
            return
        table = Table()
        for column in ("id", "tenant", "status", "attempts", "created", "last error"):
            table.add_column(column, overflow="fold")
        for j in found:
            table.add_row(j.id[:12], j.tenant, j.status.value, str(j.attempts),
                          j.created_at.isoformat(timespec="seconds"), j.last_error or "")
        console.print(table)

    @app.command()
    def maintain(db: DbOption = None) -> None:
        """Expire memories past their time and fold near-identical duplicates."""
        with opened(db) as memory:
            report = run(memory.maintain)
        console.print(f"expired {report.expired}, consolidated {report.consolidated}")

    @app.command()
    def worker(
        once: Annotated[bool, typer.Option(help="Drain what is due, then exit")] = False,
        poll: Annotated[float, typer.Option(help="Seconds between polls when idle")] = 1.0,
        db: DbOption = None,
    ) -> None:
        """Drain the background job queue and run scheduled maintenance (run one or
        more next to your app)."""
        with opened(db) as memory:
            if once:
                console.print(f"ran {run(memory.drain_jobs)} jobs")
                return
            console.print("engram worker: draining jobs (Ctrl-C to stop)")
            memory.start_worker()
            try:
                while True:
                    time.sleep(poll)
            except KeyboardInterrupt:
                console.print("stopping after the current job")
