"""`engram` commands: each parses options, calls one public method, prints."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from ..model import Status
from .common import (
    AgentOption,
    DbOption,
    JsonOption,
    NsOption,
    TenantOption,
    console,
    hit_data,
    hits_table,
    opened,
    print_json,
    record_to_data,
    records_table,
    run,
    scope_from,
    version_to_data,
    versions_table,
)

app = typer.Typer(help="engram: long-term memory for AI agents.", no_args_is_help=True, add_completion=False)
UserOpt = Annotated[str | None, typer.Option("--user", "-u", help="User id (scope users/<id>)")]


@app.command()
def remember(
    content: str,
    kind: Annotated[str, typer.Option(help="fact, preference, rule, conclusion, todo, episode, file")] = "fact",
    importance: float = 0.5,
    confidence: float = 1.0,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Repeatable")] = None,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOpt = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Store one memory as given."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, user, agent, ns))
        record = run(lambda: memory.remember(content, scope, kind=kind, importance=importance,
                                             confidence=confidence, tags=tag, actor="cli"))
    print_json(record_to_data(record)) if json_out else console.print(f"remembered [bold]{record.id}[/bold]")


@app.command()
def search(
    query: str,
    k: int = 10,
    kind: Annotated[list[str] | None, typer.Option("--kind")] = None,
    min_score: float = 0.0,
    retriever: Annotated[str | None, typer.Option(help="hybrid | bm25 | vector")] = None,
    descendants: Annotated[bool, typer.Option(help="Include nested namespaces")] = False,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOpt = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Hybrid search inside a scope, with each hit's signals."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, user, agent, ns))
        hits = run(lambda: memory.search(query, scope, k=k, kinds=kind, min_score=min_score, retriever=retriever,
                                         include_descendants=descendants))
    print_json([hit_data(h) for h in hits]) if json_out else console.print(hits_table(hits))


@app.command("context")
def context_cmd(
    query: str,
    budget: Annotated[int, typer.Option(help="Token budget of the block")] = 800,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOpt = None, agent: AgentOption = None,
    ns: NsOption = None,
) -> None:
    """Print the memory block that would be injected into a prompt."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, user, agent, ns))
        block = run(lambda: memory.context(query, scope, budget_tokens=budget, actor="cli"))
    console.print(block.text or "(no relevant memories)", markup=False)


@app.command("list")
def list_cmd(
    offset: int = 0,
    limit: int = 50,
    status: Annotated[list[str] | None, typer.Option("--status")] = None,
    descendants: bool = False,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOpt = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """List memories in a scope, a page at a time."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, user, agent, ns))
        page = run(lambda: memory.list(scope, offset=offset, limit=limit, statuses=status or [Status.ACTIVE],
                                       include_descendants=descendants))
    if json_out:
        print_json({"items": [record_to_data(r) for r in page.items], "next_offset": page.next_offset})
        return
    console.print(records_table(list(page.items)))
    if page.next_offset is not None:
        console.print(f"more: --offset {page.next_offset}")


@app.command()
def show(
    record_id: str,
    db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Show one memory with every field."""
    with opened(db) as memory:
        record = run(lambda: memory.get(record_id, scope_from(tenant, None, None, None)))
    data = record_to_data(record)
    print_json(data) if json_out else console.print(data)


@app.command()
def history(
    record_id: str,
    db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Every version of a memory: who, when, why."""
    with opened(db) as memory:
        versions = run(lambda: memory.history(record_id, scope_from(tenant, None, None, None)))
    print_json([version_to_data(v) for v in versions]) if json_out else console.print(versions_table(versions))


@app.command()
def forget(
    record_id: str,
    reason: Annotated[str | None, typer.Option(help="Why (kept in history)")] = None,
    db: DbOption = None, tenant: TenantOption = "default",
) -> None:
    """Soft delete: the memory leaves search; its history stays."""
    with opened(db) as memory:
        record = run(lambda: memory.forget(record_id, scope_from(tenant, None, None, None), reason=reason,
                                           actor="cli"))
    console.print(f"forgotten {record.id} (version {record.version})")


@app.command()
def purge(
    record_id: Annotated[str | None, typer.Argument(help="A memory id; or give --user/--ns for a whole scope")] = None,
    reason: str | None = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation")] = False,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOpt = None, agent: AgentOption = None,
    ns: NsOption = None,
) -> None:
    """Hard delete, versions included (right to be forgotten)."""
    scope = run(lambda: scope_from(tenant, user, agent, ns))
    if record_id is None and scope.namespace == ():
        console.print("[red]refusing to purge a whole tenant; give an id, --user or --ns[/red]")
        raise typer.Exit(2)
    what = record_id or f"everything under {scope}"
    if not yes and not typer.confirm(f"Purge {what}? This cannot be undone."):
        raise typer.Exit(1)
    with opened(db) as memory:
        if record_id:
            run(lambda: memory.purge(record_id, scope, reason=reason, actor="cli"))
            count = 1
        else:
            count = run(lambda: memory.purge_scope(scope, reason=reason, actor="cli"))
    console.print(f"purged {count} memories")


@app.command()
def export(
    dest: Annotated[Path | None, typer.Argument(help="Output file; stdout when omitted")] = None,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOpt = None, agent: AgentOption = None,
    ns: NsOption = None,
) -> None:
    """Export a scope (and below) as JSONL, versions included."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, user, agent, ns))
        count = run(lambda: memory.export_jsonl(dest if dest else sys.stdout, scope))
    if dest:
        console.print(f"exported {count} memories to {dest}")


@app.command("import")
def import_cmd(
    source: Path,
    on_conflict: Annotated[str, typer.Option(help="error | skip | replace")] = "error",
    db: DbOption = None,
) -> None:
    """Import a JSONL export in one transaction (all-or-nothing)."""
    with opened(db) as memory:
        result = run(lambda: memory.import_jsonl(source, on_conflict=on_conflict, actor="cli"))
    console.print(f"imported {result.imported}, skipped {result.skipped} (tenant {result.tenant})")


@app.command()
def reindex(db: DbOption = None) -> None:
    """Re-embed memories whose vectors came from another model (reads keep working)."""
    with opened(db) as memory, Progress(console=console) as progress:
        task = progress.add_task(f"re-embedding with {memory.embedder.name}", total=None)
        count = run(lambda: memory.reindex(progress=lambda done, total: progress.update(task, completed=done,
                                                                                          total=total)))
    console.print(f"re-embedded {count} memories")


@app.command()
def stats(
    db: DbOption = None,
    tenant: Annotated[str | None, typer.Option("--tenant", "-t", envvar="ENGRAM_TENANT")] = None,
    json_out: JsonOption = False,
) -> None:
    """Counts by status and kind, versions, audit events, disk use."""
    with opened(db) as memory:
        result = run(lambda: memory.stats(tenant))
    data = {"records": result.records, "active": result.active, "by_status": dict(result.by_status),
            "by_kind": dict(result.by_kind), "versions": result.versions, "audit_events": result.audit_events,
            "tenants": result.tenants, "embedding_models": dict(result.embedding_models), **dict(result.extra)}
    print_json(data) if json_out else console.print(data)


@app.command()
def demo(
    db: Annotated[str | None, typer.Option("--db", help="Keep the demo database here (default: a temp file)")] = None,
) -> None:
    """Play the classic scenario offline: remember, recall in a new conversation, isolate, forget."""
    from .demo import play

    play(db)


