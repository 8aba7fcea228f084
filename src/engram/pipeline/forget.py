"""Which memories a spoken forget means, and which of them it may retire.

- a topic named ("scratch my address from your memory", "关于我前任的事"): the active
  memories of the whole scope about it — by meaning (the topic's embedding against the
  memories'), by its words, by the topic both belong to (pipeline/topics.py), and by slot
  once memories carry one (``SlotMatch``: one function to plug in);
- a reminder ("you can bin that reminder", "提醒可以取消了"): the newest active to-do;
- "that", "这个", "当我没说": what the user said just before, in the same thread only —
  the earlier sentences of the same message, else the user's previous message of the same
  add(), else the thread's previous user turn (recent). Nothing said just before, no
  thread to look back in, or nothing memorable in what was said: nothing is retired.

A memory the application wrote (``remember()``, the API, an import: not extracted from
the conversation) or one that is pinned is never retired by conversation: the forget
reports it held, and why (``held_because``). The pipeline turns the rest into FORGET
changes for the write core (audited, the user's words as the reason; ``restore`` undoes
them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from ..model import Kind, MemoryRecord, Message, Scope, Status
from ..reads import ReadContext
from ..slots import USER
from ..store.base import RecordFilter, Store
from ..values.episodes import Turn, TurnQuery
from .candidate import Candidate
from .forget_slots import holds_slot, slots_named
from .reconcile import word_overlap
from .rules.forgets import ForgetRequest, forget_requests
from .topics import topics

_CJK = re.compile(r"[\u4e00-\u9fff]")
TOPIC_WORDS = 0.5  # a memory that holds this share of the named topic's words is meant
TOPIC_MEANING = 0.45  # or this close in meaning
SAME_TOPIC_MEANING = 0.25  # or of the same topic and this close
RECENT = timedelta(hours=12)  # "that" points back at most this far
_LOOK_AT = 20
_TOPIC_SCAN = 200  # the newest active memories checked for the named topic, beyond the nearest
EXTRACTED = "extractor"  # metadata key the pipeline sets on every memory it extracts from a conversation

# A memory's slot against the request: True when the record holds a slot the request names, False
# when it holds another, None when the request names no slot. Records carry ``subject``/``slot`` (the
# learned judge's reading); ``record_slot_match`` uses them when a slot is set, else the memory's words.
SlotMatch = Callable[[ForgetRequest, MemoryRecord], "bool | None"]
_OTHER_PERSON = re.compile(
    r"\b(?:sister|brother|mom|mum|mother|dad|father|wife|husband|partner|boyfriend|girlfriend|son|daughter|colleague"
    r"|coworker|co-worker|friend|boss|manager|neighbou?r|cousin|aunt|uncle|grandma|grandpa|grandmother|grandfather"
    r"|roommate|flatmate|in-laws?)s?\b|妹妹|姐姐|哥哥|弟弟|妈妈|爸爸|母亲|父亲|老婆|老公|儿子|女儿|同事|朋友|老板|领导|邻居"
    r"|表哥|表姐|表妹|表弟|奶奶|爷爷|外婆|外公|室友|婆婆|公公",
    re.IGNORECASE,
)
_ABOUT_PEOPLE = frozenset({"children", "relationship", "manager"})  # slots that are about another person by nature


def record_slot_match(request: ForgetRequest, record: MemoryRecord) -> bool | None:
    """The default matcher: the slots the request names ("my address" → residence) against the
    record's ``slot`` when records carry one, else against its words; another person's fact
    ("my sister lives in Porto") is not the user's address unless the request names them."""
    named = slots_named(request.about or "")
    if not named:
        return None
    holds = record.slot in named if record.slot else any(holds_slot(record.content, s) for s in named)
    return holds and (bool(named & _ABOUT_PEOPLE) or _same_subject(request.about or "", record))


def _same_subject(about: str, record: MemoryRecord) -> bool:
    if record.slot:  # a judged record: its subject was read with its slot ("user" is only the default)
        subject = record.subject
        return subject == USER or any(word in about.casefold() for word in subject.split(":", 1)[-1].split())
    others = _OTHER_PERSON.findall(record.content)
    return not others or any(other.casefold() in about.casefold() for other in others)


@dataclass(frozen=True, slots=True)
class ForgetContext:
    """Where a forget was said: the scope, the thread (None when the caller gave none), this
    add()'s turns and the position of the message that asked."""

    scope: Scope
    thread_id: str | None
    said: Sequence[Message]
    position: int
    now: datetime
    stored_thread_id: str | None = None  # the thread id as the turns were kept (masked where the policy masks)


def spoken_forgets(messages: Sequence[Message]) -> list[tuple[int, ForgetRequest]]:
    """(index of the user message, request) for every spoken forget, in order, whatever the
    extractor (the rule extractor and the LLM both leave them out of the memories)."""
    return [(i, r) for i, m in enumerate(messages) if m.role == "user" for r in forget_requests(m.content)]


def held_because(record: MemoryRecord) -> str | None:
    """Why a spoken forget may not retire this memory, or None when it may."""
    if record.read_only:
        return "held: read-only, a spoken forget does not remove it"
    if record.pinned:
        return "held: pinned, a spoken forget does not remove a pinned memory (forget it by id)"
    if EXTRACTED not in record.metadata:
        return "held: written by the application, not said in conversation (forget it by id)"
    return None


def points_back(request: ForgetRequest) -> bool:
    return request.about is None and not request.reminder


# --- a topic named -------------------------------------------------------------------


def forget_targets(reads: ReadContext, context: ForgetContext, request: ForgetRequest,
                   slot_match: SlotMatch = record_slot_match) -> list[MemoryRecord]:
    """What a forget that names a topic or a reminder means, over the whole scope (a forget
    that points back is resolved by ``just_said``)."""
    store, scope, now = reads.store, context.scope, context.now
    where = RecordFilter(namespace=scope.namespace, statuses=(Status.ACTIVE,), valid_at=now)
    if request.about:
        return _about(reads, scope, where, request, slot_match)
    if request.reminder:
        return store.query(scope.tenant, RecordFilter(namespace=scope.namespace, statuses=(Status.ACTIVE,),
                                                      kinds=(Kind.TODO,), valid_at=now),
                           order="created_at", descending=True, limit=1)
    return []


def _about(reads: ReadContext, scope: Scope, where: RecordFilter, request: ForgetRequest,
           slot_match: SlotMatch) -> list[MemoryRecord]:
    store, embedder, tokenizer = reads.store, reads.embedder, reads.tokenizer
    about = request.about or ""
    vector = np.asarray(embedder.embed([about], role="query")[0], dtype=np.float32)
    near = {s.id: s.score for s in store.nearest(scope.tenant, where, embedder.name, vector, _LOOK_AT)}
    for scored in store.lexical(scope.tenant, where, tokenizer.query_terms(about), _LOOK_AT):
        near.setdefault(scored.id, float("nan"))
    wanted = topics(about)
    records = {r.id: r for r in store.get(scope.tenant, list(near))}
    for record in store.query(scope.tenant, where, order="created_at", descending=True, limit=_TOPIC_SCAN):
        if record.id not in records and (slot_match(request, record) or wanted & topics(record.content)):
            records[record.id] = record
            near[record.id] = float("nan")
    missing = [i for i, score in near.items() if np.isnan(score)]
    for record_id, other in store.vectors(scope.tenant, missing, embedder.name).items():
        near[record_id] = float(np.dot(vector, other))
    meant = [r for r in records.values() if _meant(about, wanted, r, _score(near.get(r.id)), slot_match(request, r))]
    return meant + _said_with(store, scope, meant)


def _score(value: float | None) -> float:
    return 0.0 if value is None or np.isnan(value) else value


def _shares_words(about: str, content: str) -> bool:
    """Holds this share of the topic's words: for Chinese, of its character pairs (one shared
    character, 区 in 时区 and 社区, says nothing)."""
    if not _CJK.search(about):
        return word_overlap(about, content) >= TOPIC_WORDS
    pairs = _pairs(about)
    return bool(pairs) and len(pairs & _pairs(content)) / len(pairs) >= TOPIC_WORDS


def _pairs(text: str) -> set[str]:
    han = "".join(_CJK.findall(text))
    return {han[i:i + 2] for i in range(len(han) - 1)}


def _said_with(store: Store, scope: Scope, meant: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    """Records written from the same turn that repeat a meant one (a pattern's finding
    beside the keeper's statement of the same sentence)."""
    out: dict[str, MemoryRecord] = {}
    chosen = {r.id for r in meant}
    for record in meant:
        where = RecordFilter(namespace=scope.namespace, statuses=(Status.ACTIVE,), thread_id=record.source.thread_id)
        for other in store.query(scope.tenant, where, order="created_at", descending=True, limit=_LOOK_AT):
            if (other.id not in chosen and abs((other.created_at - record.created_at).total_seconds()) < 1
                    and word_overlap(other.content, record.content) >= TOPIC_WORDS):
                out[other.id] = other
    return list(out.values())


def _meant(about: str, wanted: frozenset[str], record: MemoryRecord, similarity: float, slot: bool | None) -> bool:
    if slot:  # the record holds the slot the request names: its wording does not matter
        return True
    if _shares_words(about, record.content) or similarity >= TOPIC_MEANING:
        return True
    if _CJK.search(about) and about in record.content:  # "哥" in "用户的哥在…": one character is no bigram
        return True
    return slot is None and bool(wanted & topics(record.content)) and similarity >= SAME_TOPIC_MEANING


# --- "that": what was said just before -------------------------------------------------


@dataclass(frozen=True, slots=True)
class JustSaid:
    """What "forget that" points at: candidates of this add() (never written) or stored
    records of the thread's previous user turn; ``why`` says what it found when empty."""

    candidates: tuple[Candidate, ...] = ()
    records: tuple[MemoryRecord, ...] = ()
    why: str = ""


def just_said(reads: ReadContext, candidates: Sequence[Candidate], context: ForgetContext,
              request: ForgetRequest) -> JustSaid:
    said, position = context.said, context.position
    if request.follows_words:  # "What's the weather in Oslo? Actually forget it": this message's own words
        mine = _from_messages(candidates, said, [position])
        return JustSaid(mine, why="" if mine else "what it points back at, earlier in the message, stored nothing")
    earlier = [i for i in range(position) if said[i].role == "user"]
    if earlier:
        mine = _from_messages(candidates, said, earlier[-1:])
        return JustSaid(mine, why="" if mine else "the message before it stored nothing")
    if context.thread_id is None:
        return JustSaid(why="nothing said before it in this conversation (no thread id)")
    records = _previous_turn(reads.store, context)
    return JustSaid(records=tuple(records),
                    why="" if records else "the user's previous turn in this thread stored nothing recent")


def _from_messages(candidates: Sequence[Candidate], said: Sequence[Message],
                   positions: Sequence[int]) -> tuple[Candidate, ...]:
    """The candidates extracted from these messages: by message id; when the turns carry no
    ids, every candidate if the add() holds a single user message, else those whose words
    come from these messages more than from any other user message."""
    ids = {said[i].id for i in positions if said[i].id}
    if ids:
        return tuple(c for c in candidates if c.source_message_ids and set(c.source_message_ids) <= ids)
    users = [i for i, m in enumerate(said) if m.role == "user"]
    unlabelled = [c for c in candidates if not c.source_message_ids]
    if len(users) == 1:
        return tuple(unlabelled)
    return tuple(c for c in unlabelled if _said_in(c, said, users) in positions)


def _said_in(candidate: Candidate, said: Sequence[Message], users: Sequence[int]) -> int | None:
    """The user message a candidate's words come from (None when none holds half of them)."""
    overlap = {i: _overlap(candidate.content, said[i].content) for i in users}
    best = max(overlap, key=lambda i: overlap[i])
    return best if overlap[best] >= TOPIC_WORDS else None


def _overlap(candidate: str, message: str) -> float:
    if _CJK.search(candidate):
        pairs = _pairs(candidate)
        return len(pairs & _pairs(message)) / len(pairs) if pairs else 0.0
    return word_overlap(candidate, message)


def _previous_turn(store: Store, context: ForgetContext) -> list[MemoryRecord]:
    """The active records the thread's previous user turn stored: written by the add() that
    carried it (at or after that turn was kept, before this add())."""
    scope, now = context.scope, context.now
    stored_thread = context.stored_thread_id or context.thread_id
    where = RecordFilter(namespace=scope.namespace, statuses=(Status.ACTIVE,), thread_id=stored_thread)
    latest = [r for r in store.query(scope.tenant, where, order="created_at", descending=True, limit=_LOOK_AT)
              if now - r.created_at <= RECENT]
    if not latest:
        return []
    turns = store.turns(scope.tenant, TurnQuery(scope.namespace, thread_id=stored_thread, limit=len(context.said) + 20,
                                                newest_first=True))
    before = _turn_before_this_add(turns, context)
    if before is None:  # turns not kept (episodes off): the newest add()'s records of this thread
        newest = latest[0].created_at
        return [r for r in latest if (newest - r.created_at).total_seconds() < 1]
    if now - before.at > RECENT:
        return []
    return [r for r in latest if r.created_at >= before.at]


def _turn_before_this_add(turns: Sequence[Turn], context: ForgetContext) -> Turn | None:
    """The newest user turn kept before this add()'s own turns (they are kept first)."""
    own = sum(1 for m in context.said if m.content.strip())
    older = list(turns)[own:]
    return next((t for t in older if t.role == "user"), None)
