"""`engram audit why | answer`: where a memory came from; which memories an answer used."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ..shapes.governance import provenance_data, trace_data
from .common import DbOption, JsonOption, TenantOption, console, opened, print_json, run, scope_from
from .ids import resolve_id
from .tables import audit_table

audit = typer.Typer(help="Provenance: where a memory came from, and what an answer was built from.",
                    no_args_is_help=True)


@audit.command("why")
def why(
    record_id: Annotated[str, typer.Argument(help="A memory id, or a unique prefix of 8+ characters")],
    db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """Where a memory came from: thread, messages, extractor, versions, approvals, answers."""
    with opened(db) as memory:
        scope = run(lambda: scope_from(tenant, None, None, None))
        found = run(lambda: memory.audit.why(resolve_id(memory, record_id, scope), scope))
    if json_out:
        print_json(provenance_data(found))
        return
    record = found.record
    console.print(f"[bold]{record.id}[/bold] {record.kind.value} · {record.status.value} · v{record.version}",
                  markup=True)
    console.print(f"  {record.content}", markup=False)
    console.print(f"  said in thread {found.thread_id or '-'}, messages {', '.join(found.message_ids) or '-'}, "
                  f"by {record.source.actor}; extractor {found.extractor or '-'}", markup=False)
    console.print(audit_table(found.events, title="history"))
    for recall in found.answers:
        console.print(f"  recalled {recall.at.isoformat(timespec='seconds')} (recall {recall.id}) → answer "
                      f"{recall.answer_id or '-'}", markup=False)


@audit.command("answer")
def answer(
    ident: Annotated[str, typer.Argument(help="An answer (message) id or a recall id")],
    db: DbOption = None, tenant: TenantOption = "default", json_out: JsonOption = False,
) -> None:
    """The memories that were in the prompt of an answer, with their scores and whether it used them."""
    with opened(db) as memory:
        traces = run(lambda: memory.audit.answer(ident, scope_from(tenant, None, None, None)))
    if json_out:
        print_json([trace_data(t) for t in traces])
        return
    for t in traces:
        table = Table(title=f"recall {t.recall.id} · {t.recall.at.isoformat(timespec='seconds')} · thread "
                            f"{t.recall.thread_id or '-'} · answer {t.recall.answer_id or '-'}")
        for column in ("score", "used", "id", "v", "content"):
            table.add_column(column, overflow="fold")
        for m in t.memories:
            used = "-" if m.used is None else ("yes" if m.used else "no")
            table.add_row(f"{m.score:.3f}", used, m.record_id[:12], str(m.version),
                          m.record.content if m.record else "(purged)")
        console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(audit, name="audit")
