"""`engram threads list | show | search` (past conversations) and `engram consolidate`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ..shapes.episodes import consolidation_data, excerpts_data, threads_data, turns_data
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
    say,
    scope_from,
)

threads = typer.Typer(help="Past conversations: list threads, show one, search them by words and meaning.",
                      no_args_is_help=True)
NestedOpt = Annotated[bool, typer.Option("--nested", help="Include every scope below (e.g. a whole org)")]


@threads.command("list")
def list_cmd(
    limit: int = 50, nested: NestedOpt = False,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """The scope's conversations, most recent first."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    with opened(db) as memory:
        found = run(lambda: memory.threads.list(scope, limit=limit, include_descendants=nested))
    if json_out:
        print_json(threads_data(found))
        return
    table = Table(title=f"{len(found)} thread(s)")
    for column in ("thread", "started", "last turn", "turns", "episode", "namespace"):
        table.add_column(column, overflow="fold")
    for t in found:
        table.add_row(t.id, t.started_at.isoformat(timespec="minutes"), t.last_at.isoformat(timespec="minutes"),
                      str(t.turns), t.episode_id or "", "/".join(t.namespace))
    console.print(table)


@threads.command("show")
def show_cmd(
    thread_id: str, limit: int = 1000,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Every turn of one thread, in order."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    with opened(db) as memory:
        turns = run(lambda: memory.threads.turns(thread_id, scope, limit=limit))
    if json_out:
        print_json(turns_data(turns))
        return
    for turn in turns:
        say(f"[{turn.at.isoformat(timespec='seconds')}] {turn.role}: {turn.content}")


@threads.command("search")
def search_cmd(
    query: str,
    k: Annotated[int, typer.Option("-k", help="How many threads at most")] = 5,
    window: Annotated[int, typer.Option(help="Neighbouring turns shown on each side of a match")] = 1,
    nested: NestedOpt = False,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Search past conversations: matching turns with their neighbours, thread and time."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    with opened(db) as memory:
        found = run(lambda: memory.threads.search(query, scope, k=k, window=window,
                                                  include_descendants=nested))
    if json_out:
        print_json(excerpts_data(found))
        return
    if not found:
        say("no past conversation matches")
    for excerpt in found:
        say(f"── thread {excerpt.thread_id} · {excerpt.at.isoformat(timespec='minutes')} · score {excerpt.score}")
        for turn in excerpt.turns:
            say(f"{'»' if turn.matched else ' '} {turn.role}: {turn.content}")


def consolidate(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the diff it would apply; write nothing")] = False,
    budget_tokens: Annotated[int | None, typer.Option(help="Turn tokens read per scope at most")] = None,
    all_tenants: Annotated[bool, typer.Option("--all-tenants", help="Every tenant (default: --tenant)")] = False,
    agent_mode: Annotated[bool, typer.Option("--llm-agent", help="Extract with a LangGraph agent over the LLM of "
                                                                 "OPENAI_BASE_URL / OPENAI_API_KEY / LLM_MODEL "
                                                                 "(--agent names an agent's scope)")] = False,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Consolidate new conversation turns into memories and idle threads into episodes
    (each scope from its watermark on; actor 'consolidator')."""
    scoped = user is not None or agent is not None or ns is not None
    scope = run(lambda: scope_from(tenant, user, agent, ns)) if scoped else None
    model = None
    if agent_mode:
        from ..integrations.langgraph.chat_model import chat_model_from_env

        model = run(chat_model_from_env)
    with opened(db) as memory:
        report = run(lambda: memory.consolidation.run(tenant=None if all_tenants else tenant, scope=scope,
                                                      dry_run=dry_run, budget_tokens=budget_tokens, agent=model))
    if json_out:
        print_json(consolidation_data(report))
        return
    verb = "would apply" if dry_run else "applied"
    for s in report.scopes:
        say(f"{s.tenant}/{'/'.join(s.namespace)}: {s.status}, turns {s.after_seq + 1}..{s.upto_seq} "
            f"({s.turns}), {s.episodes} episode(s)" if s.turns else f"{s.tenant}/{'/'.join(s.namespace)}: {s.status}")
        for d in s.diff:
            if d.operation != "noop":
                say(f"  {verb} {d.operation}: {d.content}" + (f" (replaces {d.target_id})" if d.target_id else ""))
    say(f"{report.turns} turn(s) in {len(report.scopes)} scope(s)")


def register(app: typer.Typer) -> None:
    app.add_typer(threads, name="threads")
    app.command()(consolidate)
