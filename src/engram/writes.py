"""Pure functions that validate what a caller asks to store and build the next
state of a record. They build no rows: the write core (core.py) does that."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from .errors import InvalidContentError, InvalidValueError
from .limits import METADATA_DEPTH_CEILING, InputLimits, nesting_depth
from .model import (
    Kind,
    MemoryRecord,
    Scope,
    Sensitivity,
    Source,
    Status,
    as_tags,
    check_slot,
    check_subject,
    check_unit_interval,
    freeze_mapping,
    parse_enum,
    utc,
)
from .slots import USER


def new_id() -> str:
    """Time-ordered (48-bit milliseconds) + 80 random bits, as 32 hex characters."""
    return f"{int(time.time() * 1000):012x}{os.urandom(10).hex()}"


def check_content(content: Any, max_chars: int) -> str:
    if not isinstance(content, str):
        raise InvalidContentError(f"content must be a string, got {type(content).__name__}")
    text = content.strip()
    if not text:
        raise InvalidContentError("content must not be empty")
    if len(text) > max_chars:
        raise InvalidContentError(f"content has {len(text)} characters; the limit is {max_chars}")
    if "\x00" in text:
        raise InvalidContentError("content contains a NUL character")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidContentError("content is not valid Unicode (it holds a lone surrogate)") from None
    return text


def check_metadata(metadata: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A JSON object (its size and depth limits are the write core's check, engram.limits)."""
    if metadata is None:
        return freeze_mapping({})
    if not isinstance(metadata, Mapping):
        raise InvalidValueError(f"metadata must be a mapping, got {type(metadata).__name__}")
    if nesting_depth(metadata, METADATA_DEPTH_CEILING) > METADATA_DEPTH_CEILING:  # before json recurses into it
        raise InvalidValueError(f"metadata is nested more than {METADATA_DEPTH_CEILING} levels deep")
    try:
        json.dumps(dict(metadata), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(f"metadata must be JSON-serializable (no NaN): {exc}") from None
    return freeze_mapping(metadata)


def check_category(category: Any) -> str | None:
    if category is not None and (not isinstance(category, str) or not category.strip()):
        raise InvalidValueError("category must be a non-empty string when given")
    return category


def check_pinned(pinned: Any) -> bool | None:
    if pinned is not None and not isinstance(pinned, bool):
        raise InvalidValueError(f"pinned must be true, false or null (engram decides), got {pinned!r}")
    return pinned


def check_source(source: Source | None, limits: InputLimits) -> Source:
    if source is None:
        return Source()
    if not isinstance(source, Source):
        raise InvalidValueError(f"source must be an engram.Source, got {type(source).__name__}")
    if source.reply_to is None:
        return source
    try:
        return replace(source, reply_to=check_content(source.reply_to, limits.content_chars))
    except InvalidContentError as exc:
        raise InvalidContentError(f"source.reply_to: {exc}") from None


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """What a caller asks to remember, before validation."""

    content: str
    kind: Kind | str = Kind.FACT
    importance: float = 0.5
    confidence: float = 1.0
    category: str | None = None
    tags: Sequence[str] | None = None
    metadata: Mapping[str, Any] | None = None
    sensitivity: Sensitivity | str = Sensitivity.NORMAL
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    read_only: bool = False
    source: Source | None = None
    id: str | None = None
    pinned: bool | None = None
    subject: str | None = None  # None: the user
    slot: str | None = None


def build_record(draft: MemoryDraft, scope: Scope, now: datetime, limits: InputLimits,
                 model: str | None) -> MemoryRecord:
    if not isinstance(scope, Scope):
        raise InvalidValueError(f"scope must be an engram.Scope, got {type(scope).__name__}")
    valid_from = utc(draft.valid_from) if draft.valid_from else now
    valid_to = utc(draft.valid_to) if draft.valid_to else None
    if valid_to is not None and valid_to <= valid_from:
        raise InvalidValueError("valid_to must be later than valid_from")
    return MemoryRecord(
        id=draft.id or new_id(),
        scope=scope,
        kind=parse_enum(Kind, draft.kind, "kind"),
        content=check_content(draft.content, limits.content_chars),
        importance=check_unit_interval(draft.importance, "importance"),
        confidence=check_unit_interval(draft.confidence, "confidence"),
        category=check_category(draft.category),
        tags=as_tags(draft.tags),
        metadata=check_metadata(draft.metadata),
        sensitivity=parse_enum(Sensitivity, draft.sensitivity, "sensitivity"),
        valid_from=valid_from,
        valid_to=valid_to,
        expires_at=utc(draft.expires_at) if draft.expires_at else None,
        created_at=now,
        updated_at=now,
        source=check_source(draft.source, limits),
        embedding_model=model,
        read_only=bool(draft.read_only),
        pinned=check_pinned(draft.pinned),
        subject=check_subject(draft.subject or USER),
        slot=check_slot(draft.slot),
    )


EDITABLE = frozenset(
    {"content", "kind", "importance", "confidence", "category", "tags", "metadata", "sensitivity", "valid_to",
     "expires_at", "read_only", "pinned", "subject", "slot"}
)


def revise(record: MemoryRecord, changes: Mapping[str, Any], now: datetime, limits: InputLimits) -> MemoryRecord:
    """The next version of a record with some fields changed (validated)."""
    unknown = set(changes) - EDITABLE
    if unknown:
        raise InvalidValueError(f"cannot update {', '.join(sorted(unknown))}; editable: {', '.join(sorted(EDITABLE))}")
    checked: dict[str, Any] = {}
    for name, value in changes.items():
        checked[name] = _check_field(name, value, limits)
    return replace(record, **checked, version=record.version + 1, updated_at=now)


def _check_field(name: str, value: Any, limits: InputLimits) -> Any:
    if name == "content":
        return check_content(value, limits.content_chars)
    if name == "kind":
        return parse_enum(Kind, value, "kind")
    if name in ("importance", "confidence"):
        return check_unit_interval(value, name)
    if name == "sensitivity":
        return parse_enum(Sensitivity, value, "sensitivity")
    if name == "tags":
        return as_tags(value)
    if name == "metadata":
        return check_metadata(value)
    if name == "category":
        return check_category(value)
    if name in ("valid_to", "expires_at"):
        return None if value is None else utc(value)
    if name == "read_only":
        return bool(value)
    if name == "pinned":
        return check_pinned(value)
    if name == "subject":
        return check_subject(value)
    if name == "slot":
        return check_slot(value)
    return value


def retire(record: MemoryRecord, status: Status, now: datetime, **fields: Any) -> MemoryRecord:
    """The next version of a record that leaves the active set (forgotten, superseded, expired)."""
    return replace(record, status=status, version=record.version + 1, updated_at=now, **fields)
