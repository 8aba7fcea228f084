"""The embedded extractor: bilingual, rule-based, no LLM.

``RuleExtractor().extract(messages)`` reads the user's turns (assistant, system
and tool turns are never a source), splits them into sentences, hands each to
the English or Chinese rules, and returns one ``Candidate`` per statement with
a calibrated confidence:

* a pattern's base confidence says how firmly its wording states something
  durable (0.85-0.9 for "my name is", "I'm allergic to", "报销超过5000元需要总监审批";
  0.55-0.65 for undated "I need to", "我想…", one-off imperatives);
* a hedge in the sentence ("maybe", "I think", "可能", "也许") takes 0.25 off, so
  hedged statements fall below the gate's 0.7;
* an explicit intent ("remember that", "记住") adds 0.1;
* questions, hypotheticals, reported speech, small talk and one-off requests
  yield nothing at all.

Importance comes from the category (a taboo or a business rule matters more
than a passing event). Categories that name a slot ("identity:name",
"location:residence", "work:employer", "business_rule:approval", ...) are shared
by a fact and every later statement that changes it ("我搬到杭州了", "we switched
to a two-step approval"), in both languages, so that reconcile can supersede the
old memory; their importance is that of the group before the colon. Content is a self-contained statement in the speaker's
language, in the third person: "我叫张三" -> "用户名叫张三", "I prefer concise
reports" -> "Prefers concise reports" ("Ana prefers ..." when the message
carries the speaker's name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from types import MappingProxyType

from ...model import Kind, Message
from ..candidate import Candidate
from . import en as rules_en
from . import keep
from . import zh as rules_zh
from .common import Finding, content_terms, group_of, is_chinese, split_sentences
from .forgets import without_forgets

EXTRACTOR_NAME = "rules"
HEDGE_PENALTY = 0.25
EXPLICIT_BONUS = 0.1
MAX_CONFIDENCE = 0.97  # a rule never knows for certain that it read the user right

# How much each kind of statement matters to remember, by category.
IMPORTANCE: dict[str, float] = {
    "identity": 0.7,
    "taboo": 0.85,
    "like": 0.5,
    "dislike": 0.5,
    "instruction": 0.75,
    "business_rule": 0.8,
    "reminder": 0.65,
    "task": 0.6,
    "deadline": 0.65,
    "decision": 0.65,
    "work": 0.6,
    "location": 0.55,
    "family": 0.6,
    "relation": 0.6,
    "pet": 0.5,
    "education": 0.55,
    "habit": 0.4,
    "hobby": 0.45,
    "plan": 0.45,
    "tools": 0.5,
    "style": 0.6,
    "language": 0.5,
    "note": 0.6,
    "event": 0.35,
}
DEFAULT_IMPORTANCE = 0.5

_DEDUPE_NOISE = re.compile(r"[\s\W_]+")


class RuleExtractor:
    """The embedded extractor; stateless, so one instance can serve every thread.

    ``mode``: "both" (default) — the patterns' findings inside what the keeper keeps,
    and the keeper's statement where no finding says most of it; "patterns" — the
    patterns alone; "keeper" — the keeper alone (keep.py)."""

    name = EXTRACTOR_NAME

    def __init__(self, mode: str = "both") -> None:
        if mode not in MODES:
            raise ValueError(f"unknown extraction mode {mode!r}; expected one of {', '.join(MODES)}")
        self.mode = mode

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        merged: dict[tuple[Kind, str], Candidate] = {}
        for message in messages:
            if message.role != "user":
                continue
            for sentence in keep.sentences(without_forgets(message.content)):
                for hit in findings_of(sentence, message.name, self.mode):
                    candidate = replace(to_candidate(hit, message.id), said=sentence)
                    key = (candidate.kind, _dedupe_key(candidate.content))
                    merged[key] = _merge(merged[key], candidate) if key in merged else candidate
        return list(merged.values())


MODES = ("both", "patterns", "keeper")
_NARRATIVE = frozenset({"event", "activity"})  # the patterns' retellings: the keeper's statement says them better
_COVERED = 0.6  # a statement whose terms the findings inside it say this much of needs no note of its own
_INSIDE = 0.5  # a finding belongs to a statement when this share of its terms is in it


def findings_of(text: str, speaker: str | None, mode: str) -> list[Finding]:
    if mode == "patterns":
        return extract_text(text, speaker)
    kept = keep.statements(text, speaker)
    if mode == "keeper":
        return [keep.as_finding(s) for s in kept]
    hits = [h for h in extract_text(text, speaker) if group_of(h.category) not in _NARRATIVE]
    findings: dict[int, Finding] = {}  # the patterns' findings inside a kept statement, flagged by it
    for statement in kept:
        said = content_terms(statement.text) | content_terms(statement.content)
        for index, hit in enumerate(hits):
            if (index not in findings and _share(content_terms(hit.content), said) >= _INSIDE
                    and not any(old in hit.content for old in statement.ends)):  # "用户已从蚂蚁离职" says what ended
                findings[index] = keep.flagged(hit, statement)
    told = {t for hit in findings.values() for t in content_terms(hit.content)}
    notes = [keep.as_finding(s) for s in kept if _share(content_terms(keep.without_cues(s.content)), told) < _COVERED]
    return list({(h.kind, h.content): h for h in [*findings.values(), *notes]}.values())


def _share(terms: set[str], pool: set[str]) -> float:
    return len(terms & pool) / len(terms) if terms else 0.0


def extract_text(text: str, speaker: str | None = None) -> list[Finding]:
    """Calibrated findings for one message's text, in reading order."""
    return [hit for sentence in split_sentences(text) for hit in _from_sentence(sentence, speaker)]


def _from_sentence(sentence: str, speaker: str | None) -> list[Finding]:
    rules = rules_zh if is_chinese(sentence) else rules_en
    view = rules.analyse(sentence)
    if view.skip is not None:
        return []
    hits = rules.find(view.body, speaker)
    if not hits and view.explicit:
        fallback = rules.noted(view.body, speaker)
        hits = [fallback] if fallback is not None else []
    return [_calibrate(hit, hedged=view.hedged, explicit=view.explicit) for hit in resolve_overlaps(hits)]


def resolve_overlaps(hits: Iterable[Finding]) -> list[Finding]:
    """Keep the most confident reading of each stretch of text; ties go to the earlier pattern."""
    kept: list[Finding] = []
    ranked = sorted(enumerate(hits), key=lambda pair: (-pair[1].confidence, pair[0]))
    for _, hit in ranked:
        if all(hit.span[1] <= other.span[0] or other.span[1] <= hit.span[0] for other in kept):
            kept.append(hit)
    return sorted(kept, key=lambda hit: hit.span)


def _calibrate(hit: Finding, *, hedged: bool, explicit: bool) -> Finding:
    confidence = hit.confidence - (HEDGE_PENALTY if hedged else 0.0) + (EXPLICIT_BONUS if explicit else 0.0)
    return replace(hit, confidence=round(min(MAX_CONFIDENCE, max(0.05, confidence)), 2))


def to_candidate(hit: Finding, message_id: str | None) -> Candidate:
    metadata = {"rule": hit.rule, "lang": hit.rule.split(".", 1)[0], **hit.metadata}
    ends = tuple(metadata.pop("ends", ()))
    return Candidate(
        kind=hit.kind,
        content=hit.content,
        confidence=hit.confidence,
        importance=importance_of(hit.category),
        source_message_ids=(message_id,) if message_id else (),
        category=hit.category,
        metadata=MappingProxyType(metadata),
        extractor=EXTRACTOR_NAME,
        ends=ends,
    )


def importance_of(category: str) -> float:
    """By category, else by its group ("work:employer" -> "work")."""
    return IMPORTANCE.get(category, IMPORTANCE.get(group_of(category), DEFAULT_IMPORTANCE))


def _dedupe_key(content: str) -> str:
    return _DEDUPE_NOISE.sub("", content.casefold())


def _merge(first: Candidate, second: Candidate) -> Candidate:
    """The same statement said twice: one candidate, both sources, the firmer confidence."""
    sources = tuple(dict.fromkeys(first.source_message_ids + second.source_message_ids))
    best = second if second.confidence > first.confidence else first
    return replace(best, source_message_ids=sources)
