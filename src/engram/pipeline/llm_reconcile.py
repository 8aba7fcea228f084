"""Reconciliation proposed by an LLM: how a candidate relates to similar memories.

The model sees the similar memories under temporary ids 0, 1, 2, … and answers
ADD / UPDATE / SUPERSEDE / NOOP. Deterministic guards then check the answer. A
target that was not shown, or a missing target for UPDATE/SUPERSEDE, raises
``LLMResponseError`` rather than degrading to ADD: a confused model should not
silently create duplicates, and the pipeline can fall back to its rule-based
reconciliation on that error. A target given with ADD is ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from ..errors import LLMResponseError
from ..llm.base import LLM, TokenUsage
from ..llm.jsonrepair import parse_json_answer
from ..model import MemoryRecord, Message
from .candidate import Candidate
from .prompts import RECONCILE_EVENTS, RECONCILE_SCHEMA, RECONCILE_SYSTEM, dominant_language, render_reconcile

Event = Literal["ADD", "UPDATE", "SUPERSEDE", "NOOP"]
_NEEDS_TARGET = frozenset({"UPDATE", "SUPERSEDE"})
_NO_TARGET = frozenset({"", "null", "none", "-1"})


@dataclass(frozen=True, slots=True)
class Proposal:
    event: Event
    target_id: str | None  # a real record id, always one of the similar records shown
    content: str
    reason: str
    usage: TokenUsage = field(default_factory=TokenUsage, compare=False)


class LLMReconciler:
    def __init__(self, llm: LLM, *, temperature: float = 0.0) -> None:
        self.llm = llm
        self.temperature = temperature

    @property
    def name(self) -> str:
        return f"llm:{self.llm.model}"

    def propose(self, candidate: Candidate, similar: Sequence[MemoryRecord]) -> Proposal:
        if not similar:  # nothing to compare with: no need to ask
            return Proposal("ADD", None, candidate.content, "no similar memories")
        language = dominant_language([candidate.content, *(r.content for r in similar)])
        prompt = [
            Message(role="system", content=RECONCILE_SYSTEM[language]),
            Message(role="user", content=render_reconcile(candidate, similar, language)),
        ]
        completion = self.llm.complete(prompt, json_schema=RECONCILE_SCHEMA, temperature=self.temperature)
        return proposal_from_answer(completion.text, candidate, similar, completion.usage)


def proposal_from_answer(
    text: str, candidate: Candidate, similar: Sequence[MemoryRecord], usage: TokenUsage
) -> Proposal:
    answer = parse_json_answer(text)
    if not isinstance(answer, dict):
        raise LLMResponseError("expected a JSON object with event/target_id/content/reason", raw=text)
    event = _event(answer.get("event"), text)
    target = _target(answer.get("target_id"), len(similar), text)
    if event == "ADD":
        target = None
    elif event in _NEEDS_TARGET and target is None:
        raise LLMResponseError(f"{event} needs a target_id among the memories shown", raw=text)
    content = _content(answer.get("content"), event, candidate, similar, target, text)
    reason = answer.get("reason")
    return Proposal(
        event=event,
        target_id=None if target is None else similar[target].id,
        content=content,
        reason=reason.strip() if isinstance(reason, str) else "",
        usage=usage,
    )


def _event(value: Any, raw: str) -> Event:
    name = value.strip().upper() if isinstance(value, str) else value
    if name not in RECONCILE_EVENTS:
        raise LLMResponseError(f"unknown event {value!r}; expected one of {', '.join(RECONCILE_EVENTS)}", raw=raw)
    return cast(Event, name)


def _target(value: Any, shown: int, raw: str) -> int | None:
    """The index of the shown record the model meant, or None for no target."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise LLMResponseError(f"target_id {value!r} is not one of the ids shown", raw=raw)
    text = str(value).strip().strip("[]").strip()
    if text.lower() in _NO_TARGET:
        return None
    if not text.isdigit() or int(text) >= shown:
        raise LLMResponseError(f"target_id {value!r} is not one of the ids shown (0..{shown - 1})", raw=raw)
    return int(text)


def _content(
    value: Any, event: Event, candidate: Candidate, similar: Sequence[MemoryRecord], target: int | None, raw: str
) -> str:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if event == "NOOP":  # nothing is written, so restating existing text invents nothing
        return candidate.content if target is None else similar[target].content
    raise LLMResponseError(f"{event} needs non-empty content", raw=raw)
