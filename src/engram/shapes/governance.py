"""The public JSON shapes of governance, shared by the CLI (``--json``), the HTTP API,
MCP and the inspector: plain dicts of JSON types, times as ISO-8601 strings, records,
versions and audit events as everywhere else (``engram.shapes``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..governance.keys import KeyStatus, Revealed, Rotation
from ..governance.quality import Accuracy, QualityReport, SampleForReview
from ..governance.recalls import Provenance, RecallTrace
from ..values.governance import PendingChange, RecallEvent, WriteSample
from . import audit_data, record_data, version_data


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def pending_data(p: PendingChange) -> dict[str, Any]:
    return {
        "id": p.id, "tenant": p.tenant, "namespace": list(p.namespace), "status": p.status.value,
        "content": p.record.content,  # what the (first) proposed record would say, for lists
        "created_at": _iso(p.created_at), "expires_at": _iso(p.expires_at), "actor": p.actor, "reason": p.reason,
        "rule": p.rule, "detail": dict(p.detail), "decided_by": p.decided_by, "decided_at": _iso(p.decided_at),
        "decision_reason": p.decision_reason,
        "changes": [{"operation": c.operation.value, "base_version": c.base_version, "reason": c.reason,
                     "record": record_data(c.record)} for c in p.changes],
    }


def recall_data(r: RecallEvent) -> dict[str, Any]:
    return {
        "id": r.id, "tenant": r.tenant, "at": _iso(r.at), "actor": r.actor, "thread_id": r.thread_id,
        "latency_ms": r.latency_ms, "answer_id": r.answer_id, "answered_at": _iso(r.answered_at),
        "memories": [{"id": m.record_id, "version": m.version, "score": round(m.score, 4)} for m in r.memories],
        "used": None if r.used is None else list(r.used),
    }


def trace_data(t: RecallTrace) -> dict[str, Any]:
    return {"recall": recall_data(t.recall), "memories": [
        {"id": m.record_id, "version": m.version, "score": round(m.score, 4), "used": m.used,
         "record": None if m.record is None else record_data(m.record)} for m in t.memories]}


def provenance_data(p: Provenance) -> dict[str, Any]:
    return {
        "record": record_data(p.record), "thread_id": p.thread_id, "message_ids": list(p.message_ids),
        "extractor": p.extractor, "versions": [version_data(v) for v in p.versions],
        "events": [audit_data(e) for e in p.events], "proposals": [pending_data(x) for x in p.proposals],
        "answers": [recall_data(r) for r in p.answers],
    }


def sample_data(s: WriteSample | SampleForReview) -> dict[str, Any]:
    sample = s.sample if isinstance(s, SampleForReview) else s
    data = {
        "id": sample.id, "tenant": sample.tenant, "record_id": sample.record_id, "version": sample.version,
        "namespace": list(sample.namespace), "actor": sample.actor, "written_at": _iso(sample.written_at),
        "sampled_at": _iso(sample.sampled_at), "verdict": sample.verdict.value if sample.verdict else None,
        "reviewer": sample.reviewer, "reviewed_at": _iso(sample.reviewed_at), "note": sample.note,
    }
    if isinstance(s, SampleForReview):
        data["written"] = None if s.written is None else record_data(s.written)
        data["content"] = None if s.written is None else s.written.content  # for lists
    return data


def accuracy_data(a: Accuracy) -> dict[str, Any]:
    return {"reviewed": a.reviewed, "correct": a.correct, "wrong": a.wrong, "should_not_store": a.should_not_store,
            "awaiting_review": a.awaiting_review, "rate": a.rate, "ci95": [a.low, a.high] if a.rate is not None
            else None}


def report_data(r: QualityReport) -> dict[str, Any]:
    latency = r.latency
    return {
        "tenant": r.tenant, "since": _iso(r.since), "until": _iso(r.until),
        "write_accuracy": accuracy_data(r.accuracy),
        "recall": {"recalls": r.recalls, "answered": r.answered, "recalled_for_answers": r.recalled_for_answers,
                   "used": r.used, "hit_rate": r.hit_rate,
                   "latency_ms": {"count": latency.count, "p50": latency.p50_ms, "p95": latency.p95_ms,
                                  "p99": latency.p99_ms, "max": latency.max_ms}},
        "repeats": {"turns": r.turns, "repeats": r.repeats, "repeat_rate": r.repeat_rate},
        "writes": {"add_events": dict(r.add_events), "skipped": dict(r.skipped), "changes": dict(r.changes)},
        "approvals": {"pending": r.pending, "decisions": dict(r.decisions)},
        "pii_actions": {kind: dict(actions) for kind, actions in r.pii_actions.items()},
    }


def key_status_data(k: KeyStatus) -> dict[str, Any]:
    return {"tenant": k.tenant, "keys": list(k.keys), "records": k.records, "values": dict(k.values),
            "unreadable": k.unreadable}


def rotation_data(r: Rotation) -> dict[str, Any]:
    return {"tenant": r.tenant, "key": r.key, "records": r.records, "values": r.values, "unreadable": r.unreadable}


def revealed_data(r: Revealed) -> dict[str, Any]:
    return {"id": r.record.id, "version": r.record.version, "content": r.content, "reply_to": r.reply_to,
            "metadata": dict(r.metadata), "revealed": list(r.revealed), "masked": list(r.masked)}
