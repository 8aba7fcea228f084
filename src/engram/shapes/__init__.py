"""The public JSON shapes of engram's value objects, defined once.

The CLI's ``--json``, the HTTP API, the MCP server, the web inspector and the
memory tools all print these shapes, so a record (or a hit, a job, an audit
event …) looks the same wherever a user meets it. A record here is exactly a
record line of the JSONL export; timestamps are ISO 8601 with an offset.

Surfaces import this module instead of reaching into the store's codec. Every
function takes a value object and returns plain JSON data (dicts, lists,
strings, numbers, None), never the object itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..model import AuditEvent, Job, Kind, MemoryRecord, Page, SearchHit, Signals, Stats, Version
from ..store.codec import record_to_data, version_to_data

if TYPE_CHECKING:
    from ..search.context import ContextBlock

JSON = dict[str, Any]
# What a tenant may see of Stats.extra over the network: the database's path, size and
# schema are the server's business (and its size would hint at other tenants' data).
TENANT_STATS = frozenset({"jobs", "llm_tokens", "episodes"})
BLOCK_TITLES = {"en": "Memories", "zh": "记忆"}
EMPTY_BLOCK = "(no memories yet)"


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


# -- records, versions, hits -------------------------------------------------------------


def record_data(record: MemoryRecord) -> JSON:
    """Every field of a record (the JSONL export's record line): the store's record codec,
    so a record reads the same in the database's version snapshots, the export, the CLI,
    HTTP and MCP."""
    return record_to_data(record)


BRIEF_FIELDS = ("id", "kind", "content", "importance", "tags", "category", "status", "version", "updated_at")


def record_brief(record: MemoryRecord) -> JSON:
    """The fields a model needs (MCP tools, agent tools): a subset of ``record_data``
    under the same names."""
    data = record_data(record)
    return {name: data[name] for name in BRIEF_FIELDS}


def version_data(version: Version) -> JSON:
    return version_to_data(version)


def version_brief(version: Version) -> JSON:
    """One version for a model: who, when, why, and the text it had (null once purged)."""
    record = version.record
    return {"version": version.version, "operation": version.operation.value, "at": _iso(version.at),
            "actor": version.actor, "reason": version.reason,
            "content": record.content if record else None, "status": record.status.value if record else None}


def signals_data(signals: Signals) -> JSON:
    """Why a hit came back: each signal in [0, 1] before weighting (``vector`` the raw
    cosine and ``overlap`` the shared content terms decide context()'s relevance floor)."""
    return {f.name: getattr(signals, f.name) for f in fields(signals)}  # every field of Signals, by its name


def hit_data(hit: SearchHit) -> JSON:
    return {"score": hit.score, "signals": signals_data(hit.signals), "record": record_data(hit.record)}


def hit_brief(hit: SearchHit) -> JSON:
    return {**record_brief(hit.record), "score": round(hit.score, 4)}


def hits_data(hits: Iterable[SearchHit]) -> JSON:
    return {"hits": [hit_data(h) for h in hits]}


def page_data(page: Page) -> JSON:
    return {"items": [record_data(r) for r in page.items], "next_offset": page.next_offset}


def records_data(records: Iterable[MemoryRecord]) -> JSON:
    return {"items": [record_data(r) for r in records]}


def history_data(versions: Iterable[Version]) -> JSON:
    return {"items": [version_data(v) for v in versions]}


# -- context -----------------------------------------------------------------------------


def context_data(block: ContextBlock) -> JSON:
    return {"text": block.text, "tokens": block.tokens, "dropped": block.dropped, "below_floor": block.below_floor,
            "hits": [hit_data(h) for h in block.hits], "profile": list(block.profile), "recall_id": block.recall_id}


def memory_block(records: Sequence[MemoryRecord], language: str = "en") -> str:
    """The memories of a scope as one block, rendered as ``Memory.context`` renders its
    block (used where there is no query, e.g. MCP's engram://memory)."""
    from ..search.context import render

    return render(records, language, BLOCK_TITLES[language]) or EMPTY_BLOCK


# -- the pipeline ------------------------------------------------------------------------


def add_event_data(event: Any) -> JSON:
    """One decision of ``Memory.add`` (ADD, UPDATE, SUPERSEDE, NOOP, SKIPPED, PENDING)."""
    kind: Kind | None = event.kind
    return {"event": event.event, "content": event.content, "kind": kind.value if kind else None,
            "reason": event.reason, "record_id": event.record_id, "version": event.version,
            "target_id": event.target_id, "source_message_ids": list(event.source_message_ids),
            "pending_id": event.pending_id}


def add_data(result: Any) -> JSON:
    """An ``AddResult``: the events, or the job id of a background add."""
    usage = {"prompt_tokens": result.usage.prompt_tokens, "completion_tokens": result.usage.completion_tokens}
    return {"job_id": result.job_id, "triggered": result.triggered, "trigger_reason": result.trigger_reason,
            "extractor": result.extractor, "error": result.error, "usage": usage,
            "events": [add_event_data(e) for e in result.events]}


def job_data(job: Job) -> JSON:
    """A background add() job, without its payload (the conversation it holds)."""
    return {"id": job.id, "tenant": job.tenant, "status": job.status.value, "attempts": job.attempts,
            "max_attempts": job.max_attempts, "next_attempt_at": _iso(job.next_attempt_at),
            "created_at": _iso(job.created_at), "updated_at": _iso(job.updated_at), "last_error": job.last_error,
            "result": None if job.result is None else dict(job.result)}


def jobs_data(jobs: Iterable[Job]) -> JSON:
    return {"items": [job_data(j) for j in jobs]}


# -- governance --------------------------------------------------------------------------


def audit_data(event: AuditEvent) -> JSON:
    return {"id": event.id, "at": _iso(event.at), "actor": event.actor, "operation": event.operation.value,
            "record_id": event.record_id, "version": event.version, "namespace": list(event.namespace),
            "source_message_id": event.source_message_id, "detail": dict(event.detail)}


def audits_data(events: Iterable[AuditEvent]) -> JSON:
    return {"items": [audit_data(e) for e in events]}


def stats_data(stats: Stats, *, server_details: bool = True) -> JSON:
    """Counts; ``server_details=False`` (the HTTP API) keeps only what is about the
    caller's tenant in ``extra`` (jobs, LLM tokens)."""
    extra: Mapping[str, Any] = stats.extra
    if not server_details:
        extra = {key: value for key, value in extra.items() if key in TENANT_STATS}
    return {"records": stats.records, "active": stats.active, "by_status": dict(stats.by_status),
            "by_kind": dict(stats.by_kind), "versions": stats.versions, "audit_events": stats.audit_events,
            "tenants": stats.tenants, "embedding_models": dict(stats.embedding_models), "extra": dict(extra)}


def import_data(result: Any) -> JSON:
    """An ``ImportResult``."""
    return {"imported": result.imported, "skipped": result.skipped, "tenant": result.tenant}


def maintenance_data(report: Any) -> JSON:
    """A ``MaintenanceReport``."""
    return {"expired": report.expired, "consolidated": report.consolidated}


def purged_data(report: Any) -> JSON:
    """A ``PurgeReport``: how many records, and what still holds purged bytes (null: nothing)."""
    return {"purged": report.records, "residue": report.residue}


def reindexed_data(count: int, tokenizer: str | None = None, terms_rebuilt: int = 0) -> JSON:
    """``count``: records re-embedded; ``terms_rebuilt``: records whose lexical terms
    were rebuilt; ``tokenizer``: what the store's terms come from after the run."""
    if tokenizer is None:
        return {"reindexed": count}
    return {"reindexed": count, "terms_rebuilt": terms_rebuilt, "tokenizer": tokenizer}


__all__ = [
    "BRIEF_FIELDS", "TENANT_STATS", "add_data", "add_event_data", "audit_data", "audits_data", "context_data",
    "history_data", "hit_brief", "hit_data", "hits_data", "import_data", "job_data", "jobs_data",
    "maintenance_data", "memory_block", "page_data", "purged_data", "record_brief", "record_data",
    "records_data", "reindexed_data", "signals_data", "stats_data", "version_brief", "version_data",
]
