"""`engram keys generate | status | rotate | reveal`: personal data at rest (``memory.keys``)."""

from __future__ import annotations

import getpass
from typing import Annotated

import typer
from rich.table import Table

from ..shapes.governance import key_status_data, revealed_data, rotation_data
from .common import DbOption, JsonOption, console, opened, print_json, run, scope_from
from .ids import resolve_id

keys = typer.Typer(help="Encryption keys of the 'encrypt' PII action (ENGRAM_ENCRYPTION_KEY: newest first, "
                        "comma-separated).", no_args_is_help=True)
TenantOpt = Annotated[str | None, typer.Option("--tenant", "-t", envvar="ENGRAM_TENANT",
                                               help="One tenant (default: every tenant)")]


@keys.command("generate")
def generate() -> None:
    """Print a new Fernet key (put it first in ENGRAM_ENCRYPTION_KEY, then rotate)."""
    from ..governance.keys import generate_key

    print(generate_key())


@keys.command("status")
def status(
    tenant: Annotated[str, typer.Option("--tenant", "-t", envvar="ENGRAM_TENANT")] = "default",
    db: DbOption = None, json_out: JsonOption = False,
) -> None:
    """Which configured key (by fingerprint) decrypts how many stored values."""
    with opened(db) as memory:
        found = run(lambda: memory.keys.status(tenant))
    if json_out:
        print_json(key_status_data(found))
        return
    table = Table(title=f"{found.tenant}: {found.records} record(s) hold encrypted values")
    table.add_column("key (fingerprint)")
    table.add_column("values it decrypts", justify="right")
    for key in found.keys:
        table.add_row(key, str(found.values.get(key, 0)))
    table.add_row("(no configured key)", str(found.unreadable))
    console.print(table)


@keys.command("rotate")
def rotate(tenant: TenantOpt = None, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Re-encrypt every value stored under an older key with the first configured key
    (a new version each, audited); reads keep working meanwhile."""
    with opened(db) as memory:
        done = run(lambda: memory.keys.rotate(tenant, actor=f"cli:{getpass.getuser()}"))
    if json_out:
        print_json([rotation_data(r) for r in done])
        return
    for r in done:
        console.print(f"{r.tenant}: re-encrypted {r.values} value(s) in {r.records} record(s) with key {r.key}"
                      + (f"; {r.unreadable} value(s) no configured key decrypts" if r.unreadable else ""))


@keys.command("reveal")
def reveal(
    record_id: Annotated[str, typer.Argument(help="A memory id, or a unique prefix of 8+ characters")],
    reason: Annotated[str, typer.Option(help="Why (audited)")],
    tenant: Annotated[str, typer.Option("--tenant", "-t", envvar="ENGRAM_TENANT")] = "default",
    db: DbOption = None, json_out: JsonOption = False,
) -> None:
    """Show a memory with its encrypted personal data decrypted (audited as a reveal)."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, None, None, None))
        found = run(lambda: memory.keys.reveal(resolve_id(memory, record_id, scope), scope,
                                               actor=f"cli:{getpass.getuser()}", reason=reason))
    print_json(revealed_data(found)) if json_out else console.print(found.content, markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(keys, name="keys")
