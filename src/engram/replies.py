"""Replies remember their question: a turn said right after the other side asked
something in the same thread is indexed with that question (``Source.reply_to``).
See docs/CONCEPTS.md (retrieval) and docs/BENCHMARKS.md (reply context)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from .model import MemoryRecord, Source
from .writes import MemoryDraft

REPLY_TO_CHARS = 500
QUESTIONS_KEPT = 2
_QUESTION = re.compile(r"[^.!?。！？\n]*[?？]")


def question_of(turn: str) -> str:
    """What a reply answers: the last questions the turn before it asked (up to two
    sentences ending in ?/？), not the whole turn. A long message ending in "Anything
    else?" would otherwise bury the answer's own words under its own (LongMemEval
    with assistant turns: turn recall_all@5 0.627 with the whole turn's end, 0.678
    with its questions)."""
    asked = [q.strip() for q in _QUESTION.findall(turn) if q.strip(" ?？")]
    return " ".join(asked[-QUESTIONS_KEPT:])[-REPLY_TO_CHARS:]


def link_replies(drafts: Sequence[MemoryDraft], earlier: Mapping[str, MemoryRecord]) -> list[MemoryDraft]:
    """A turn said right after the other side asked a question in the same thread
    keeps that question as ``source.reply_to``, so search finds the answer by the
    question's words ("Where do you live?" → "Berlin, since May."). The turn before
    is the previous draft of the thread in this batch, or for a thread's first
    draft, ``earlier[thread_id]`` (its latest stored memory). Drafts that name
    their own ``reply_to`` keep it."""
    last: dict[str, tuple[Source, Any]] = {thread: (r.source, r.content) for thread, r in earlier.items()}
    linked: list[MemoryDraft] = []
    for draft in drafts:
        source = draft.source
        if source is None or source.thread_id is None:
            linked.append(draft)
            continue
        thread = source.thread_id
        asked = question_of(last[thread][1]) if thread in last and _answers(source, *last[thread]) else ""
        if asked:
            source = replace(source, reply_to=asked)
            draft = replace(draft, source=source)
        last[thread] = (source, draft.content)
        linked.append(draft)
    return linked


def threads_to_look_up(drafts: Sequence[MemoryDraft]) -> dict[str, datetime | None]:
    """The threads whose first draft in the batch might answer a stored question,
    with when that draft was said (None: now)."""
    first: dict[str, tuple[MemoryDraft, Source]] = {}
    for draft in drafts:
        if draft.source is not None and draft.source.thread_id is not None:
            first.setdefault(draft.source.thread_id, (draft, draft.source))
    return {thread: d.valid_from for thread, (d, source) in first.items() if source.reply_to is None}


def _answers(mine: Source, theirs: Source, said: Any) -> bool:
    """Whether a turn from ``mine`` answers the turn before it, ``said`` by ``theirs``."""
    return (mine.reply_to is None and theirs.actor != mine.actor and isinstance(said, str)
            and ("?" in said or "？" in said))
