"""Which answer used which memory.

Every ``context()`` (and ``recall()``) writes a recall row: the memories that went
into the prompt, with their versions and scores, and how long retrieval took. Once
the answer exists, ``link_answer`` records its id on the recall and which recalled
memories the answer actually used — the model's citations when it gives them, else
overlap between the answer and each memory: lexical (the share of the memory's terms
the answer repeats) or semantic (cosine of their embeddings). That is the recall
hit rate of quality.py. ``provenance`` and ``trace`` read it back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..core import WriteCore
from ..errors import InvalidValueError, NotFoundError
from ..model import AuditEvent, MemoryRecord, Operation, Scope, SearchHit, Version
from ..reads import ReadContext
from ..store.base import AuditQuery
from ..text.tokenize import query_terms
from ..values.governance import AnswerLink, GovernanceWrites, PendingChange, PendingQuery, RecallEvent, RecallQuery

USED_COVERAGE = 0.5  # share of a memory's terms the answer repeats
USED_SIMILARITY = 0.8  # cosine between the answer and the memory
MAX_ANSWER_CHARS = 20_000

_RECENT_CHUNK = 200  # recalls read at a time while looking for those of a scope
RECENT_SCAN = 5_000  # how far back (in recalls of the tenant) recent() looks for a scope's


@dataclass(frozen=True, slots=True)
class Recall:
    """Search hits used for an answer, with the recall id that links the answer later."""

    id: str | None  # None when recalls are not recorded (Settings.record_recalls=False)
    hits: tuple[SearchHit, ...]


@dataclass(frozen=True, slots=True)
class TracedMemory:
    record_id: str
    version: int
    score: float
    used: bool | None  # None until the answer is linked
    record: MemoryRecord | None  # as stored now; None once purged


@dataclass(frozen=True, slots=True)
class RecallTrace:
    """One recall behind an answer: what was in the prompt, and what the answer used."""

    recall: RecallEvent
    memories: tuple[TracedMemory, ...]


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a memory came from and what happened to it since."""

    record: MemoryRecord
    versions: tuple[Version, ...]
    events: tuple[AuditEvent, ...]  # its audit trail: writes, proposals, decisions, reveals (recalls: answers)
    proposals: tuple[PendingChange, ...]  # approval requests about it
    answers: tuple[RecallEvent, ...]  # recalls that served it (with their answer ids when linked)

    @property
    def thread_id(self) -> str | None:
        return self.record.source.thread_id

    @property
    def message_ids(self) -> tuple[str, ...]:
        ids = self.record.metadata.get("source_message_ids")
        if isinstance(ids, list) and ids:
            return tuple(str(i) for i in ids)
        return (self.record.source.message_id,) if self.record.source.message_id else ()

    @property
    def extractor(self) -> str | None:
        extractor = self.record.metadata.get("extractor")
        if isinstance(extractor, str):
            return extractor
        return next((str(e.detail["extractor"]) for e in self.events if e.detail.get("extractor")), None)


# -- linking an answer -----------------------------------------------------------------------


def link_answer(
    core: WriteCore, tenant: str, recall_id: str, *, answer_id: str, answer: str | None = None,
    used: Sequence[str] | None = None,
) -> RecallEvent:
    """Record that ``answer_id`` was produced from recall ``recall_id``, and which of
    its memories it used (``used``: the model's citations; else judged from ``answer``)."""
    for value, what in ((recall_id, "recall id"), (answer_id, "answer id")):
        if not isinstance(value, str) or not value.strip():
            raise InvalidValueError(f"{what} must be a non-empty string, got {value!r}")
    if answer is not None and (not isinstance(answer, str) or len(answer) > MAX_ANSWER_CHARS):
        raise InvalidValueError(f"answer must be a string of at most {MAX_ANSWER_CHARS} characters")
    recall = one_recall(core.reads, tenant, recall_id)
    recalled = [m.record_id for m in recall.memories]
    if used is not None:
        if isinstance(used, str) or not all(isinstance(i, str) for i in used):
            raise InvalidValueError("used must be a list of memory ids")
        chosen = [i for i in recalled if i in set(used)]
    elif answer is not None:
        chosen = used_by(core.reads, tenant, answer, recalled)
    else:
        chosen = []
    link = AnswerLink(recall.id, answer_id, core.clock.now(), tuple(chosen))
    core.commit([], tenant=tenant, governance=GovernanceWrites(answers=(link,)))
    return RecallEvent(recall.id, tenant, recall.at, recall.actor, recall.memories, recall.latency_ms,
                       recall.thread_id, answer_id, link.at, link.used)


def one_recall(reads: ReadContext, tenant: str, recall_id: str) -> RecallEvent:
    found = reads.store.recalls(tenant, RecallQuery(ids=(recall_id,), limit=1))
    if not found:
        raise NotFoundError(f"no recall {recall_id!r} in tenant {tenant!r}")
    return found[0]


def used_by(reads: ReadContext, tenant: str, answer: str, record_ids: Sequence[str]) -> list[str]:
    """The recalled memories an answer repeats, lexically or in meaning."""
    if not record_ids or not answer.strip():
        return []
    records = {r.id: r for r in reads.store.get(tenant, list(record_ids))}
    said = set(query_terms(answer))
    used = {i for i, r in records.items() if coverage(said, r.content) >= USED_COVERAGE}
    rest = [i for i in records if i not in used]
    if rest:
        vectors = reads.stored_vectors(tenant, rest)
        if vectors:
            answer_vector = reads.embedder.embed([answer])[0]
            used |= {i for i, v in vectors.items() if cosine(answer_vector, v) >= USED_SIMILARITY}
    return [i for i in record_ids if i in used]


def coverage(answer_terms: set[str], memory: str) -> float:
    terms = set(query_terms(memory))
    return len(terms & answer_terms) / len(terms) if terms else 0.0


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm else 0.0


# -- reading it back -------------------------------------------------------------------------


def trace(reads: ReadContext, tenant: str, ident: str) -> list[RecallTrace]:
    """The recalls behind an answer id, or the one recall of a recall id."""
    if not isinstance(ident, str) or not ident.strip():
        raise InvalidValueError("give an answer id or a recall id")
    recalls = reads.store.recalls(tenant, RecallQuery(answer_id=ident, limit=100)) or reads.store.recalls(
        tenant, RecallQuery(ids=(ident,), limit=1))
    if not recalls:
        raise NotFoundError(f"no answer or recall {ident!r} in tenant {tenant!r}")
    ids = list(dict.fromkeys(m.record_id for r in recalls for m in r.memories))
    records = {r.id: r for r in reads.store.get(tenant, ids)}
    return [RecallTrace(r, tuple(
        TracedMemory(m.record_id, m.version, m.score, None if r.used is None else m.record_id in r.used,
                     records.get(m.record_id)) for m in r.memories)) for r in recalls]


def recent(reads: ReadContext, scope: Scope, limit: int) -> list[RecallTrace]:
    """The latest ``limit`` recalls with a memory in ``scope`` (or below), newest first,
    each with the memories of the scope it served (read in chunks of recalls, newest first,
    among the tenant's latest ``RECENT_SCAN``: a quiet scope of a busy tenant shows fewer)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidValueError(f"limit must be a positive integer, got {limit!r}")
    found: list[RecallTrace] = []
    seen: set[str] = set()
    until: datetime | None = None
    while len(found) < limit and len(seen) < RECENT_SCAN:
        read = reads.store.recalls(scope.tenant, RecallQuery(limit=_RECENT_CHUNK, newest_first=True, until=until))
        chunk = [r for r in read if r.id not in seen]
        seen.update(r.id for r in chunk)
        ids = list(dict.fromkeys(m.record_id for r in chunk for m in r.memories))
        records = {r.id: r for r in reads.store.get(scope.tenant, ids)}
        for r in chunk:
            inside = tuple(TracedMemory(m.record_id, m.version, m.score,
                                        None if r.used is None else m.record_id in r.used, records[m.record_id])
                           for m in r.memories
                           if m.record_id in records and scope.contains(records[m.record_id].scope))
            if inside and len(found) < limit:
                found.append(RecallTrace(r, inside))
        if len(read) < _RECENT_CHUNK or not chunk:
            break
        until = chunk[-1].at  # inclusive: recalls of the same instant are read again, and skipped
    return found


def provenance(reads: ReadContext, record: MemoryRecord, *, recent: int = 20) -> Provenance:
    tenant = record.scope.tenant
    events = reads.store.audit(tenant, AuditQuery(record_id=record.id, limit=10_000))
    recall_ids = [str(e.detail["recall_id"]) for e in events
                  if e.operation is Operation.RECALL and e.detail.get("recall_id")][-recent:]
    answers = reads.store.recalls(tenant, RecallQuery(ids=tuple(recall_ids), limit=recent)) if recall_ids else []
    proposals = reads.store.pending_changes(tenant, PendingQuery(record_id=record.id, limit=100))
    return Provenance(record, tuple(reads.store.versions(tenant, record.id)),
                      tuple(e for e in events if e.operation is not Operation.RECALL), tuple(proposals),
                      tuple(answers))
