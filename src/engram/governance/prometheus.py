"""The Prometheus text exposition format (version 0.0.4) of quality reports, for
``GET /metrics``. Counts cover the report's window (``?hours=``, default 24) and are
exposed as gauges; pending approvals are the count now."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .quality import QualityReport

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: str) -> str:
    return "{" + ",".join(f'{name}="{_escape(str(value))}"' for name, value in labels.items()) + "}"


def _number(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


class _Family:
    def __init__(self, name: str, kind: str, help_text: str) -> None:
        self.lines = [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        self.name = name

    def add(self, value: float | None, suffix: str = "", **labels: str) -> None:
        if value is not None:
            self.lines.append(f"{self.name}{suffix}{_labels(**labels)} {_number(value)}")


def exposition(reports: Sequence[QualityReport]) -> str:
    families = [family for family in _families(reports) if len(family.lines) > 2]
    return "".join(line + "\n" for family in families for line in family.lines)


def _families(reports: Sequence[QualityReport]) -> Iterable[_Family]:
    window = _Family("engram_metrics_window_seconds", "gauge", "Length of the window the counts cover.")
    events = _Family("engram_add_events", "gauge", "add() outcomes in the window, by event.")
    skipped = _Family("engram_skipped_candidates", "gauge", "Candidates add() skipped in the window, by reason.")
    changes = _Family("engram_changes", "gauge", "Audited changes in the window, by operation.")
    pending = _Family("engram_pending_approvals", "gauge", "Changes awaiting a reviewer now.")
    decisions = _Family("engram_approval_decisions", "gauge", "Pending changes decided in the window, by outcome.")
    latency = _Family("engram_recall_latency_seconds", "summary", "Retrieval time of recalls in the window.")
    hit = _Family("engram_recall_hit_rate", "gauge", "Share of recalled memories the linked answers used.")
    repeat = _Family("engram_repeat_rate", "gauge", "Share of turns repeating a known memory recall had missed.")
    accuracy = _Family("engram_write_accuracy", "gauge", "Share of reviewed sampled writes judged correct.")
    bounds = _Family("engram_write_accuracy_ci95", "gauge", "95% Wilson interval of the write accuracy.")
    reviewed = _Family("engram_write_samples", "gauge", "Sampled writes in the window, by review state.")
    pii = _Family("engram_pii_actions", "gauge", "Personal data handled by the PII policy in the window.")
    for r in reports:
        t = r.tenant
        window.add((r.until - r.since).total_seconds(), tenant=t)
        for name, count in r.add_events.items():
            events.add(count, tenant=t, event=name)
        for name, count in r.skipped.items():
            skipped.add(count, tenant=t, reason=name)
        for name, count in r.changes.items():
            changes.add(count, tenant=t, operation=name)
        pending.add(r.pending, tenant=t)
        for name, count in r.decisions.items():
            decisions.add(count, tenant=t, outcome=name)
        for q, value in ((0.5, r.latency.p50_ms), (0.95, r.latency.p95_ms), (0.99, r.latency.p99_ms)):
            latency.add(None if value is None else value / 1000, tenant=t, quantile=str(q))
        latency.add(r.latency.total_ms / 1000, "_sum", tenant=t)
        latency.add(r.latency.count, "_count", tenant=t)
        hit.add(r.hit_rate, tenant=t)
        repeat.add(r.repeat_rate, tenant=t)
        accuracy.add(r.accuracy.rate, tenant=t)
        bounds.add(r.accuracy.low, tenant=t, bound="low")
        bounds.add(r.accuracy.high, tenant=t, bound="high")
        reviewed.add(r.accuracy.reviewed, tenant=t, state="reviewed")
        reviewed.add(r.accuracy.awaiting_review, tenant=t, state="awaiting")
        for kind, actions in r.pii_actions.items():
            for action, count in actions.items():
                pii.add(count, tenant=t, kind=kind, action=action)
    return (window, events, skipped, changes, pending, decisions, latency, hit, repeat, accuracy, bounds, reviewed,
            pii)
