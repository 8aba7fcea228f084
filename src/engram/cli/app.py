"""`engram` commands: each parses options, calls one public method, prints (a table,
or with --json the same JSON as the HTTP API)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import __version__
from ..errors import InvalidValueError
from ..model import Status
from ..shapes import (
    context_data,
    history_data,
    hits_data,
    page_data,
    purged_data,
    record_data,
    records_data,
    stats_data,
)
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
from .ids import resolve_id
from .tables import fields_table, hits_table, record_fields, records_table, stats_fields, versions_table

app = typer.Typer(help="engram: long-term memory for AI agents.", no_args_is_help=True, add_completion=True,
                  rich_markup_mode=None)
IdArg = Annotated[str, typer.Argument(help="A memory id, or a unique prefix of at least 8 characters")]
AsOfOption = Annotated[str | None, typer.Option("--as-of", help="What was valid then: an ISO date or time "
                                                              "(UTC unless it has an offset), e.g. 2026-03-01")]


def parse_as_of(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidValueError(f"--as-of: {text!r} is not an ISO date or time (e.g. 2026-03-01)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _version(value: bool) -> None:
    if value:
        say(f"engram {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool | None, typer.Option("--version", callback=_version, is_eager=True,
                                                 help="Print the version and exit")] = None,
) -> None:
    """engram: long-term memory for AI agents."""


@app.command()
def remember(
    content: Annotated[str, typer.Argument(help="The memory; - reads it from standard input")],
    kind: Annotated[str, typer.Option(help="fact, preference, rule, conclusion, todo, episode, file")] = "fact",
    importance: float = 0.5,
    confidence: float = 1.0,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Repeatable")] = None,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print the new id alone (id=$(engram remember …))")]
    = False,
) -> None:
    """Store one memory as given."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    text = sys.stdin.read().strip() if content == "-" else content
    with opened(db, create=True) as memory:
        record = run(lambda: memory.remember(text, scope, kind=kind, importance=importance,
                                             confidence=confidence, tags=tag, actor="cli"))
    if json_out:
        print_json(record_data(record))
    else:
        say(record.id if quiet else f"remembered {record.id}")


@app.command()
def update(
    record_id: IdArg,
    content: Annotated[str | None, typer.Option(help="New content; - reads it from standard input")] = None,
    kind: Annotated[str | None, typer.Option(help="fact, preference, rule, conclusion, todo, episode, file")] = None,
    importance: float | None = None,
    confidence: float | None = None,
    category: str | None = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Replace the tags; repeatable")] = None,
    pin: Annotated[bool | None, typer.Option("--pin/--unpin", help="Pin into (or out of) the user's profile")] = None,
    reason: Annotated[str | None, typer.Option(help="Why (kept in history)")] = None,
    expected_version: Annotated[int | None, typer.Option(help="Refuse (exit 4) if the memory is no longer at "
                                                         "this version")] = None,
    db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Change a memory's fields: a new version, the old one kept in its history."""
    given = {"content": sys.stdin.read().strip() if content == "-" else content, "kind": kind,
             "importance": importance, "confidence": confidence, "category": category, "tags": tag, "pinned": pin}
    changes: dict[str, Any] = {name: value for name, value in given.items() if value is not None}
    if not changes:
        fail("nothing to change: give --content, --kind, --importance, --confidence, --category, --tag or --pin", 2)
    scope = run(lambda: scope_from(tenant, None, None, None))
    with opened(db) as memory:
        record = run(lambda: memory.update(resolve_id(memory, record_id, scope), scope, reason=reason, actor="cli",
                                           expected_version=expected_version, **changes))
    print_json(record_data(record)) if json_out else say(f"updated {record.id} (version {record.version})")


@app.command()
def search(
    query: str,
    k: Annotated[int, typer.Option("--k", "-k", help="How many hits at most")] = 10,
    kind: Annotated[list[str] | None, typer.Option("--kind")] = None,
    min_score: float = 0.0,
    retriever: Annotated[str | None, typer.Option(help="hybrid | bm25 | vector")] = None,
    descendants: Annotated[bool, typer.Option(help="Include nested namespaces")] = False,
    as_of: AsOfOption = None,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Hybrid search inside a scope, with each hit's signals."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    moment = run(lambda: parse_as_of(as_of))
    with opened(db) as memory:
        hits = run(lambda: memory.search(query, scope, k=k, kinds=kind, min_score=min_score, retriever=retriever,
                                         include_descendants=descendants, as_of=moment))
    if json_out:
        print_json(hits_data(hits))
    elif not hits:
        say(f"no memories match {query!r} in {scope}")
    else:
        console.print(hits_table(hits))


@app.command("context")
def context_cmd(
    query: str,
    budget: Annotated[int, typer.Option(help="Token budget of the block")] = 800,
    as_of: AsOfOption = None,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Print the memory block that would be injected into a prompt."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    moment = run(lambda: parse_as_of(as_of))
    with opened(db) as memory:
        block = run(lambda: memory.context(query, scope, budget_tokens=budget, actor="cli", as_of=moment))
    if json_out:
        print_json(context_data(block))
    else:
        say(block.text or f"(no relevant memories in {scope})")


@app.command("profile")
def profile_cmd(
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """The user's profile: what `context` always gives first (pin or unpin with PATCH /v1/memories/{id})."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    with opened(db) as memory:
        records = run(lambda: memory.profile(scope))
    if json_out:
        print_json(records_data(records))
        return
    if not records:
        say(f"no profile memories in {scope}")
        return
    console.print(records_table(records))


@app.command("list")
def list_cmd(
    offset: int = 0,
    limit: int = 50,
    status: Annotated[list[str] | None, typer.Option("--status", help="active (default), superseded, expired, "
                                                     "deleted; repeatable")] = None,
    kind: Annotated[list[str] | None, typer.Option("--kind", help="Repeatable")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Repeatable: every tag must be present")] = None,
    descendants: bool = False,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """List memories in a scope, a page at a time."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    with opened(db) as memory:
        page = run(lambda: memory.list(scope, offset=offset, limit=limit, statuses=status or [Status.ACTIVE],
                                       kinds=kind, tags=tag, include_descendants=descendants))
    if json_out:
        print_json(page_data(page))
        return
    if not page.items:
        say(f"no memories in {scope}" + ("" if descendants else " (--descendants includes nested namespaces)"))
        return
    console.print(records_table(list(page.items)))
    if page.next_offset is not None:
        say(f"more: --offset {page.next_offset}")


@app.command()
def show(
    record_id: IdArg,
    db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Show one memory with every field."""
    scope = run(lambda: scope_from(tenant, None, None, None))
    with opened(db) as memory:
        record = run(lambda: memory.get(resolve_id(memory, record_id, scope), scope))
    print_json(record_data(record)) if json_out else console.print(fields_table(record_fields(record)))


@app.command()
def history(
    record_id: IdArg,
    db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Every version of a memory: who, when, why."""
    scope = run(lambda: scope_from(tenant, None, None, None))
    with opened(db) as memory:
        versions = run(lambda: memory.history(resolve_id(memory, record_id, scope), scope))
    print_json(history_data(versions)) if json_out else console.print(versions_table(versions))


@app.command()
def forget(
    record_id: IdArg,
    reason: Annotated[str | None, typer.Option(help="Why (kept in history)")] = None,
    db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Soft delete: the memory leaves search; its history stays (restore undoes it)."""
    scope = run(lambda: scope_from(tenant, None, None, None))
    with opened(db) as memory:
        record = run(lambda: memory.forget(resolve_id(memory, record_id, scope), scope, reason=reason,
                                           actor="cli"))
    print_json(record_data(record)) if json_out else say(f"forgotten {record.id} (version {record.version})")


@app.command()
def restore(
    record_id: IdArg,
    reason: Annotated[str | None, typer.Option(help="Why (kept in history)")] = None,
    db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Bring a forgotten, superseded or expired memory back (a new version)."""
    scope = run(lambda: scope_from(tenant, None, None, None))
    with opened(db) as memory:
        record = run(lambda: memory.restore(resolve_id(memory, record_id, scope), scope, reason=reason,
                                            actor="cli"))
    print_json(record_data(record)) if json_out else say(f"restored {record.id} (version {record.version})")


@app.command()
def purge(
    record_id: Annotated[str | None, typer.Argument(help="A memory id (or a unique prefix of 8+ characters); "
                                                    "or give --user/--ns for a whole scope")] = None,
    reason: str | None = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation")] = False,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Hard delete, versions included (right to be forgotten)."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    if record_id is None and scope.namespace == ():
        fail("refusing to purge a whole tenant; give an id, --user or --ns", 2)
    with opened(db) as memory:
        target = run(lambda: resolve_id(memory, record_id, scope)) if record_id else None
        what = target or f"everything under {scope}"
        if not yes and not typer.confirm(f"Purge {what}? This cannot be undone.", err=True):
            raise typer.Exit(1)
        if target:
            report = run(lambda: memory.purge(target, scope, reason=reason, actor="cli"))
        else:
            report = run(lambda: memory.purge_scope(scope, reason=reason, actor="cli"))
    if json_out:
        print_json(purged_data(report))
        return
    say(f"purged {report.records} memories")
    if report.residue:
        say(f"not yet gone from the disk: {report.residue}")


@app.command()
def export(
    dest: Annotated[Path | None, typer.Argument(help="Output file; standard output when omitted or -")] = None,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None,
) -> None:
    """Export a scope (and below) as JSONL, versions included."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    to_file = dest is not None and str(dest) != "-"
    with opened(db) as memory:
        count = run(lambda: memory.transfer.export_to(dest if to_file and dest else sys.stdout, scope))
    if to_file:
        say(f"exported {count} memories to {dest}")


@app.command()
def stats(
    db: DbOption = None,
    tenant: Annotated[str | None, typer.Option("--tenant", "-t", envvar="ENGRAM_TENANT")] = None,
    json_out: JsonOption = False,
) -> None:
    """Counts by status and kind, versions, audit events, jobs, LLM tokens, disk use."""
    with opened(db) as memory:
        result = run(lambda: memory.stats(tenant))
    if json_out:
        print_json(stats_data(result))
    else:
        console.print(fields_table(stats_fields(result), title=f"tenant {tenant}" if tenant else "every tenant"))


@app.command()
def demo(
    db: Annotated[str | None, typer.Option("--db", help="Keep the demo database here (default: a temp file)")] = None,
    lang: Annotated[str, typer.Option("--lang", help="zh (default) or en")] = "zh",
) -> None:
    """Play the classic scenario offline: remember, recall in a new conversation, isolate, forget."""
    from .demo import play

    play(db, lang)
