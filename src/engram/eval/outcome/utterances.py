"""Fresh utterances: is each single sentence stored or not, do changes replace what
they change, are spoken forgets honoured.

Each item runs in a scope of its own through ``Memory.add`` (the extracted path), and
is judged on what the scope's active memories say afterwards, not on the events:

- an utterance that holds a memory counts as found when an active memory contains
  one of its phrases; one that holds none counts as a false memory when anything
  at all is stored;
- a change (``before`` said, then ``after`` a day later) is reconciled when the
  new phrases are in an active memory and — for ``supersede`` — none of the old
  phrases still is, or — for ``refine`` — both are;
- a forget is honoured when no active memory holds a target phrase, the memories
  that should stay (``keep_phrases``) are still there, and the forget itself was
  not stored;
- an everyday request ("remove the onions from my order", "把这段删掉", a pasted e-mail that
  says "forget…") is said after a few facts in the same thread, and passes when it retires
  none of them (``everyday-requests.jsonl``: requests no memory should ever be forgotten on).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Literal

import pydantic

from ...clock import FakeClock
from ...errors import BenchmarkDataError
from ...memory import Memory
from ...model import Scope
from .play import TENANT, contains
from .scenarios import _Model

Why = Literal["question", "temporary", "small_talk", "request", "greeting", "hypothetical", "reported"]


class Utterance(_Model):
    text: str = pydantic.Field(min_length=1)
    memory: bool
    phrases: tuple[str, ...] = ()
    kind: str | None = None
    why: str | None = None


class ChangePair(_Model):
    before: str = pydantic.Field(min_length=1)
    after: str = pydantic.Field(min_length=1)
    expect: Literal["supersede", "refine"]
    old_phrases: tuple[str, ...] = pydantic.Field(min_length=1)
    new_phrases: tuple[str, ...] = pydantic.Field(min_length=1)


class SpokenForget(_Model):
    setup: tuple[str, ...] = pydantic.Field(min_length=1)
    forget: str = pydantic.Field(min_length=1)
    target_phrases: tuple[str, ...] = pydantic.Field(min_length=1)
    keep_phrases: tuple[str, ...] = ()


class EverydayRequest(_Model):
    text: str = pydantic.Field(min_length=1)
    lang: Literal["en", "zh"]
    kind: str = "other"


# What the user said before each everyday request, in its thread: what a forget could wrongly retire.
EVERYDAY_SETUP = {
    "en": "I live in Leeds, near Hyde Park. I'm allergic to peanuts. I work at Siemens as a data engineer. "
          "My wife Sarah loves orchids. Please keep your answers short.",
    "zh": "我住在杭州西湖区。我对花生过敏。我在阿里巴巴做数据工程师。我老婆叫小雨，喜欢兰花。回答尽量简短。",
}


class UtteranceSet(_Model):
    utterances: tuple[Utterance, ...] = ()
    changes: tuple[ChangePair, ...] = ()
    forgets: tuple[SpokenForget, ...] = ()


@dataclass(frozen=True, slots=True)
class ItemResult:
    set: str  # e.g. "dev-en"
    part: str  # utterance | change | forget
    text: str
    ok: bool
    label: str  # memory / not:<why> / supersede / refine / forget
    stored: tuple[str, ...]  # the active memories afterwards


def load_everyday(path: Path) -> list[EverydayRequest]:
    """One request per line (JSON Lines)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        return [EverydayRequest.model_validate_json(line) for line in lines if line.strip()]
    except (OSError, pydantic.ValidationError) as exc:
        raise BenchmarkDataError(f"{path}: {exc}") from exc


def run_everyday(memory: Memory, clock: FakeClock, name: str, requests: list[EverydayRequest]) -> Iterator[ItemResult]:
    """Each request in a scope of its own, after the setup facts in the same thread."""
    scopes = _Scopes(memory, clock, name)
    for request in requests:
        scope = scopes.new()
        scopes.say(scope, EVERYDAY_SETUP[request.lang])
        before = {r.id for r in memory.scan(scope)}
        scopes.say(scope, request.text)
        after = {r.id for r in memory.scan(scope)}
        retired = before - after
        stored = scopes.active(scope)
        yield ItemResult(name, "everyday", request.text, not retired, f"everyday:{request.kind}", stored)


def load_utterances(path: Path) -> UtteranceSet:
    try:
        return UtteranceSet.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, pydantic.ValidationError) as exc:
        raise BenchmarkDataError(f"{path}: {exc}") from exc


class _Scopes:
    """A fresh scope per item, a clock that moves a day between a statement and its change."""

    def __init__(self, memory: Memory, clock: FakeClock, name: str) -> None:
        self.memory, self.clock, self.name, self.count = memory, clock, name, 0

    def new(self) -> Scope:
        self.count += 1
        return Scope.for_user(TENANT, f"{self.name}-{self.count}")

    def say(self, scope: Scope, text: str, thread: str = "t") -> None:
        self.memory.add([{"role": "user", "content": text}], scope, thread_id=thread)
        self.clock.advance(minutes=1)

    def active(self, scope: Scope) -> tuple[str, ...]:
        return tuple(record.content for record in self.memory.scan(scope))


def run_set(memory: Memory, clock: FakeClock, name: str, items: UtteranceSet) -> Iterator[ItemResult]:
    scopes = _Scopes(memory, clock, name)
    for utterance in items.utterances:
        yield _utterance(scopes, name, utterance)
    for change in items.changes:
        yield _change(scopes, name, change)
    for forget in items.forgets:
        yield _forget(scopes, name, forget)


def _has(texts: tuple[str, ...], phrases: tuple[str, ...]) -> bool:
    return any(contains(text, phrase) for text in texts for phrase in phrases)


def _utterance(scopes: _Scopes, name: str, item: Utterance) -> ItemResult:
    scope = scopes.new()
    scopes.say(scope, item.text)
    stored = scopes.active(scope)
    ok = _has(stored, item.phrases) if item.memory else not stored
    label = "memory" if item.memory else f"not:{item.why or 'other'}"
    return ItemResult(name, "utterance", item.text, ok, label, stored)


def _change(scopes: _Scopes, name: str, item: ChangePair) -> ItemResult:
    scope = scopes.new()
    scopes.say(scope, item.before)
    scopes.clock.advance(days=1)
    scopes.say(scope, item.after)
    stored = scopes.active(scope)
    new_kept = _has(stored, item.new_phrases)
    old_kept = _has(stored, item.old_phrases)
    ok = new_kept and (old_kept if item.expect == "refine" else not old_kept)
    return ItemResult(name, "change", f"{item.before} → {item.after}", ok, item.expect, stored)


def _forget(scopes: _Scopes, name: str, item: SpokenForget) -> ItemResult:
    scope = scopes.new()
    for text in item.setup:
        scopes.say(scope, text)
    scopes.clock.advance(seconds=timedelta(minutes=3).total_seconds())
    scopes.say(scope, item.forget)
    stored = scopes.active(scope)
    ok = (not _has(stored, item.target_phrases) and all(_has(stored, (p,)) for p in item.keep_phrases)
          and not any(contains(text, item.forget) for text in stored))
    return ItemResult(name, "forget", item.forget, ok, "forget", stored)
