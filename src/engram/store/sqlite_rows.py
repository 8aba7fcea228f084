"""Row-level statements of the SQLite backend (run inside its transactions)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from functools import lru_cache

from ..model import (
    AuditEvent,
    Kind,
    MemoryRecord,
    Operation,
    Scope,
    Sensitivity,
    Source,
    Status,
    Version,
    freeze_mapping,
)
from . import sqlite_lexical as lexical
from .base import AuditDraft, RecordWrite, Touch
from .codec import (
    audit_from_row,
    dumps,
    from_epoch,
    namespace_from_key,
    namespace_key,
    record_from_data,
    record_to_data,
    to_epoch,
)
from .sqlite_vectors import VectorEntry, entry_times

_RECORD_COLUMNS = (
    "tenant", "id", "namespace", "kind", "content", "category", "tags", "metadata", "importance", "confidence",
    "sensitivity", "status", "version", "valid_from", "valid_to", "expires_at", "created_at", "updated_at",
    "last_accessed_at", "access_count", "actor", "thread_id", "message_id", "embedding_model", "embedding",
    "read_only", "supersedes", "superseded_by", "reply_to", "pinned", "subject", "slot", "terms",
)
_UPSERT = (
    f"INSERT INTO memories ({', '.join(_RECORD_COLUMNS)}) VALUES ({', '.join('?' * len(_RECORD_COLUMNS))}) "
    "ON CONFLICT (tenant, id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _RECORD_COLUMNS if c not in ("tenant", "id"))
    + " RETURNING rowid"
)
_INSERT = f"INSERT INTO memories ({', '.join(_RECORD_COLUMNS)}) VALUES ({', '.join('?' * len(_RECORD_COLUMNS))})"


def vector_entry(write: RecordWrite) -> VectorEntry | None:
    """What the scope's vector chunk keeps of the record (None without a vector or model)."""
    r = write.record
    if write.embedding is None or r.embedding_model is None:
        return None
    return VectorEntry(r.id, r.embedding_model, r.status.value, r.kind.value, r.source.thread_id,
                       entry_times(r.valid_from.timestamp(), to_epoch(r.valid_to), to_epoch(r.expires_at),
                                   r.importance, r.updated_at.timestamp()),
                       write.embedding.astype("<f4").tobytes())


def record_values(write: RecordWrite) -> tuple:
    """The record's columns; its vector goes to the scope's chunk (the embedding column stays NULL)."""
    r = write.record
    embedded = write.embedding is not None
    return (
        r.scope.tenant, r.id, namespace_key(r.scope.namespace), r.kind.value, r.content, r.category,
        dumps(list(r.tags)), dumps(dict(r.metadata)), r.importance, r.confidence, r.sensitivity.value,
        r.status.value, r.version, to_epoch(r.valid_from), to_epoch(r.valid_to), to_epoch(r.expires_at),
        to_epoch(r.created_at), to_epoch(r.updated_at), to_epoch(r.last_accessed_at), r.access_count,
        r.source.actor, r.source.thread_id, r.source.message_id, r.embedding_model if embedded else None,
        None, int(r.read_only), r.supersedes, r.superseded_by, r.source.reply_to,
        None if r.pinned is None else int(r.pinned), r.subject, r.slot, write.terms,
    )


def upsert_record(conn: sqlite3.Connection, write: RecordWrite) -> int:
    return conn.execute(_UPSERT, record_values(write)).fetchone()[0]


def insert_record(conn: sqlite3.Connection, write: RecordWrite) -> int:
    """A record known not to exist yet: a plain INSERT (half the cost of the upsert)."""
    rowid = conn.execute(_INSERT, record_values(write)).lastrowid
    assert rowid is not None  # an INSERT that returned sets it
    return rowid


_INSERT_VERSION = (
    "INSERT INTO memory_versions (tenant, record_id, version, operation, actor, at, reason, snapshot) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def version_values(tenant: str, version: Version) -> tuple:
    snapshot = None if version.record is None else dumps(record_to_data(version.record))
    return (tenant, version.record_id, version.version, version.operation.value, version.actor,
            to_epoch(version.at), version.reason, snapshot)


def insert_versions(conn: sqlite3.Connection, tenant: str, versions: Sequence[Version]) -> None:
    conn.executemany(_INSERT_VERSION, [version_values(tenant, version) for version in versions])


def purge_record(conn: sqlite3.Connection, tenant: str, record_id: str, indexer: lexical.Indexer) -> None:
    """Delete the record and its versions; its postings go now, its vector at ``indexer.flush()``."""
    row = conn.execute("SELECT rowid FROM memories WHERE tenant = ? AND id = ?", (tenant, record_id)).fetchone()
    if row is not None:
        indexer.remove(row[0])
        conn.execute("DELETE FROM memories WHERE rowid = ?", (row[0],))
    conn.execute("DELETE FROM memory_versions WHERE tenant = ? AND record_id = ?", (tenant, record_id))


def touch_record(conn: sqlite3.Connection, tenant: str, touch: Touch) -> None:
    conn.execute(
        "UPDATE memories SET access_count = access_count + 1, "
        "last_accessed_at = max(coalesce(last_accessed_at, 0), ?) WHERE tenant = ? AND id = ?",
        (to_epoch(touch.at), tenant, touch.record_id),
    )


_INSERT_AUDIT = (
    "INSERT INTO audit_log (tenant, at, actor, operation, record_id, version, namespace, source_message_id, "
    "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def audit_values(tenant: str, draft: AuditDraft) -> tuple:
    return (tenant, to_epoch(draft.at), draft.actor, draft.operation.value, draft.record_id, draft.version,
            namespace_key(draft.namespace), draft.source_message_id, dumps(draft.detail))


def insert_audits(conn: sqlite3.Connection, tenant: str, drafts: Sequence[AuditDraft]) -> None:
    conn.executemany(_INSERT_AUDIT, [audit_values(tenant, draft) for draft in drafts])


# what reads select: every column but the embedding (vectors are read by the vector paths)
READ_COLUMNS = tuple(c for c in _RECORD_COLUMNS if c not in ("embedding", "terms"))
RECORD_SELECT = ", ".join(READ_COLUMNS)
_KINDS = {member.value: member for member in Kind}
_STATUSES = {member.value: member for member in Status}
_SENSITIVITIES = {member.value: member for member in Sensitivity}


@lru_cache(maxsize=4096)
def _scope(tenant: str, namespace: str) -> Scope:
    """Scopes are immutable and validated on creation: build each one once."""
    return Scope(tenant, namespace_from_key(namespace))


def _tags(text: str) -> tuple[str, ...]:
    return () if text == "[]" else tuple(json.loads(text))


def record_from_row(row: sqlite3.Row) -> MemoryRecord:
    """A record from a row selected with RECORD_SELECT (positional: faster than by name)."""
    (tenant, record_id, namespace, kind, content, category, tags, metadata, importance, confidence, sensitivity,
     status, version, valid_from, valid_to, expires_at, created_at, updated_at, last_accessed_at, access_count,
     actor, thread_id, message_id, embedding_model, read_only, supersedes, superseded_by, reply_to, pinned, subject,
     slot) = row
    return MemoryRecord(
        id=record_id,
        scope=_scope(tenant, namespace),
        kind=_KINDS.get(kind) or Kind(kind),
        content=content,
        category=category,
        tags=_tags(tags),
        metadata=freeze_mapping(None if metadata == "{}" else json.loads(metadata)),
        importance=importance,
        confidence=confidence,
        sensitivity=_SENSITIVITIES.get(sensitivity) or Sensitivity(sensitivity),
        status=_STATUSES.get(status) or Status(status),
        version=version,
        valid_from=from_epoch(valid_from),
        valid_to=from_epoch(valid_to),
        expires_at=from_epoch(expires_at),
        created_at=from_epoch(created_at),
        updated_at=from_epoch(updated_at),
        last_accessed_at=from_epoch(last_accessed_at),
        access_count=access_count,
        source=Source(actor=actor, thread_id=thread_id, message_id=message_id, reply_to=reply_to),
        embedding_model=embedding_model,
        read_only=bool(read_only),
        supersedes=supersedes,
        superseded_by=superseded_by,
        pinned=None if pinned is None else bool(pinned),
        subject=subject,
        slot=slot,
    )


def version_from_row(row: sqlite3.Row) -> Version:
    snapshot = row["snapshot"]
    return Version(
        record_id=row["record_id"],
        version=row["version"],
        operation=Operation(row["operation"]),
        actor=row["actor"],
        at=from_epoch(row["at"]),
        reason=row["reason"],
        record=None if snapshot is None else record_from_data(json.loads(snapshot)),
    )


def audit_from_sqlite(row: sqlite3.Row) -> AuditEvent:
    return audit_from_row(dict(row))
