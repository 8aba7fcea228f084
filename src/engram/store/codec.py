"""Lossless conversions between value objects and plain data, shared by backends,
version snapshots and JSONL export."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, overload

import numpy as np

from ..errors import InvalidValueError
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
    check_slot,
    check_subject,
    check_unit_interval,
    freeze_mapping,
    parse_enum,
    utc,
)
from ..slots import USER
from .base import RankFields

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SEPARATOR = "\x1f"  # control characters are refused in labels, so this never collides


def namespace_key(namespace: tuple[str, ...]) -> str:
    """Encode a namespace so that prefix matching is a plain string range."""
    return "".join(label + SEPARATOR for label in namespace)


def namespace_from_key(key: str) -> tuple[str, ...]:
    return tuple(key.split(SEPARATOR)[:-1]) if key else ()


def namespace_range(namespace: tuple[str, ...]) -> tuple[str, str] | None:
    """[low, high) covering the namespace and every descendant; None for the root."""
    key = namespace_key(namespace)
    if not key:
        return None
    return key, key[:-1] + chr(ord(SEPARATOR) + 1)


def epoch_microseconds(seconds: np.ndarray) -> np.ndarray:
    """Epoch seconds (float64) as int64 microseconds, rounded exactly as
    ``datetime.fromtimestamp`` rounds them (the fraction half-even to the microsecond),
    so differences of these equal differences of the records' datetimes."""
    whole = np.trunc(seconds)
    return whole.astype(np.int64) * 1_000_000 + np.round((seconds - whole) * 1e6).astype(np.int64)


def microseconds(moment: datetime) -> int:
    """A datetime as integer microseconds since the epoch (exact)."""
    return (moment - EPOCH) // timedelta(microseconds=1)


def to_epoch(moment: datetime | None) -> float | None:
    return None if moment is None else moment.timestamp()


@overload
def from_epoch(value: float) -> datetime: ...
@overload
def from_epoch(value: None) -> None: ...
@overload
def from_epoch(value: float | None) -> datetime | None: ...
def from_epoch(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _required_iso(value: str | None, what: str) -> datetime:
    moment = _from_iso(value, what)
    if moment is None:
        raise InvalidValueError(f"{what} is required, got null")
    return moment


def _from_iso(value: str | None, what: str) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise InvalidValueError(f"{what} is not an ISO-8601 datetime: {value!r}") from None
    if moment.tzinfo is None:
        raise InvalidValueError(f"{what} has no timezone: {value!r}")
    return utc(moment, what)


def record_to_data(record: MemoryRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "tenant": record.scope.tenant,
        "namespace": list(record.scope.namespace),
        "kind": record.kind.value,
        "content": record.content,
        "category": record.category,
        "tags": list(record.tags),
        "metadata": dict(record.metadata),
        "importance": record.importance,
        "confidence": record.confidence,
        "sensitivity": record.sensitivity.value,
        "status": record.status.value,
        "version": record.version,
        "valid_from": _iso(record.valid_from),
        "valid_to": _iso(record.valid_to),
        "expires_at": _iso(record.expires_at),
        "created_at": _iso(record.created_at),
        "updated_at": _iso(record.updated_at),
        "last_accessed_at": _iso(record.last_accessed_at),
        "access_count": record.access_count,
        "source": {
            "actor": record.source.actor,
            "thread_id": record.source.thread_id,
            "message_id": record.source.message_id,
            "reply_to": record.source.reply_to,
        },
        "embedding_model": record.embedding_model,
        "read_only": record.read_only,
        "supersedes": record.supersedes,
        "superseded_by": record.superseded_by,
        "pinned": record.pinned,
        "subject": record.subject,
        "slot": record.slot,
    }


def _content(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidValueError("content must be a non-empty string")
    return value


def _reply_to(value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InvalidValueError("source.reply_to must be a non-empty string or null")
    return value


def _pinned(value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise InvalidValueError(f"pinned must be true, false or null, got {value!r}")
    return value


def record_from_data(data: dict[str, Any]) -> MemoryRecord:
    """Inverse of record_to_data; raises ValidationError subclasses on bad data."""
    try:
        source = data.get("source") or {}
        return MemoryRecord(
            id=str(data["id"]),
            scope=Scope(data["tenant"], tuple(data.get("namespace") or ())),
            kind=parse_enum(Kind, data["kind"], "kind"),
            content=_content(data["content"]),
            category=data.get("category"),
            tags=tuple(data.get("tags") or ()),
            metadata=freeze_mapping(data.get("metadata")),
            importance=check_unit_interval(data["importance"], "importance"),
            confidence=check_unit_interval(data["confidence"], "confidence"),
            sensitivity=parse_enum(Sensitivity, data.get("sensitivity", "normal"), "sensitivity"),
            status=parse_enum(Status, data.get("status", "active"), "status"),
            version=int(data.get("version", 1)),
            valid_from=_required_iso(data["valid_from"], "valid_from"),
            valid_to=_from_iso(data.get("valid_to"), "valid_to"),
            expires_at=_from_iso(data.get("expires_at"), "expires_at"),
            created_at=_required_iso(data["created_at"], "created_at"),
            updated_at=_required_iso(data["updated_at"], "updated_at"),
            last_accessed_at=_from_iso(data.get("last_accessed_at"), "last_accessed_at"),
            access_count=int(data.get("access_count", 0)),
            source=Source(
                actor=source.get("actor", "user"),
                thread_id=source.get("thread_id"),
                message_id=source.get("message_id"),
                reply_to=_reply_to(source.get("reply_to")),
            ),
            embedding_model=data.get("embedding_model"),
            read_only=bool(data.get("read_only", False)),
            supersedes=data.get("supersedes"),
            superseded_by=data.get("superseded_by"),
            pinned=_pinned(data.get("pinned")),
            subject=check_subject(data.get("subject", USER)),
            slot=check_slot(data.get("slot")),
        )
    except KeyError as exc:
        raise InvalidValueError(f"record is missing field {exc.args[0]!r}") from None
    except (TypeError, AttributeError) as exc:
        raise InvalidValueError(f"record has a field of the wrong type: {exc}") from None


def version_to_data(version: Version) -> dict[str, Any]:
    return {
        "record_id": version.record_id,
        "version": version.version,
        "operation": version.operation.value,
        "actor": version.actor,
        "at": _iso(version.at),
        "reason": version.reason,
        "record": None if version.record is None else record_to_data(version.record),
    }


def version_from_data(data: dict[str, Any]) -> Version:
    try:
        snapshot = data.get("record")
        return Version(
            record_id=str(data["record_id"]),
            version=int(data["version"]),
            operation=parse_enum(Operation, data["operation"], "operation"),
            actor=str(data["actor"]),
            at=_required_iso(data["at"], "at"),
            reason=data.get("reason"),
            record=None if snapshot is None else record_from_data(snapshot),
        )
    except KeyError as exc:
        raise InvalidValueError(f"version is missing field {exc.args[0]!r}") from None


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def audit_from_row(row: dict[str, Any]) -> AuditEvent:
    return AuditEvent(
        id=int(row["id"]),
        tenant=row["tenant"],
        at=from_epoch(row["at"]),
        actor=row["actor"],
        operation=Operation(row["operation"]),
        record_id=row["record_id"],
        version=row["version"],
        namespace=namespace_from_key(row["namespace"] or ""),
        source_message_id=row["source_message_id"],
        detail=freeze_mapping(json.loads(row["detail"]) if isinstance(row["detail"], str) else row["detail"]),
    )


# the columns a backend selects for RankFields, in this order
RANK_COLUMNS = ("id", "status", "importance", "updated_at", "valid_from", "valid_to", "expires_at", "thread_id")


def _seconds(value: Any, missing: float) -> float:
    if value is None:
        return missing
    return value.timestamp() if isinstance(value, datetime) else float(value)


def rank_fields_from_rows(rows: Sequence[Sequence[Any]]) -> RankFields:
    """RankFields from rows of RANK_COLUMNS; times as epoch seconds (SQLite) or datetimes (PostgreSQL)."""
    updated = [row[3] for row in rows]
    if updated and isinstance(updated[0], datetime):
        updated_us = np.array([microseconds(moment) for moment in updated], dtype=np.int64)
    else:
        updated_us = epoch_microseconds(np.array(updated, dtype=np.float64))
    return RankFields(
        ids=tuple(row[0] for row in rows),
        importance=np.array([row[2] for row in rows], dtype=np.float64),
        updated_us=updated_us,
        valid_from=np.array([_seconds(row[4], -np.inf) for row in rows], dtype=np.float64),
        valid_to=np.array([_seconds(row[5], np.inf) for row in rows], dtype=np.float64),
        expires_at=np.array([_seconds(row[6], np.inf) for row in rows], dtype=np.float64),
        deleted=np.array([row[1] == Status.DELETED.value for row in rows], dtype=bool),
        threads=tuple(row[7] for row in rows),
    )
