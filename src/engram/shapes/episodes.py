"""The public JSON shapes of threads, turns, past-conversation excerpts and
consolidation reports (CLI --json, HTTP, MCP and the tools print these)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ..consolidation.run import ConsolidationReport, ScopeReport
from ..episodes.search import ThreadExcerpt
from ..values.episodes import Thread, Turn

JSON = dict[str, Any]


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def thread_data(thread: Thread) -> JSON:
    return {"id": thread.id, "tenant": thread.tenant, "namespace": list(thread.namespace),
            "started_at": _iso(thread.started_at), "last_at": _iso(thread.last_at), "turns": thread.turns,
            "metadata": dict(thread.metadata), "episode_id": thread.episode_id,
            "summarized_at": _iso(thread.summarized_at)}


def threads_data(threads: Iterable[Thread]) -> JSON:
    return {"items": [thread_data(t) for t in threads]}


def turn_data(turn: Turn) -> JSON:
    return {"seq": turn.seq, "thread_id": turn.thread_id, "role": turn.role, "name": turn.name,
            "content": turn.content, "message_id": turn.message_id, "at": _iso(turn.at)}


def turns_data(turns: Iterable[Turn]) -> JSON:
    return {"items": [turn_data(t) for t in turns]}


def excerpt_data(excerpt: ThreadExcerpt) -> JSON:
    return {"thread_id": excerpt.thread_id, "namespace": list(excerpt.namespace), "score": excerpt.score,
            "at": _iso(excerpt.at),
            "turns": [{"seq": t.seq, "role": t.role, "name": t.name, "content": t.content, "at": _iso(t.at),
                       "message_id": t.message_id, "matched": t.matched} for t in excerpt.turns]}


def excerpts_data(excerpts: Iterable[ThreadExcerpt]) -> JSON:
    return {"items": [excerpt_data(e) for e in excerpts]}


def scope_report_data(report: ScopeReport) -> JSON:
    return {"tenant": report.tenant, "namespace": list(report.namespace), "status": report.status,
            "turns": report.turns, "after_seq": report.after_seq, "upto_seq": report.upto_seq,
            "episodes": report.episodes, "error": report.error,
            "usage": {"prompt_tokens": report.usage.prompt_tokens,
                      "completion_tokens": report.usage.completion_tokens},
            "diff": [{"operation": d.operation, "content": d.content, "record_id": d.record_id,
                      "target_id": d.target_id, "reason": d.reason} for d in report.diff]}


def consolidation_data(report: ConsolidationReport) -> JSON:
    return {"started_at": _iso(report.started_at), "finished_at": _iso(report.finished_at),
            "dry_run": report.dry_run, "turns": report.turns,
            "scopes": [scope_report_data(s) for s in report.scopes]}
