"""`engram add | jobs | worker`: the extraction pipeline from the command line."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from ..consolidation.schedule import Schedule
from ..shapes import add_data, jobs_data, maintenance_data
from .common import (
    AgentOption,
    DbOption,
    JsonOption,
    NsOption,
    TenantOption,
    UserOption,
    console,
    fail,
    opened,
    print_json,
    run,
    say,
    scope_from,
)
from .tables import counted, events_table, jobs_table


def _read_turns(text: str | None, file: Path | None) -> list[str]:
    if file is not None:
        if not file.is_file():
            fail(f"no such file: {file}", 2)
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            fail(f"{file} is not UTF-8 text", 2)
        return [line for line in text.splitlines() if line.strip()]
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
        db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
        ns: NsOption = None, json_out: JsonOption = False,
    ) -> None:
        """Extract memories from conversation text and reconcile them with the store."""
        turns = _read_turns(text, file)
        scope = run(lambda: scope_from(tenant, user, agent, ns))
        # the CLI exits at once: `engram worker` drains background jobs
        with opened(db, create=True, auto_worker=False) as memory:
            result = run(lambda: memory.add(turns, scope, thread_id=thread, background=background, force=force,
                                            actor="cli"))
        if json_out:
            print_json(add_data(result))
        elif result.job_id:
            say(f"queued job {result.job_id}")
        elif result.error:
            fail(f"extraction failed, nothing was stored: {result.error}", 1)
        elif not result.events:
            say(f"nothing to remember (trigger: {result.trigger_reason}; --force extracts anyway)")
        else:
            console.print(events_table(result))

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
            found = run(lambda: memory.jobs.list(tenant, status or (), limit))
        if json_out:
            print_json(jobs_data(found))
        elif not found:
            say("no background jobs" + (f" with status {', '.join(status)}" if status else ""))
        else:
            console.print(jobs_table(found))

    @app.command()
    def maintain(db: DbOption = None, json_out: JsonOption = False) -> None:
        """Expire memories past their time and fold near-identical duplicates."""
        with opened(db) as memory:
            report = run(memory.maintenance.run)
        if json_out:
            print_json(maintenance_data(report))
        else:
            say(f"expired {report.expired}, consolidated {report.consolidated}")

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
                say(f"ran {counted(run(memory.jobs.drain), 'job')}")
                return
            for line in worker_plan(run(memory.consolidation.schedules), memory.settings.maintenance_interval_s):
                say(line)
            memory.jobs.start_worker()
            try:
                while True:
                    time.sleep(poll)
            except KeyboardInterrupt:
                say("stopping after the current job")


def worker_plan(schedules: Sequence[Schedule], maintenance_s: float) -> list[str]:
    """What a starting worker will do: the jobs, maintenance, and each consolidation schedule it loaded."""
    every = f"every {maintenance_s:g} s" if maintenance_s else "never (maintenance_interval_s=0)"
    lines = ["engram worker: draining background jobs (Ctrl-C to stop)",
             f"maintenance (expiry, consolidation): {every}"]
    if not schedules:
        return [*lines, "consolidation schedules: none (set ENGRAM_CONSOLIDATION_SCHEDULES, docs/EPISODES.md)"]
    return [*lines, f"consolidation schedules (UTC): {counted(len(schedules), 'schedule')} loaded",
            *(f"  {schedule.label}" for schedule in schedules)]
