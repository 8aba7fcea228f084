"""`engram approvals list | show | approve | reject`: decide changes held by an approval rule."""

from __future__ import annotations

import getpass
from typing import Annotated

import typer

from ..shapes import record_data
from ..shapes.governance import pending_data
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
from .ids import resolve_pending_id
from .tables import pending_table

approvals = typer.Typer(help="Changes held by an approval rule: list, approve (optionally edited), reject.",
                        no_args_is_help=True)
ReviewerOpt = Annotated[str | None, typer.Option("--reviewer", envvar="ENGRAM_REVIEWER",
                                                 help="Who decides (audited); default cli:<login>")]


PendingArg = Annotated[str, typer.Argument(help="A pending change's id, or a unique prefix of 8+ characters")]


def reviewer_name(given: str | None) -> str:
    return given or f"cli:{getpass.getuser()}"


@approvals.command("list")
def list_cmd(
    status: Annotated[str, typer.Option(help="pending, approved, rejected, expired, or all")] = "pending",
    limit: int = 50,
    db: DbOption = None, tenant: TenantOption = "default", user: UserOption = None, agent: AgentOption = None,
    ns: NsOption = None, json_out: JsonOption = False,
) -> None:
    """Pending changes of a scope and below it (the whole tenant by default), oldest first."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, user, agent, ns))
        found = run(lambda: memory.approvals.list(scope, status=None if status == "all" else status, limit=limit))
    if json_out:
        print_json({"items": [pending_data(p) for p in found]})  # GET /v1/approvals
        return
    console.print(pending_table(found, f"{len(found)} {status} change(s)", with_status=status == "all"))
    if found:
        console.print("approve or reject one by its id as shown (any unique prefix of 8+ characters)")


@approvals.command("show")
def show(pending_id: PendingArg, db: DbOption = None, tenant: TenantOption = "default") -> None:
    """One pending change with every proposed record state."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, None, None, None))
        found = run(lambda: memory.approvals.get(resolve_pending_id(memory, pending_id, scope), scope))
    print_json(pending_data(found))


@approvals.command("approve")
def approve(
    pending_id: PendingArg,
    reason: Annotated[str | None, typer.Option(help="Why (audited)")] = None,
    content: Annotated[str | None, typer.Option(help="Edit the content before approving")] = None,
    importance: Annotated[float | None, typer.Option(help="Edit the importance before approving")] = None,
    reviewer: ReviewerOpt = None, db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Write a pending change, as the reviewer (a record changed since is a conflict, exit 4)."""
    edit = {k: v for k, v in (("content", content), ("importance", importance)) if v is not None}
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, None, None, None))
        full_id = run(lambda: resolve_pending_id(memory, pending_id, scope))
        written = run(lambda: memory.approvals.approve(full_id, scope, reviewer=reviewer_name(reviewer),
                                                       reason=reason, edit=edit))
    if json_out:
        print_json({"items": [record_data(r) for r in written]})  # POST /v1/approvals/{id}/approve
        return
    console.print(f"approved {full_id}: wrote " + ", ".join(f"{r.id} v{r.version}" for r in written))


@approvals.command("reject")
def reject(
    pending_id: PendingArg,
    reason: Annotated[str, typer.Option(help="Why (audited)")],
    reviewer: ReviewerOpt = None, db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Refuse a pending change: nothing of it is written; the audit keeps the reason."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, None, None, None))
        full_id = run(lambda: resolve_pending_id(memory, pending_id, scope))
        rejected = run(lambda: memory.approvals.reject(full_id, scope, reviewer=reviewer_name(reviewer),
                                                       reason=reason))
    if json_out:
        print_json(pending_data(rejected))  # POST /v1/approvals/{id}/reject
        return
    console.print(f"rejected {full_id}")


def register(app: typer.Typer) -> None:
    app.add_typer(approvals, name="approvals")
