"""Response bodies of the HTTP API, described for the OpenAPI spec. The data itself is
built by ``engram.shapes`` (the same JSON as the JSONL export and ``engram … --json``);
a test checks that each model here names exactly the fields the shape has."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

from pydantic import BaseModel, Field, PlainSerializer, WithJsonSchema, create_model

from ..limits import bounded_json
from ..model import Signals

# Kept as the codec writes it (isoformat, "+00:00"), documented as a date-time.
Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
# Metadata stored before the depth limit (engram/limits.py) may nest deeper than any JSON
# serializer follows; the deep part is shown as JSON text so such a record never breaks a read.
Metadata = Annotated[dict[str, Any], PlainSerializer(bounded_json, return_type=dict[str, Any])]


class SourceOut(BaseModel):
    actor: str
    thread_id: str | None
    message_id: str | None
    reply_to: str | None = None


class RecordOut(BaseModel):
    id: str
    tenant: str
    namespace: list[str]
    kind: str
    content: str
    category: str | None
    tags: list[str]
    metadata: Metadata
    importance: float
    confidence: float
    sensitivity: str
    status: str
    version: int
    valid_from: Timestamp
    valid_to: Timestamp | None
    expires_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp
    last_accessed_at: Timestamp | None
    access_count: int
    source: SourceOut
    embedding_model: str | None
    read_only: bool
    supersedes: str | None
    superseded_by: str | None
    pinned: bool | None
    subject: str
    slot: str | None


class RecordsOut(BaseModel):
    items: list[RecordOut]


class PageOut(BaseModel):
    items: list[RecordOut]
    next_offset: int | None


class VersionOut(BaseModel):
    record_id: str
    version: int
    operation: str
    actor: str
    at: Timestamp
    reason: str | None
    record: RecordOut | None  # null once the record was purged


class HistoryOut(BaseModel):
    items: list[VersionOut]


def signals_model(signals: type[Signals] = Signals) -> type[BaseModel]:
    """The schema of a hit's signals, read off the ``Signals`` dataclass (each field's
    type, default and ``doc``): a signal added there is described here with no edit."""
    types = get_type_hints(signals)
    described: dict[str, Any] = {
        f.name: (types[f.name], Field(description=f.metadata.get("doc"))) for f in fields(signals)}
    return create_model("SignalsOut", __doc__="Why a hit came back: each signal in [0, 1] before weighting.",
                        **described)


if TYPE_CHECKING:
    class SignalsOut(BaseModel): ...
else:
    SignalsOut = signals_model()


class HitOut(BaseModel):
    score: float
    signals: SignalsOut
    record: RecordOut


class SearchOut(BaseModel):
    hits: list[HitOut]


class ContextOut(BaseModel):
    text: str
    tokens: int
    dropped: int
    below_floor: int  # hits left out by the relevance floor (Settings.relevance_floor)
    hits: list[HitOut]
    profile: list[str] = []  # ids of the hits given as the user's profile (first in hits)
    recall_id: str | None = None  # link the answer to it: POST /v1/recalls/{recall_id}/answer


class UsageOut(BaseModel):
    prompt_tokens: int
    completion_tokens: int


class AddEventOut(BaseModel):
    event: str
    content: str
    kind: str | None
    reason: str
    record_id: str | None
    version: int | None
    target_id: str | None
    source_message_ids: list[str]
    pending_id: str | None = None  # PENDING: the change awaiting approval (/v1/approvals)


class AddOut(BaseModel):
    job_id: str | None
    triggered: bool
    trigger_reason: str
    extractor: str
    error: str | None
    usage: UsageOut
    events: list[AddEventOut]


class JobOut(BaseModel):
    id: str
    tenant: str
    status: str
    attempts: int
    max_attempts: int
    next_attempt_at: Timestamp
    created_at: Timestamp
    updated_at: Timestamp
    last_error: str | None
    result: dict[str, Any] | None


class JobsOut(BaseModel):
    items: list[JobOut]


class AuditOut(BaseModel):
    id: int
    at: Timestamp
    actor: str
    operation: str
    record_id: str | None
    version: int | None
    namespace: list[str]
    source_message_id: str | None
    detail: dict[str, Any]


class AuditListOut(BaseModel):
    items: list[AuditOut]


class StatsOut(BaseModel):
    records: int
    active: int
    by_status: dict[str, int]
    by_kind: dict[str, int]
    versions: int
    audit_events: int
    tenants: int
    embedding_models: dict[str, int]
    extra: dict[str, Any]


class ImportOut(BaseModel):
    imported: int
    skipped: int
    tenant: str


class PurgedOut(BaseModel):
    purged: int
    residue: str | None = None  # what still holds purged bytes on disk and what finishes it (null: nothing)


class MeOut(BaseModel):
    tenant: str
    permissions: list[str]
    single_tenant: bool
    version: str


class NamespacesOut(BaseModel):
    items: list[list[str]]


class HealthOut(BaseModel):
    status: str
    version: str


class ErrorOut(BaseModel):
    error: str
    message: str
    details: list[dict[str, Any]] | None = None

