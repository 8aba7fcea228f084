"""`engram mcp --user ID`: an MCP server on stdio for one user (needs the `mcp` extra).

Nothing but the protocol may reach stdout: messages go to stderr."""

from __future__ import annotations

from typing import Annotated

import typer

from ..model import Scope
from .common import DbOption, TenantOption, errors, opened, run


def mcp(
    user: Annotated[str, typer.Option("--user", "-u", help="The user whose memories the tools read and write")],
    tenant: TenantOption = "default",
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="Scope agents/<agent>/users/<user>")] = None,
    db: DbOption = None,
    reviewer: Annotated[str | None, typer.Option(
        "--reviewer", help="Add the approval tools, deciding as this person (for a reviewer's client)")] = None,
) -> None:
    """Serve the memory tools over MCP (stdio) for one fixed user: the model cannot choose another scope."""
    try:
        from ..server.mcp import create_mcp_server
    except ImportError as exc:
        errors.print(f"[red]error:[/red] engram mcp needs the mcp extra: pip install 'engram-agentmem[mcp]' ({exc})")
        raise typer.Exit(2) from None
    scope = run(lambda: Scope.for_user(tenant, user, agent=agent))
    with opened(db, create=True) as memory:
        server = create_mcp_server(memory, scope, reviewer=reviewer)
        errors.print(f"engram mcp: memories of {scope} on stdio")
        server.run("stdio")


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)
