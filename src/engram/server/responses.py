"""Response bodies of the HTTP API: the JSON of ``store.codec`` (the same shape as
the JSONL export and ``engram ... --json``), described for the OpenAPI spec."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, WithJsonSchema

from ..model import AuditEvent, Job, SearchHit, Stats
from ..pipeline.run import AddResult
from ..search.context import ContextBlock
from ..store.codec import record_to_data

# Kept as the codec writes it (isoformat, "+00:00"), documented as a date-time.
Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]


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
    metadata: dict[str, Any]
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


class SignalsOut(BaseModel):
    lexical: float
    vector: float
    relevance: float
    recency: float
    importance: float
    validity: float


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
    hits: list[HitOut]
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
    embedding_models: dict[str, int]
    extra: dict[str, Any]


class ImportOut(BaseModel):
    imported: int
    skipped: int


class PurgedOut(BaseModel):
    purged: int


class HealthOut(BaseModel):
    status: str
    version: str


class ErrorOut(BaseModel):
    error: str
    message: str
    details: list[dict[str, Any]] | None = None


TENANT_STATS = frozenset({"jobs", "llm_tokens"})


# -- value objects → JSON data -------------------------------------------------------------


def hit_data(hit: SearchHit) -> dict[str, Any]:
    s = hit.signals
    signals = {"lexical": s.lexical, "vector": s.vector, "relevance": s.relevance, "recency": s.recency,
               "importance": s.importance, "validity": s.validity}
    return {"score": hit.score, "signals": signals, "record": record_to_data(hit.record)}


def context_data(block: ContextBlock) -> dict[str, Any]:
    return {"text": block.text, "tokens": block.tokens, "dropped": block.dropped,
            "hits": [hit_data(h) for h in block.hits], "recall_id": block.recall_id}


def add_data(result: AddResult) -> dict[str, Any]:
    events = [
        {"event": e.event, "content": e.content, "kind": e.kind.value if e.kind else None, "reason": e.reason,
         "record_id": e.record_id, "version": e.version, "target_id": e.target_id,
         "source_message_ids": list(e.source_message_ids), "pending_id": e.pending_id}
        for e in result.events
    ]
    usage = {"prompt_tokens": result.usage.prompt_tokens, "completion_tokens": result.usage.completion_tokens}
    return {"job_id": result.job_id, "triggered": result.triggered, "trigger_reason": result.trigger_reason,
            "extractor": result.extractor, "error": result.error, "usage": usage, "events": events}


def job_data(job: Job) -> dict[str, Any]:
    return {"id": job.id, "status": job.status.value, "attempts": job.attempts, "max_attempts": job.max_attempts,
            "next_attempt_at": job.next_attempt_at.isoformat(), "created_at": job.created_at.isoformat(),
            "updated_at": job.updated_at.isoformat(), "last_error": job.last_error,
            "result": None if job.result is None else dict(job.result)}


def audit_data(event: AuditEvent) -> dict[str, Any]:
    return {"id": event.id, "at": event.at.isoformat(), "actor": event.actor, "operation": event.operation.value,
            "record_id": event.record_id, "version": event.version, "namespace": list(event.namespace),
            "source_message_id": event.source_message_id, "detail": dict(event.detail)}


def stats_data(stats: Stats) -> dict[str, Any]:
    # Only what is about the caller's tenant: the path, size and schema of the database
    # are the server's business (and the size would hint at other tenants' data).
    extra = {key: value for key, value in stats.extra.items() if key in TENANT_STATS}
    return {"records": stats.records, "active": stats.active, "by_status": dict(stats.by_status),
            "by_kind": dict(stats.by_kind), "versions": stats.versions, "audit_events": stats.audit_events,
            "embedding_models": dict(stats.embedding_models), "extra": extra}
