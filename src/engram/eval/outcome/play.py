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
way an agent asks for its memory block. Besides what the block holds of the needed and
forbidden facts, each probe records what went wrong on the way there (issue 27):

- junk: memories stored from a user turn that states no fact (chatter, questions,
  requests, pasted text), in the block and among the active memories;
- needed facts wrongly retired: in a superseded or forgotten memory, in no active one;
- another person's fact shown as the user's: a block line holding the fact's words
  without naming whose it is ("Allergic to peanuts" for a colleague's allergy).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Literal

from ...clock import FakeClock
from ...memory import Memory
from ...model import Kind, MemoryRecord, Scope, Status
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
    junk_in_block: tuple[str, ...] = ()  # block memories stored from a turn that states no fact
    junk_active: int = 0  # active memories stored from such a turn
    active_total: int = 0  # active memories of the scope at the probe
    retired_needed: tuple[str, ...] = ()  # needed facts only in a superseded or forgotten memory
    others_as_user: tuple[str, ...] = ()  # another person's facts in a block line that does not name them


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
    junk: set[str] = set()  # ids of memories stored from a turn that states no fact
    results = []
    for index, session in enumerate(scenario.sessions):
        _set_day(clock, session.day)
        if writer is not None:
            writer.session(session)
        elif mode == "turns":
            users = [t for t in session.turns if t.role == "user"]
            records = memory.remember_many([t.content for t in users], scope)
            junk.update(r.id for r, t in zip(records, users) if not t.facts)
        else:
            junk |= _add_session(memory, scope, session, f"s{index}", clock)
        for probe in (p for p in scenario.probes if p.after_session == index):
            _set_day(clock, probe.day, hour=20)
            block = memory.context(probe.query, scope, budget_tokens=budget_tokens)
            active = list(memory.scan(scope))
            retired = [r.content for r in memory.scan(scope, statuses=(Status.SUPERSEDED, Status.DELETED))]
            result = score(scenario, mode, probe, block, [r.content for r in active])
            results.append(with_write_side(result, scenario, probe, block, active, retired, junk))
    return results


def _set_day(clock: FakeClock, day: int, hour: int = 9) -> None:
    target = START + timedelta(days=day, hours=hour - START.hour)
    if target > clock.now():
        clock.advance(seconds=(target - clock.now()).total_seconds())


def _add_session(memory: Memory, scope: Scope, session: Session, thread_id: str, clock: FakeClock) -> set[str]:
    """One add() per user turn, with the assistant turn before it (the last exchange).
    Returns the ids of the memories written from turns that state no fact."""
    previous: Turn | None = None
    junk: set[str] = set()
    for turn in session.turns:
        if turn.role == "user":
            messages = [] if previous is None else [{"role": "assistant", "content": previous.content}]
            messages.append({"role": "user", "content": turn.content})
            result = memory.add(messages, scope, thread_id=thread_id)
            if not turn.facts:
                junk.update(e.record_id for e in result.events if e.event in ("ADD", "SUPERSEDE") and e.record_id)
        previous = turn if turn.role == "assistant" else None
        clock.advance(minutes=1)
    return junk


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


def with_write_side(result: ProbeResult, scenario: Scenario, probe: Probe, block: ContextBlock,
                    active: Sequence[MemoryRecord], retired: Sequence[str], junk: set[str]) -> ProbeResult:
    """The probe's result with junk, wrongly retired needed facts and other people's facts shown
    as the user's."""
    contents = [r.content for r in active]
    lines = [hit.record.content for hit in block.hits]
    needed = [scenario.facts[fact_id] for fact_id in probe.needed]
    return replace(
        result,
        junk_in_block=tuple(hit.record.content for hit in block.hits if hit.record.id in junk),
        junk_active=sum(r.id in junk for r in active), active_total=len(active),
        retired_needed=tuple(f.id for f in needed if not _any(contents, f.phrases) and _any(retired, f.phrases)),
        others_as_user=tuple(fact.id for fact in _others_facts(scenario, probe) if _shown_as_users(fact, lines)),
    )


# another person's fact: the text opens with (a possessive and) a relation ("Son Mateo is turning 6",
# "His partner is Lucía", "用户的妻子怀孕了")
_EN_RELATIONS = (r"wife|husband|partner|spouse|girlfriend|boyfriend|fianc\w*|son|daughter|kids?|children|child|baby"
                 r"|mother|mom|mum|father|dad|parents|sister|brother|grand\w+|aunt|uncle|cousin|niece|nephew"
                 r"|(?:mother|father|sister|brother|son|daughter)-in-law|colleague|coworker|co-worker|teammate|boss"
                 r"|manager|friend|roommate|flatmate|neighbou?r|landlord|client|mentor|stepson|stepdaughter")
_EN_OTHERS = re.compile(rf"^(?:(?:his|her|their|the user's|user's)\s+)?(?:\w+\s+)?(?P<relation>{_EN_RELATIONS})\b",
                        re.IGNORECASE)
_ZH_OTHERS = re.compile(r"^(?:用户的?)?(?P<relation>妻子|老婆|太太|媳妇|爱人|老公|丈夫|先生|男朋友|女朋友|男友|女友"
                        r"|对象|儿子|女儿|闺女|孩子|宝宝|妈妈|母亲|爸爸|父亲|父母|爸妈|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶"
                        r"|外婆|外公|婆婆|公公|岳母|岳父|同事|领导|老板|上司|朋友|室友|邻居|客户|导师|孙子|孙女)")
_NAME = re.compile(r"(?<!^)\b[A-Z][\w'’-]+")
_ZH_NAME = re.compile(r"(?:叫|小名|名叫|名字是)([\u4e00-\u9fff]{2})")


def _person_words(text: str) -> tuple[str, ...]:
    """The relation and the names another person's fact gives them, or () for the user's."""
    found = _ZH_OTHERS.match(text) or _EN_OTHERS.match(text)
    if found is None:
        return ()
    return (found.group("relation"), *_NAME.findall(text), *_ZH_NAME.findall(text))


def _others_facts(scenario: Scenario, probe: Probe) -> list[Fact]:
    said = [fact for session in scenario.sessions[: probe.after_session + 1] for turn in session.turns
            for fact in turn.facts]
    return [fact for fact in said if _person_words(fact.text)]


_ZH_RELATIONS = _ZH_OTHERS.pattern.removeprefix("^(?:用户的?)?")
_ANY_RELATION = re.compile(rf"\b(?:{_EN_RELATIONS})\b|{_ZH_RELATIONS}", re.IGNORECASE)


def _shown_as_users(fact: Fact, lines: Sequence[str]) -> bool:
    """A block line holds the fact's words and names nobody: neither the person (by the fact's
    relation or names) nor any relation at all ("老婆" for a fact written "妻子")."""
    words = _person_words(fact.text)
    return any(contains(line, phrase) and not any(contains(line, w) for w in words)
               and not _ANY_RELATION.search(line) for line in lines for phrase in fact.phrases)


def _label(item: Forbidden, lines: Sequence[str]) -> str:
    phrase = next(p for p in item.phrases if _any(lines, [p]))
    return f"{item.why}: {phrase}"

