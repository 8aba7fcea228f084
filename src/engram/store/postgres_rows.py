"""Row-level pieces of the PostgreSQL backend: column lists, value conversion and
the lexical index built from the same terms the SQLite backend indexes: a
tsvector of the distinct terms plus scope tokens (GIN, for matching) and the
term frequencies as jsonb (for BM25), so scoring reads only the query's terms."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, overload

from psycopg.types.json import Jsonb

from ..model import (
    AuditEvent,
    Job,
    JobStatus,
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
from . import bm25
from .base import AuditDraft, RecordWrite
from .codec import namespace_from_key, namespace_key, record_from_data, version_to_data

BM25_K1, BM25_B = bm25.K1, bm25.B  # FTS5's bm25() constants, so both backends score alike
_MAX_LEXEME_BYTES = 2000  # PostgreSQL refuses lexemes of 2 KiB and more

RECORD_COLUMNS = (
    "tenant_id", "id", "namespace", "kind", "content", "category", "tags", "metadata", "importance", "confidence",
    "sensitivity", "status", "version", "valid_from", "valid_to", "expires_at", "created_at", "updated_at",
    "last_accessed_at", "access_count", "actor", "thread_id", "message_id", "embedding_model", "read_only",
    "supersedes", "superseded_by", "reply_to", "pinned", "subject", "slot",
)
WRITE_COLUMNS = (*RECORD_COLUMNS, "embedding", "tf", "doc_len", "tsv")
SELECT_RECORD = ", ".join(RECORD_COLUMNS)


def lexeme(term: str) -> str:
    """A term as a lexeme: PostgreSQL caps lexemes at 2 KiB, so longer terms are cut
    (the same cut on the query side keeps them findable)."""
    raw = term.encode("utf-8")
    if len(raw) <= _MAX_LEXEME_BYTES:
        return term
    return raw[:_MAX_LEXEME_BYTES].decode("utf-8", errors="ignore")


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def term_counts(terms: str) -> Counter[str]:
    return Counter(lexeme(term) for term in terms.split())


doc_length = bm25.doc_length


def tsvector_text(terms: Iterable[str]) -> str:
    """A tsvector literal of the distinct terms, without positions: frequencies live
    in the tf column, and the scope is matched by the btree on (tenant, namespace),
    not by scope tokens as in FTS5 (which has no other index to use)."""
    return " ".join(_quote(term) for term in terms)


def tsquery_text(terms: Sequence[str]) -> str:
    """Any of the terms."""
    return " | ".join(_quote(lexeme(t)) for t in terms)


def record_params(write: RecordWrite) -> tuple:
    r = write.record
    counts = term_counts(write.terms)
    tsv = tsvector_text(counts)
    embedding = write.embedding
    return (
        r.scope.tenant, r.id, namespace_key(r.scope.namespace), r.kind.value, r.content, r.category,
        Jsonb(list(r.tags)), Jsonb(dict(r.metadata)), r.importance, r.confidence, r.sensitivity.value,
        r.status.value, r.version, r.valid_from, r.valid_to, r.expires_at, r.created_at, r.updated_at,
        r.last_accessed_at, r.access_count, r.source.actor, r.source.thread_id, r.source.message_id,
        r.embedding_model if embedding is not None else None, r.read_only, r.supersedes, r.superseded_by,
        r.source.reply_to, r.pinned, r.subject, r.slot, embedding, Jsonb(counts),
        doc_length(write.terms, r.scope.namespace), tsv,
    )


def version_params(tenant: str, version: Version) -> tuple:
    snapshot = None if version.record is None else Jsonb(version_to_data(version)["record"])
    return (tenant, version.record_id, version.version, version.operation.value, version.actor, version.at,
            version.reason, snapshot)


def audit_params(tenant: str, draft: AuditDraft) -> tuple:
    return (tenant, draft.at, draft.actor, draft.operation.value, draft.record_id, draft.version,
            namespace_key(draft.namespace), draft.source_message_id, Jsonb(draft.detail))


@overload
def _utc(moment: datetime) -> datetime: ...
@overload
def _utc(moment: None) -> None: ...
@overload
def _utc(moment: datetime | None) -> datetime | None: ...
def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(UTC)


@lru_cache(maxsize=4096)
def _scope(tenant: str, namespace: str) -> Scope:
    """Scopes repeat across rows; build (and validate) each one once."""
    return Scope(tenant, namespace_from_key(namespace))


def record_from_row(row: Sequence[Any]) -> MemoryRecord:
    (tenant, id_, namespace, kind, content, category, tags, metadata, importance, confidence, sensitivity, status,
     version, valid_from, valid_to, expires_at, created_at, updated_at, last_accessed_at, access_count, actor,
     thread_id, message_id, embedding_model, read_only, supersedes, superseded_by, reply_to, pinned, subject,
     slot) = row
    return MemoryRecord(
        id=id_,
        scope=_scope(tenant, namespace),
        kind=Kind(kind),
        content=content,
        category=category,
        tags=tuple(tags),
        metadata=freeze_mapping(metadata),
        importance=importance,
        confidence=confidence,
        sensitivity=Sensitivity(sensitivity),
        status=Status(status),
        version=version,
        valid_from=_utc(valid_from),
        valid_to=_utc(valid_to),
        expires_at=_utc(expires_at),
        created_at=_utc(created_at),
        updated_at=_utc(updated_at),
        last_accessed_at=_utc(last_accessed_at),
        access_count=access_count,
        source=Source(actor=actor, thread_id=thread_id, message_id=message_id, reply_to=reply_to),
        embedding_model=embedding_model,
        read_only=read_only,
        supersedes=supersedes,
        superseded_by=superseded_by,
        pinned=pinned,
        subject=subject,
        slot=slot,
    )


VERSION_COLUMNS = "record_id, version, operation, actor, at, reason, snapshot"


def version_from_row(row: Sequence[Any]) -> Version:
    record_id, version, operation, actor, at, reason, snapshot = row
    return Version(
        record_id=record_id,
        version=version,
        operation=Operation(operation),
        actor=actor,
        at=_utc(at),
        reason=reason,
        record=None if snapshot is None else record_from_data(snapshot),
    )


AUDIT_COLUMNS = "id, tenant_id, at, actor, operation, record_id, version, namespace, source_message_id, detail"


def audit_from_row(row: Sequence[Any]) -> AuditEvent:
    id_, tenant, at, actor, operation, record_id, version, namespace, message_id, detail = row
    return AuditEvent(
        id=int(id_),
        tenant=tenant,
        at=_utc(at),
        actor=actor,
        operation=Operation(operation),
        record_id=record_id,
        version=version,
        namespace=namespace_from_key(namespace or ""),
        source_message_id=message_id,
        detail=freeze_mapping(detail),
    )


class LexiconDelta:
    """Document frequencies, document count and total length to add to a scope's
    lexical statistics once a batch is written (the numbers FTS5 keeps itself)."""

    def __init__(self) -> None:
        self.df: Counter[str] = Counter()
        self.docs = 0
        self.total_len = 0

    def add(self, tf: Mapping[str, int], length: int, sign: int) -> None:
        for term in tf:
            self.df[term] += sign
        self.docs += sign
        self.total_len += sign * length

    def replace(self, old_tf: Mapping[str, int], old_len: int, new_tf: Mapping[str, int], new_len: int) -> None:
        if old_tf == new_tf and old_len == new_len:
            return
        self.add(old_tf, old_len, -1)
        self.add(new_tf, new_len, +1)

    @property
    def empty(self) -> bool:
        return not self.docs and not self.total_len and not any(self.df.values())


class LexiconDeltas:
    """One LexiconDelta per scope (namespace key) a batch writes."""

    def __init__(self) -> None:
        self._by_namespace: dict[str, LexiconDelta] = {}

    def of(self, namespace: str) -> LexiconDelta:
        return self._by_namespace.setdefault(namespace, LexiconDelta())

    def changed(self) -> list[tuple[str, LexiconDelta]]:
        """Non-empty deltas in namespace order (one lock order for every writer)."""
        return sorted((ns, d) for ns, d in self._by_namespace.items() if not d.empty)


JOB_COLUMNS = (
    "id, tenant_id, status, payload, attempts, max_attempts, next_attempt_at, created_at, updated_at, last_error, "
    "result"
)


def job_params(job: Job) -> tuple:
    return (job.tenant, job.id, job.status.value, Jsonb(dict(job.payload)), job.attempts, job.max_attempts,
            job.next_attempt_at, job.created_at, job.updated_at)


def job_from_row(row: Sequence[Any]) -> Job:
    id_, tenant, status, payload, attempts, max_attempts, next_at, created, updated, error, result = row
    return Job(
        id=id_,
        tenant=tenant,
        status=JobStatus(status),
        payload=freeze_mapping(payload),
        attempts=attempts,
        max_attempts=max_attempts,
        next_attempt_at=_utc(next_at),
        created_at=_utc(created),
        updated_at=_utc(updated),
        last_error=error,
        result=None if result is None else freeze_mapping(result),
    )


bm25_idf = bm25.idf
