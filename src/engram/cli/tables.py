"""Tables the CLI prints. They stay readable at 80 columns and when piped: short
columns never wrap (so a header is never split across lines), and the one text
column takes the rest of the width and folds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from rich import box
from rich.table import Table

from ..model import AuditEvent, Job, MemoryRecord, SearchHit, Stats, Version
from ..values.governance import PendingChange

ID_CHARS = 16  # ids are 12 hex characters of time + random: 16 tell apart records written in one batch


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 turn``, ``2 turns``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def short_ids(ids: Sequence[str]) -> dict[str, str]:
    """Each id cut to ID_CHARS characters, longer where two shown ids would look alike."""
    out = {}
    for record_id in ids:
        width = ID_CHARS
        while width < len(record_id) and any(
            other != record_id and other[:width] == record_id[:width] for other in ids
        ):
            width += 4
        out[record_id] = record_id[:width]
    return out


def _table(columns: Sequence[str], *, text: str | Mapping[str, int] = "", title: str | None = None) -> Table:
    """Columns named in ``text`` (name → share of the free width) fold; every other
    column keeps its width and never wraps. No header is ever narrower than its name."""
    shares = ({text: 1} if text else {}) if isinstance(text, str) else dict(text)
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True, title_justify="left")
    for name in columns:
        if name in shares:
            table.add_column(name, overflow="fold", ratio=shares[name], min_width=max(len(name), 8))
        else:
            table.add_column(name, no_wrap=True, min_width=len(name))
    return table


def _when(moment: datetime | None) -> str:
    return "" if moment is None else moment.strftime("%Y-%m-%d %H:%M")


def records_table(records: Sequence[MemoryRecord], title: str | None = None) -> Table:
    table = _table(("id", "kind", "content", "imp", "status", "v"), text="content", title=title)
    ids = short_ids([r.id for r in records])
    for r in records:
        table.add_row(ids[r.id], r.kind.value, r.content, f"{r.importance:.2f}", r.status.value, str(r.version))
    return table


def hits_table(hits: Sequence[SearchHit]) -> Table:
    table = _table(("score", "kind", "content", "lex", "vec", "rec", "imp", "id"), text="content")
    ids = short_ids([h.record.id for h in hits])
    for h in hits:
        s = h.signals
        table.add_row(f"{h.score:.3f}", h.record.kind.value, h.record.content, f"{s.lexical:.2f}",
                      f"{s.vector:.2f}", f"{s.recency:.2f}", f"{s.importance:.2f}", ids[h.record.id])
    table.caption = "lex = BM25, vec = vector similarity, rec = recency, imp = importance"
    return table


def versions_table(versions: Sequence[Version]) -> Table:
    table = _table(("v", "operation", "at", "actor", "reason", "status", "content"),
                   text={"actor": 1, "reason": 2, "content": 3})
    for v in versions:
        record = v.record
        table.add_row(str(v.version), v.operation.value, _when(v.at), v.actor, v.reason or "",
                      record.status.value if record else "", record.content if record else "(purged)")
    return table


def fields_table(fields: Iterable[tuple[str, Any]], title: str | None = None) -> Table:
    """Name → value, one per line (for show and stats)."""
    table = _table(("field", "value"), text="value", title=title)
    for name, value in fields:
        table.add_row(name, _text(value))
    return table


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {_text(v)}" for k, v in value.items()) or "—"
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value) or "—"
    return str(value)


def record_fields(record: MemoryRecord) -> list[tuple[str, Any]]:
    source = record.source
    return [
        ("id", record.id), ("content", record.content), ("kind", record.kind.value),
        ("status", record.status.value), ("version", record.version), ("scope", str(record.scope)),
        ("importance", record.importance), ("confidence", record.confidence), ("category", record.category),
        ("tags", list(record.tags)), ("metadata", dict(record.metadata)), ("sensitivity", record.sensitivity.value),
        ("valid from", record.valid_from), ("valid to", record.valid_to), ("expires", record.expires_at),
        ("created", record.created_at), ("updated", record.updated_at),
        ("source", ", ".join(f"{k} {v}" for k, v in (("actor", source.actor), ("thread", source.thread_id),
                                                       ("message", source.message_id)) if v)),
        ("reply to", source.reply_to), ("read only", "yes" if record.read_only else ""),
        ("about", record.subject + (f" · {record.slot}" if record.slot else "")),
        ("pinned", "" if record.pinned is None else "into the profile" if record.pinned else "out of the profile"),
        ("supersedes", record.supersedes), ("superseded by", record.superseded_by),
        ("embedding model", record.embedding_model), ("accessed", f"{record.access_count} times"),
    ]


def stats_fields(stats: Stats) -> list[tuple[str, Any]]:
    extra = dict(stats.extra)
    fields: list[tuple[str, Any]] = [
        ("records", stats.records), ("active", stats.active), ("by status", dict(stats.by_status)),
        ("by kind", dict(stats.by_kind)), ("versions", stats.versions), ("audit events", stats.audit_events),
        ("tenants", stats.tenants), ("embedding models", dict(stats.embedding_models)),
    ]
    labels = {"jobs": "jobs", "llm_tokens": "LLM tokens", "path": "path", "bytes_on_disk": "bytes on disk",
              "schema_version": "schema version"}
    fields += [(labels.get(key, key.replace("_", " ")), value) for key, value in extra.items()]
    return fields


def events_table(result: Any, title: str | None = None) -> Table:
    table = _table(("event", "kind", "content", "reason"), text={"content": 3, "reason": 2},
                   title=title or f"trigger: {result.trigger_reason}")
    for e in result.events:
        table.add_row(e.event, e.kind.value if e.kind else "", e.content, e.reason)
    return table


def jobs_table(jobs: Sequence[Job]) -> Table:
    table = _table(("id", "tenant", "status", "tries", "created", "last error"), text={"tenant": 1, "last error": 3})
    ids = short_ids([j.id for j in jobs])
    for j in jobs:
        table.add_row(ids[j.id], j.tenant, j.status.value, str(j.attempts), _when(j.created_at), j.last_error or "")
    return table


def pending_table(found: Sequence[PendingChange], title: str, *, with_status: bool = False) -> Table:
    """Pending changes with short ids (what ``approvals approve|reject`` take as a prefix)
    and the rule's name (``approvals show`` gives why it matched); fits 80 columns.
    ``with_status``: a status column instead of the expiry day (decided changes do not expire)."""
    last = "status" if with_status else "expires"
    table = _table(("id", "by", "change", "content", "namespace", "rule", last),
                   text={"content": 3, "by": 1, "namespace": 1, "rule": 1}, title=title)
    ids = short_ids([p.id for p in found])
    for p in found:
        table.add_row(ids[p.id], p.actor, "+".join(c.operation.value for c in p.changes), p.record.content,
                      "/".join(p.namespace), p.rule.split(":", 1)[0],
                      p.status.value if with_status else p.expires_at.strftime("%Y-%m-%d"))
    return table


AUDIT_DETAILS = ("reason", "event", "pending_id", "proposed_by", "rule", "verdict", "kinds")


def audit_table(events: Sequence[AuditEvent], title: str | None = None) -> Table:
    """A memory's audit trail; each event's detail as ``name: value`` lines, never a Python dict."""
    table = _table(("at", "operation", "actor", "v", "detail"), text={"actor": 1, "detail": 3}, title=title)
    for e in events:
        detail = "\n".join(f"{name.replace('_', ' ')}: {_detail_value(name, e.detail[name])}"
                            for name in AUDIT_DETAILS if e.detail.get(name) not in (None, "", [], {}))
        table.add_row(_when(e.at), e.operation.value, e.actor, str(e.version or ""), detail)
    return table


def _detail_value(name: str, value: Any) -> str:
    if name == "pending_id":  # a prefix ``approvals show`` takes
        return str(value)[:ID_CHARS]
    if isinstance(value, (list, tuple)):
        return ", ".join(str(item) for item in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{key} {item}" for key, item in value.items())
    return str(value)
