"""`engram serve`: the HTTP API (needs the `server` extra)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from .common import DbOption, TenantOption, errors, opened, run

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on (0.0.0.0 for every interface)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8765,
    db: DbOption = None,
    tenant: TenantOption = "default",
    log_level: Annotated[str, typer.Option(help="critical, error, warning, info, debug")] = "info",
) -> None:
    """Serve the HTTP API, its docs at /docs and the memory inspector at /ui. API keys come
    from ENGRAM_API_KEYS="key1=tenant1,key2=tenant2"; without it the server is
    single-tenant (--tenant / ENGRAM_TENANT) and needs no key."""
    try:
        import uvicorn

        from ..server.auth import API_KEYS_ENV, parse_api_keys
        from ..server.http import create_app
    except ImportError as exc:
        errors.print("[red]error:[/red] engram serve needs the server extra: "
                     f"pip install 'engram-agentmem[server]' ({exc})")
        raise typer.Exit(2) from None
    api_keys = run(lambda: parse_api_keys(os.environ.get(API_KEYS_ENV)))
    with opened(db, create=True) as memory:
        app = run(lambda: create_app(memory, api_keys=api_keys, tenant=tenant))
        errors.print(f"engram serve: {app.state.tenancy.describe()}")
        shown = f"[{host}]" if ":" in host else host
        errors.print(f"memory inspector: http://{shown}:{port}/ui/ · API docs: http://{shown}:{port}/docs",
                     highlight=False, soft_wrap=True)
        if api_keys is None and host not in LOOPBACK:
            errors.print(f"[yellow]warning:[/yellow] no API keys and listening on {host}: anyone who can reach "
                         "this port can read and change every memory of the tenant")
        uvicorn.run(app, host=host, port=port, log_level=log_level)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
