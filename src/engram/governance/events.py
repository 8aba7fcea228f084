"""What an add() tells the metrics, in its ``extract`` audit row: why candidates were
skipped (by class) and which existing memories it found repeated (NOOP targets) —
the raw material of "skipped by reason" and the repeat rate (quality.py)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

SKIP_CLASSES = ("gate", "pii", "policy", "invalid", "extraction", "other")
_PII_FORBIDS = re.compile(r"PII policy forbids storing ([\w, ]+)")
# NOOPs against a memory written earlier in the same add() (or the same conversation) are
# not repeats of something engram already knew
_SAME_CONVERSATION = "repeated within this conversation"


def skip_class(reason: str) -> str:
    """The class of a SKIPPED event's reason, from the messages the pipeline writes."""
    if reason.startswith(("confidence ", "importance ")):
        return "gate"
    if _PII_FORBIDS.search(reason):
        return "pii"
    if reason.startswith("refused:"):
        return "policy"
    if reason.startswith("invalid item from the model"):
        return "invalid"
    if reason.startswith("extraction failed"):
        return "extraction"
    return "other"


def forbidden_kinds(reason: str) -> list[str]:
    """The PII kinds a SKIPPED reason says the policy forbade."""
    found = _PII_FORBIDS.search(reason)
    return [kind.strip() for kind in found.group(1).split(",") if kind.strip()] if found else []


def extract_detail(events: Iterable[Any]) -> dict[str, Any]:
    """``skipped`` (class → count), ``forbidden`` (PII kind → count) and ``known`` (ids
    of existing memories the turn repeated) for an add()'s audit row."""
    skipped: Counter[str] = Counter()
    forbidden: Counter[str] = Counter()
    known: list[str] = []
    for event in events:
        if event.event == "SKIPPED":
            skipped[skip_class(event.reason)] += 1
            forbidden.update(forbidden_kinds(event.reason))
        elif event.event == "NOOP" and event.record_id and event.reason != _SAME_CONVERSATION:
            known.append(event.record_id)
    return {"skipped": dict(skipped), "forbidden": dict(forbidden), "known": list(dict.fromkeys(known))}
