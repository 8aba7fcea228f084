"""Which memories a spoken forget means.

- a topic named ("what I told you about my sister", "关于我前任的事"): the active
  memories that share its words, or share its topic (pipeline/topics.py) and are
  close enough in meaning;
- a reminder ("you can bin that reminder", "提醒可以取消了"): the newest active to-do;
- "that", "这个", "刚才那句": what the user's previous turn stored in this thread — the
  newest records written by one add() — or, said in the same add(), its earlier
  candidates, which are then never written.

The pipeline turns the targets into FORGET changes for the write core (audited, with
the user's words as the reason; ``restore`` undoes them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np

from ..embed import Embedder
from ..model import Kind, MemoryRecord, Message, Scope, Status
from ..store.base import RecordFilter, Store
from ..text.tokenize import Tokenizer
from .candidate import Candidate
from .reconcile import word_overlap
from .rules.forgets import ForgetRequest, forget_requests
from .topics import topics

_CJK = re.compile(r"[\u4e00-\u9fff]")
TOPIC_WORDS = 0.5  # a memory that holds this share of the named topic's words is meant
TOPIC_MEANING = 0.45  # or this close in meaning
SAME_TOPIC_MEANING = 0.25  # or of the same topic and this close
RECENT = timedelta(hours=12)  # "that" points back at most this far
_LOOK_AT = 20


def spoken_forgets(messages: Sequence[Message]) -> list[tuple[int, ForgetRequest]]:
    """(index of the user message, request) for every spoken forget, in order, whatever the
    extractor (the rule extractor and the LLM both leave them out of the memories)."""
    return [(i, r) for i, m in enumerate(messages) if m.role == "user" for r in forget_requests(m.content)]


def forget_targets(
    store: Store, embedder: Embedder, tokenizer: Tokenizer, scope: Scope, thread_id: str | None,
    request: ForgetRequest, now: datetime,
) -> list[MemoryRecord]:
    where = RecordFilter(namespace=scope.namespace, statuses=(Status.ACTIVE,), valid_at=now)
    if request.about:
        return _about(store, embedder, tokenizer, scope, where, request.about)
    if request.reminder:
        todos = store.query(scope.tenant, RecordFilter(namespace=scope.namespace, statuses=(Status.ACTIVE,),
                                                       kinds=(Kind.TODO,), valid_at=now),
                            order="created_at", descending=True, limit=1)
        if todos:
            return todos
    return _just_said(store, scope, thread_id, now)


def _about(store: Store, embedder: Embedder, tokenizer: Tokenizer, scope: Scope, where: RecordFilter,
           about: str) -> list[MemoryRecord]:
    vector = np.asarray(embedder.embed([about])[0], dtype=np.float32)
    near = {s.id: s.score for s in store.nearest(scope.tenant, where, embedder.name, vector, _LOOK_AT)}
    for scored in store.lexical(scope.tenant, where, tokenizer.query_terms(about), _LOOK_AT):
        near.setdefault(scored.id, 0.0)
    records = store.get(scope.tenant, list(near))
    missing = [r.id for r in records if near[r.id] == 0.0]
    for record_id, other in store.vectors(scope.tenant, missing, embedder.name).items():
        near[record_id] = float(np.dot(vector, other))
    wanted = topics(about)
    meant = [r for r in records if _meant(about, wanted, r, near[r.id])]
    return meant + _said_with(store, scope, meant)


def _said_with(store: Store, scope: Scope, meant: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    """Records written from the same turn that repeat a meant one (a pattern's finding
    beside the keeper's statement of the same sentence)."""
    out: dict[str, MemoryRecord] = {}
    chosen = {r.id for r in meant}
    for record in meant:
        where = RecordFilter(namespace=scope.namespace, statuses=(Status.ACTIVE,), thread_id=record.source.thread_id)
        for other in store.query(scope.tenant, where, order="created_at", descending=True, limit=_LOOK_AT):
            if (other.id not in chosen and other.created_at == record.created_at
                    and word_overlap(other.content, record.content) >= TOPIC_WORDS):
                out[other.id] = other
    return list(out.values())


def _meant(about: str, wanted: frozenset[str], record: MemoryRecord, similarity: float) -> bool:
    if word_overlap(about, record.content) >= TOPIC_WORDS or similarity >= TOPIC_MEANING:
        return True
    if _CJK.search(about) and about in record.content:  # "哥" in "用户的哥在…": one character is no bigram
        return True
    return bool(wanted & topics(record.content)) and similarity >= SAME_TOPIC_MEANING


def _just_said(store: Store, scope: Scope, thread_id: str | None, now: datetime) -> list[MemoryRecord]:
    where = RecordFilter(namespace=scope.namespace, statuses=(Status.ACTIVE,), thread_id=thread_id)
    latest = store.query(scope.tenant, where, order="updated_at", descending=True, limit=_LOOK_AT)
    latest = [r for r in latest if now - r.updated_at <= RECENT]
    if not latest:
        return []
    last = latest[0].updated_at
    return [r for r in latest if r.updated_at == last]


def earlier_in_this_add(candidates: Sequence[Candidate], messages: Sequence[Message], position: int,
                        request: ForgetRequest) -> list[Candidate]:
    """The candidates said before the forget in the same add() ("I'm dating Sam." then
    "Actually forget that."): a forget that points back means them."""
    if request.about or request.reminder:
        return []
    earlier = {m.id for m in messages[:position] if m.role == "user" and m.id}
    return [c for c in candidates if c.source_message_ids and set(c.source_message_ids) <= earlier]
