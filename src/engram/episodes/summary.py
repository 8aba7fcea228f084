"""Episode summaries: a finished (idle) thread told as one ``episode`` memory — what
happened, in what order, how it ended — linked to its thread (``source.thread_id``
and ``metadata.thread_id``), so ``context()`` can bring back how a problem was solved.

Offline the summary is extractive (the opening request, the turning points, the
last turns); with an LLM it is written by the model. A thread that grows after it
was summarised gets a new episode that supersedes the old one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..changes import Change
from ..core import superseding
from ..errors import LLMError
from ..llm.base import LLM, TokenUsage
from ..model import Kind, MemoryRecord, Message, Operation, Scope, Source, Status
from ..reads import ReadContext
from ..text.tokenize import has_cjk
from ..values.episodes import EpisodeLink, Thread, Turn
from ..writes import MemoryDraft, build_record

MAX_QUOTE = 220
SUMMARY_PROMPT = (
    "Summarise this conversation as an episode for long-term memory, in the conversation's language, "
    "in at most 5 sentences: what the user wanted, what was tried in what order, what worked, and how it "
    "ended. Plain text, no lists, no preamble."
)


@dataclass(frozen=True, slots=True)
class EpisodePlan:
    """The changes that write (or replace) one thread's episode, and the link."""

    changes: list[Change]
    link: EpisodeLink
    record: MemoryRecord
    usage: TokenUsage


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_QUOTE else text[: MAX_QUOTE - 1] + "…"


def offline_summary(thread: Thread, turns: Sequence[Turn]) -> str:
    """Extractive: the opening request, up to three later user turns (in order) and the
    last exchange. Chinese labels when the conversation is in Chinese."""
    zh = any(has_cjk(t.content) for t in turns[:4])
    users = [t for t in turns if t.role == "user"]
    opening = users[0] if users else turns[0]
    middle = [t for t in users[1:] if t is not turns[-1]][-3:]
    ending = turns[-1]
    when = f"{thread.started_at:%Y-%m-%d %H:%M}–{thread.last_at:%H:%M} UTC"
    if zh:
        parts = [f"对话 {when}，共 {len(turns)} 轮。开始：{opening.role}：{_quote(opening.content)}"]
        parts += [f"随后：{_quote(t.content)}" for t in middle]
        parts.append(f"结束：{ending.role}：{_quote(ending.content)}")
        return "；".join(parts)
    count = f"{len(turns)} turn" if len(turns) == 1 else f"{len(turns)} turns"
    parts = [f"Conversation {when}, {count}. Began: {opening.role}: {_quote(opening.content)}"]
    parts += [f"Then: {_quote(t.content)}" for t in middle]
    parts.append(f"Ended: {ending.role}: {_quote(ending.content)}")
    return " | ".join(parts)


def llm_summary(llm: LLM, turns: Sequence[Turn], max_chars: int = 12_000) -> tuple[str, TokenUsage]:
    transcript = "\n".join(f"{t.role}: {t.content}" for t in turns)[-max_chars:]
    completion = llm.complete([Message("system", SUMMARY_PROMPT), Message("user", transcript)])
    text = completion.text.strip()
    if not text:
        raise LLMError("the model returned an empty episode summary")
    return text, completion.usage


def plan_episode(
    reads: ReadContext, scope: Scope, thread: Thread, turns: Sequence[Turn], *, llm: LLM | None, actor: str,
    now: datetime,
) -> EpisodePlan:
    usage, content, summarizer = TokenUsage(), None, "rules"
    if llm is not None:
        try:
            content, usage = llm_summary(llm, turns)
            summarizer = llm.model
        except LLMError:
            content = None  # the offline summary is better than none
    content = content or offline_summary(thread, turns)
    metadata = {"thread_id": thread.id, "turns": len(turns), "started_at": thread.started_at.isoformat(),
                "ended_at": thread.last_at.isoformat(), "first_turn": turns[0].seq, "last_turn": turns[-1].seq,
                "summarizer": summarizer}
    draft = MemoryDraft(content, Kind.EPISODE, importance=0.4, metadata=metadata, valid_from=thread.started_at,
                        source=Source(actor=actor, thread_id=thread.id,
                                      message_id=turns[-1].message_id or f"turn:{turns[-1].seq}"))
    record = build_record(draft, Scope(scope.tenant, thread.namespace), now, reads.limits,
                          reads.embedder.name)
    previous = _previous_episode(reads, scope.tenant, thread)
    detail = {"thread_id": thread.id, "source_turns": [turns[0].seq, turns[-1].seq]}
    if previous is not None:
        changes = superseding(previous, record, actor=actor, reason="the thread went on", at=now, detail=detail)
    else:
        changes = [Change(Operation.CREATE, record, None, actor, "episode of an idle thread", detail)]
    return EpisodePlan(changes, EpisodeLink(thread.namespace, thread.id, record.id, now), record, usage)


def _previous_episode(reads: ReadContext, tenant: str, thread: Thread) -> MemoryRecord | None:
    if thread.episode_id is None:
        return None
    found = reads.store.get(tenant, [thread.episode_id])
    return found[0] if found and found[0].status is Status.ACTIVE else None
