"""Play a scenario through the product and look at what each probe's prompt block holds.

Three ways to fill the memory, one way to read it:

- ``extracted``: every user turn goes through ``Memory.add`` (with the assistant turn
  before it, as an app would send the last exchange), so extraction, reconciliation
  and spoken forgets decide what is stored;
- ``given``: the labelled facts are written as a perfect extractor would —
  ``remember`` a new fact, ``supersede`` the one it replaces, ``update`` the one it
  refines, ``forget`` what the user asked to forget — so only retrieval and the
  block are measured;
- ``turns``: the baseline of keeping the conversation — every user turn stored
  verbatim (``remember_many``), nothing extracted, reconciled or forgotten.

Each probe is then ``Memory.context(query, budget_tokens)`` at the probe's day, the
way an agent asks for its memory block.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from ...clock import FakeClock
from ...memory import Memory
from ...model import Kind, Scope
from ...search.context import ContextBlock
from .scenarios import Fact, Forbidden, Probe, Scenario, Session, Turn

Mode = Literal["extracted", "given", "turns"]
MODES: tuple[Mode, ...] = ("extracted", "given", "turns")
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday; scenario days count from here
TENANT = "outcome"
DEFAULT_BUDGET = 400


@dataclass(frozen=True, slots=True)
class ProbeResult:
    scenario: str
    split: str
    language: str
    mode: str
    kind: str
    query: str
    needed: tuple[str, ...]
    found: tuple[str, ...]  # needed facts whose phrases are in the block
    stored: tuple[str, ...]  # needed facts whose phrases are in some active memory
    forbidden_in_block: tuple[str, ...]  # "why: phrase" of each forbidden item the block holds
    stale_active: tuple[str, ...]  # forbidden facts (stale, forgotten) still in an active memory
    stale_total: int
    tokens: int
    empty: bool
    block: tuple[str, ...]  # the memories in the block, as given to the model


def contains(text: str, phrase: str) -> bool:
    """Phrase matching of the benchmark: NFKC, case-folded, whitespace collapsed."""
    return _fold(phrase) in _fold(text)


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _any(texts: Sequence[str], phrases: Sequence[str]) -> bool:
    return any(contains(text, phrase) for text in texts for phrase in phrases)


def scope_of(scenario: Scenario) -> Scope:
    return Scope.for_user(TENANT, scenario.id)


def play(
    memory: Memory, clock: FakeClock, scenario: Scenario, mode: Mode, *, budget_tokens: int = DEFAULT_BUDGET
) -> list[ProbeResult]:
    """Play every session, asking each probe after its session; the memory must be empty
    for this scenario's scope and driven by ``clock``."""
    scope = scope_of(scenario)
    writer = _GivenWriter(memory, scope) if mode == "given" else None
    results = []
    for index, session in enumerate(scenario.sessions):
        _set_day(clock, session.day)
        if writer is not None:
            writer.session(session)
        elif mode == "turns":
            memory.remember_many([t.content for t in session.turns if t.role == "user"], scope)
        else:
            _add_session(memory, scope, session, f"s{index}", clock)
        for probe in (p for p in scenario.probes if p.after_session == index):
            _set_day(clock, probe.day, hour=20)
            block = memory.context(probe.query, scope, budget_tokens=budget_tokens)
            active = [record.content for record in memory.scan(scope)]
            results.append(score(scenario, mode, probe, block, active))
    return results


def _set_day(clock: FakeClock, day: int, hour: int = 9) -> None:
    target = START + timedelta(days=day, hours=hour - START.hour)
    if target > clock.now():
        clock.advance(seconds=(target - clock.now()).total_seconds())


def _add_session(memory: Memory, scope: Scope, session: Session, thread_id: str, clock: FakeClock) -> None:
    """One add() per user turn, with the assistant turn before it (the last exchange)."""
    previous: Turn | None = None
    for turn in session.turns:
        if turn.role == "user":
            messages = [] if previous is None else [{"role": "assistant", "content": previous.content}]
            messages.append({"role": "user", "content": turn.content})
            memory.add(messages, scope, thread_id=thread_id)
        previous = turn if turn.role == "assistant" else None
        clock.advance(minutes=1)


class _GivenWriter:
    """The labelled facts written through the public API, as a perfect extractor would."""

    def __init__(self, memory: Memory, scope: Scope) -> None:
        self.memory, self.scope = memory, scope
        self.ids: dict[str, str] = {}  # fact id → record id
        self.texts: dict[str, str] = {}  # record id → its content now

    def session(self, session: Session) -> None:
        for turn in session.turns:
            for fact in turn.facts:
                self._write(fact)
            for fact_id in turn.forgets:
                self.memory.forget(self.ids[fact_id], self.scope, reason="the user asked")

    def _write(self, fact: Fact) -> None:
        kind = Kind(fact.kind)
        if fact.supersedes is not None:
            _, created = self.memory.supersede(self.ids[fact.supersedes], self.scope, fact.text, kind=kind)
            self._keep(fact, created.id, created.content)
        elif fact.refines is not None:
            record_id = self.ids[fact.refines]
            merged = _merged(self.texts[record_id], fact)
            updated = self.memory.update(record_id, self.scope, content=merged)
            self._keep(fact, record_id, updated.content)
        else:
            record = self.memory.remember(fact.text, self.scope, kind=kind)
            self._keep(fact, record.id, record.content)

    def _keep(self, fact: Fact, record_id: str, content: str) -> None:
        self.ids[fact.id] = record_id
        self.texts[record_id] = content


def _merged(old: str, refinement: Fact) -> str:
    """The refined memory: the refinement alone when it already says the old fact."""
    return refinement.text if contains(refinement.text, old) else f"{old}; {refinement.text}"


def score(scenario: Scenario, mode: str, probe: Probe, block: ContextBlock, active: Sequence[str]) -> ProbeResult:
    lines = [hit.record.content for hit in block.hits]
    needed = [scenario.facts[fact_id] for fact_id in probe.needed]
    forbidden = scenario.forbidden(probe)
    ended = [item for item in forbidden if item.fact is not None]
    return ProbeResult(
        scenario=scenario.id, split=scenario.split, language=scenario.language, mode=mode, kind=probe.kind,
        query=probe.query, needed=probe.needed,
        found=tuple(fact.id for fact in needed if _any(lines, fact.phrases)),
        stored=tuple(fact.id for fact in needed if _any(active, fact.phrases)),
        forbidden_in_block=tuple(_label(item, lines) for item in forbidden if _any(lines, item.phrases)),
        stale_active=tuple(item.fact for item in ended if item.fact and _any(active, item.phrases)),
        stale_total=len(ended), tokens=block.tokens, empty=not block.hits, block=tuple(lines),
    )


def _label(item: Forbidden, lines: Sequence[str]) -> str:
    phrase = next(p for p in item.phrases if _any(lines, [p]))
    return f"{item.why}: {phrase}"

