"""Extraction by an LLM: conversation in, validated candidates out.

The model sees the messages under short temporary ids (m1, m2, …) — cheaper than
real ids and easy to check. Every answered item is validated on its own: a bad
item is dropped and noted in ``Extraction.dropped`` (and logged), while an answer
that is not JSON of the expected shape raises ``LLMResponseError`` with the raw
text, so a broken model never looks like "nothing worth remembering".
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidValueError, LLMResponseError
from ..llm.base import LLM, TokenUsage
from ..llm.jsonrepair import parse_json_answer
from ..model import Kind, Message, check_slot, check_subject, check_unit_interval
from .candidate import Candidate
from .prompts import (
    EXTRACT_SYSTEM,
    EXTRACTABLE_KINDS,
    EXTRACTION_SCHEMA,
    Language,
    dominant_language,
    render_conversation,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DroppedItem:
    index: int  # position in the model's answer
    reason: str
    item: Any


@dataclass(frozen=True, slots=True)
class Extraction:
    candidates: tuple[Candidate, ...]
    dropped: tuple[DroppedItem, ...]
    usage: TokenUsage
    model: str
    language: Language


class _InvalidItem(Exception):
    pass


class LLMExtractor:
    """Proposes candidates with an LLM. ``run`` returns the full ``Extraction``;
    ``extract`` returns the candidates and keeps the rest in ``last_result``."""

    def __init__(self, llm: LLM, *, temperature: float = 0.0) -> None:
        self.llm = llm
        self.temperature = temperature
        self.last_result: Extraction | None = None
        self.last_usage = TokenUsage()  # set even when the answer then fails to parse

    @property
    def name(self) -> str:
        return f"llm:{self.llm.model}"

    def extract(self, messages: Sequence[Message]) -> list[Candidate]:
        return list(self.run(messages).candidates)

    def run(self, messages: Sequence[Message]) -> Extraction:
        language = dominant_language(m.content for m in messages)
        if not messages:
            return self._remember(Extraction((), (), TokenUsage(), self.llm.model, language))
        temp_ids = [f"m{i}" for i in range(1, len(messages) + 1)]
        prompt = [
            Message(role="system", content=EXTRACT_SYSTEM[language]),
            Message(role="user", content=render_conversation(messages, temp_ids, language)),
        ]
        completion = self.llm.complete(prompt, json_schema=EXTRACTION_SCHEMA, temperature=self.temperature)
        self.last_usage = completion.usage
        items = answer_items(completion.text)
        id_map = {temp: message.id for temp, message in zip(temp_ids, messages, strict=True)}
        candidates, dropped = validate_items(items, id_map, self.name)
        for note in dropped:
            log.warning("dropped extracted item %d: %s", note.index, note.reason)
        return self._remember(Extraction(candidates, dropped, completion.usage, completion.model, language))

    def _remember(self, result: Extraction) -> Extraction:
        self.last_result = result
        self.last_usage = result.usage
        return result


def answer_items(text: str) -> list[Any]:
    """The list of items in an answer: {"memories": [...]}, a bare list, or one bare item."""
    answer = parse_json_answer(text)
    if isinstance(answer, list):
        return answer
    if isinstance(answer, dict) and isinstance(answer.get("memories"), list):
        return list(answer["memories"])
    if isinstance(answer, dict) and {"kind", "content"} <= answer.keys():
        return [answer]
    raise LLMResponseError('expected {"memories": [...]} from the model', raw=text)


def validate_items(
    items: Sequence[Any], id_map: Mapping[str, str | None], extractor: str
) -> tuple[tuple[Candidate, ...], tuple[DroppedItem, ...]]:
    candidates: list[Candidate] = []
    dropped: list[DroppedItem] = []
    seen: set[tuple[Kind, str]] = set()
    for index, item in enumerate(items):
        try:
            candidate = to_candidate(item, id_map, extractor)
            if (candidate.kind, candidate.content) in seen:
                raise _InvalidItem("duplicate of an earlier item")
        except _InvalidItem as exc:
            dropped.append(DroppedItem(index, str(exc), item))
            continue
        seen.add((candidate.kind, candidate.content))
        candidates.append(candidate)
    return tuple(candidates), tuple(dropped)


def to_candidate(item: Any, id_map: Mapping[str, str | None], extractor: str) -> Candidate:
    if not isinstance(item, dict):
        raise _InvalidItem(f"item is {type(item).__name__}, not an object")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise _InvalidItem("content is missing or empty")
    temp_ids = _source_ids(item.get("source_ids"), id_map)
    return Candidate(
        kind=_kind(item.get("kind")),
        content=content.strip(),
        confidence=_unit(item.get("confidence"), "confidence"),
        importance=_unit(item.get("importance"), "importance"),
        source_message_ids=tuple(real for t in temp_ids if (real := id_map[t]) is not None),
        extractor=extractor,
        subject=_subject(item.get("subject")),
        slot=_slot(item.get("slot")),
    )


def _subject(value: Any) -> str | None:
    """None when the model gave none (the judge reads it); a malformed one drops the item."""
    if value is None or value == "":
        return None
    try:
        return check_subject(value.strip().lower() if isinstance(value, str) else value)
    except InvalidValueError as exc:
        raise _InvalidItem(str(exc)) from None


def _slot(value: Any) -> str | None:
    try:
        return check_slot(value.strip().lower() if isinstance(value, str) else value)
    except InvalidValueError as exc:
        raise _InvalidItem(str(exc)) from None


def _kind(value: Any) -> Kind:
    name = value.strip().lower() if isinstance(value, str) else value
    if name not in EXTRACTABLE_KINDS:
        raise _InvalidItem(f"unknown kind {value!r}")
    return Kind(name)


def _unit(value: Any, what: str) -> float:
    try:
        return check_unit_interval(value, what)
    except InvalidValueError as exc:
        raise _InvalidItem(str(exc)) from None


def _source_ids(value: Any, id_map: Mapping[str, str | None]) -> list[str]:
    if not isinstance(value, list) or not value:
        raise _InvalidItem("no source message ids")
    temp_ids = list(dict.fromkeys(_temp_id(raw) for raw in value))
    unknown = [t for t in temp_ids if t not in id_map]
    if unknown:
        raise _InvalidItem(f"source ids not in the conversation: {unknown}")
    return temp_ids


def _temp_id(raw: Any) -> str:
    """Accept "m2", "[m2]", "2" and 2 for the id shown as [m2]; nothing looser."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        return repr(raw)
    text = str(raw).strip().strip("[]").strip()
    return f"m{text}" if text.isdigit() else text
