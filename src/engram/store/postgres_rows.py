"""Row-level pieces of the PostgreSQL backend: column lists, value conversion and
the lexical index (tsvector) built from the same terms the SQLite backend indexes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from psycopg.types.json import Jsonb

from ..model import (
    AuditEvent, Job, JobStatus, Kind, MemoryRecord, Operation, Scope, Sensitivity, Source, Status, Version,
    freeze_mapping,
)
from .base import AuditDraft, RecordWrite
from .codec import namespace_from_key, namespace_key, record_from_data, scope_token, version_to_data

# FTS5's bm25() constants, so both backends score alike.
BM25_K1 = 1.2
BM25_B = 0.75
_MAX_LEXEME_BYTES = 2000  # PostgreSQL refuses lexemes of 2 KiB and more
_MAX_POSITIONS = 255  # positions kept per lexeme; they only count occurrences here

RECORD_COLUMNS = (
    "tenant_id", "id", "namespace", "kind", "content", "category", "tags", "metadata", "importance", "confidence",
    "sensitivity", "status", "version", "valid_from", "valid_to", "expires_at", "created_at", "updated_at",
    "last_accessed_at", "access_count", "actor", "thread_id", "message_id", "embedding_model", "read_only",
    "supersedes", "superseded_by",
)
WRITE_COLUMNS = (*RECORD_COLUMNS, "embedding", "terms", "doc_len", "tsv")
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


def scope_lexemes(tenant: str, namespace: tuple[str, ...]) -> list[str]:
    """Scope tokens as lexemes. A leading underscore keeps them apart from terms,
    which never contain one."""
    tokens = [scope_token(tenant, namespace, exact=True)]
    tokens += [scope_token(tenant, namespace[:depth], exact=False) for depth in range(len(namespace) + 1)]
    return ["_" + token for token in tokens]


def term_counts(terms: str) -> Counter[str]:
    return Counter(lexeme(term) for term in terms.split())


def doc_length(terms: str, namespace: tuple[str, ...]) -> int:
    """What FTS5 counts as the document length: terms plus the scope column's tokens."""
    return len(terms.split()) + len(namespace) + 2


def tsvector_text(counts: Counter[str], scopes: Sequence[str]) -> str:
    """A tsvector literal: each term with positions 1..tf (so tf can be read back
    exactly), each scope token without positions."""
    parts = [
        f"{_quote(term)}:{','.join(str(i) for i in range(1, min(count, _MAX_POSITIONS) + 1))}"
        for term, count in counts.items()
    ]
    parts += [_quote(scope) for scope in scopes]
    return " ".join(parts)


def tsquery_text(terms: Sequence[str], scope: str) -> str:
    """The scope token AND any of the terms."""
    return f"{_quote('_' + scope)} & ({' | '.join(_quote(lexeme(t)) for t in terms)})"


def record_params(write: RecordWrite) -> tuple:
    r = write.record
    counts = term_counts(write.terms)
    tsv = tsvector_text(counts, scope_lexemes(r.scope.tenant, r.scope.namespace))
    embedding = write.embedding
    return (
        r.scope.tenant, r.id, namespace_key(r.scope.namespace), r.kind.value, r.content, r.category,
        Jsonb(list(r.tags)), Jsonb(dict(r.metadata)), r.importance, r.confidence, r.sensitivity.value,
        r.status.value, r.version, r.valid_from, r.valid_to, r.expires_at, r.created_at, r.updated_at,
        r.last_accessed_at, r.access_count, r.source.actor, r.source.thread_id, r.source.message_id,
        r.embedding_model if embedding is not None else None, r.read_only, r.supersedes, r.superseded_by,
        embedding, write.terms, doc_length(write.terms, r.scope.namespace), tsv,
    )


def version_params(tenant: str, version: Version) -> tuple:
    snapshot = None if version.record is None else Jsonb(version_to_data(version)["record"])
    return (tenant, version.record_id, version.version, version.operation.value, version.actor, version.at,
            version.reason, snapshot)


def audit_params(tenant: str, draft: AuditDraft) -> tuple:
    return (tenant, draft.at, draft.actor, draft.operation.value, draft.record_id, draft.version,
            namespace_key(draft.namespace), draft.source_message_id, Jsonb(draft.detail))


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(timezone.utc)


def record_from_row(row: Sequence[Any]) -> MemoryRecord:
    (tenant, id_, namespace, kind, content, category, tags, metadata, importance, confidence, sensitivity, status,
     version, valid_from, valid_to, expires_at, created_at, updated_at, last_accessed_at, access_count, actor,
     thread_id, message_id, embedding_model, read_only, supersedes, superseded_by) = row
    return MemoryRecord(
        id=id_,
        scope=Scope(tenant, namespace_from_key(namespace)),
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
        source=Source(actor=actor, thread_id=thread_id, message_id=message_id),
        embedding_model=embedding_model,
        read_only=read_only,
        supersedes=supersedes,
        superseded_by=superseded_by,
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
    """Document frequencies, document count and total length to add to a tenant's
    lexical statistics once a batch is written (the numbers FTS5 keeps itself)."""

    def __init__(self) -> None:
        self.df: Counter[str] = Counter()
        self.docs = 0
        self.total_len = 0

    def add(self, terms: str, length: int, sign: int) -> None:
        for term in term_counts(terms):
            self.df[term] += sign
        self.docs += sign
        self.total_len += sign * length

    def replace(self, old_terms: str, old_len: int, new_terms: str, new_len: int) -> None:
        if old_terms == new_terms and old_len == new_len:
            return
        self.add(old_terms, old_len, -1)
        self.add(new_terms, new_len, +1)

    @property
    def empty(self) -> bool:
        return not self.docs and not self.total_len and not any(self.df.values())


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
