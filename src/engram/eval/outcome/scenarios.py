"""Multi-session outcome scenarios: the data of ``engram eval outcome``.

A scenario is one user talking to an assistant over several sessions days apart,
with ground truth: which facts each user turn states (and which earlier fact it
supersedes, refines or asks to forget), and probes — tasks the user asks for later,
with the facts the assistant needs in its prompt and the stale, forgotten or false
ones that must not be there. The format is described in docs/OUTCOME.md; the files
that ship with engram live in ``engram/eval/outcome/data/<split>/``.

Loading checks the labels as well as the shape (a needed fact must be active at
the probe, a forbidden fact must have ended before it), so a mislabelled file is
refused with the file and the reason rather than scored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pydantic

from ...errors import BenchmarkDataError

DATA = Path(__file__).parent / "data"
SPLITS = ("dev", "heldout", "heldout2")  # heldout2: written apart for issue 27, never tuned on
LANGUAGES = ("en", "zh")
PROBE_KINDS = ("implied", "loose", "direct")
FactKind = Literal["fact", "preference", "rule", "todo"]
ProbeKind = Literal["implied", "loose", "direct"]


class _Model(pydantic.BaseModel):
    """Frozen, and tolerant of keys a writer added for readers (``persona``, notes)."""

    model_config = pydantic.ConfigDict(frozen=True, extra="ignore")


class Fact(_Model):
    id: str
    text: str
    kind: FactKind = "fact"
    phrases: tuple[str, ...] = pydantic.Field(min_length=1)
    supersedes: str | None = None
    refines: str | None = None


class Turn(_Model):
    role: Literal["user", "assistant"]
    content: str = pydantic.Field(min_length=1)
    facts: tuple[Fact, ...] = ()
    forgets: tuple[str, ...] = ()


class Session(_Model):
    day: int = pydantic.Field(ge=0)
    turns: tuple[Turn, ...] = pydantic.Field(min_length=1)


class Forbidden(_Model):
    """A fact id (stale or forgotten at the probe) or phrases of a false memory."""

    why: str
    phrases: tuple[str, ...] = pydantic.Field(min_length=1)
    fact: str | None = None


class Probe(_Model):
    after_session: int = pydantic.Field(ge=0)
    day: int = pydantic.Field(ge=0)
    query: str = pydantic.Field(min_length=1)
    kind: ProbeKind
    needed: tuple[str, ...] = pydantic.Field(min_length=1)
    forbidden: tuple[str | Forbidden, ...] = ()


class _RawScenario(_Model):
    id: str
    language: Literal["en", "zh"]
    persona: str = ""
    sessions: tuple[Session, ...] = pydantic.Field(min_length=1)
    probes: tuple[Probe, ...] = pydantic.Field(min_length=1)


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    split: str
    language: str
    sessions: tuple[Session, ...]
    probes: tuple[Probe, ...]
    facts: dict[str, Fact]  # every fact by id
    ends: dict[str, int]  # fact id → the session in which it stopped being true (superseded or forgotten)

    def forbidden(self, probe: Probe) -> list[Forbidden]:
        """The probe's forbidden items, fact ids resolved to their phrases."""
        out = []
        for item in probe.forbidden:
            if isinstance(item, str):
                why = "forgotten" if self._forgotten(item) else "stale"
                out.append(Forbidden(why=why, phrases=self.facts[item].phrases, fact=item))
            else:
                out.append(item)
        return out

    def _forgotten(self, fact_id: str) -> bool:
        return any(fact_id in turn.forgets for session in self.sessions for turn in session.turns)


def load_scenarios(
    splits: Sequence[str] = SPLITS, languages: Sequence[str] = LANGUAGES, data: Path | None = None
) -> list[Scenario]:
    """The scenarios of the given splits and languages, sorted by id."""
    root = data or DATA
    for split in splits:
        if split not in SPLITS:
            raise BenchmarkDataError(f"unknown split {split!r}; expected one of: {', '.join(SPLITS)}")
    out = []
    for split in splits:
        folder = root / split
        if not folder.is_dir():
            raise BenchmarkDataError(f"no scenario folder {folder}")
        for path in sorted(folder.glob(f"{split}-*.json")):
            if path.name.endswith("-utterances.json"):
                continue
            scenario = load_scenario(path, split)
            if scenario.language in languages:
                out.append(scenario)
    return out


def load_scenario(path: Path, split: str) -> Scenario:
    try:
        raw = _RawScenario.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, pydantic.ValidationError) as exc:
        raise BenchmarkDataError(f"{path}: {exc}") from exc
    facts, ends = _facts(raw.sessions, path)
    scenario = Scenario(raw.id, split, raw.language, raw.sessions, raw.probes, facts, ends)
    for index, probe in enumerate(raw.probes):
        problem = _probe_problem(scenario, probe)
        if problem:
            raise BenchmarkDataError(f"{path}: probe {index}: {problem}")
    return scenario


def _facts(sessions: Iterable[Session], path: Path) -> tuple[dict[str, Fact], dict[str, int]]:
    facts: dict[str, Fact] = {}
    ends: dict[str, int] = {}
    for index, session in enumerate(sessions):
        for turn in session.turns:
            for fact in turn.facts:
                for earlier in (fact.supersedes, fact.refines):
                    if earlier is not None and earlier not in facts:
                        raise BenchmarkDataError(f"{path}: fact {fact.id} points at unknown fact {earlier}")
                if fact.id in facts:
                    raise BenchmarkDataError(f"{path}: duplicate fact id {fact.id}")
                missing = [p for p in fact.phrases if p.casefold() not in fact.text.casefold()]
                if missing:
                    raise BenchmarkDataError(f"{path}: fact {fact.id}: phrases {missing} are not in its text")
                facts[fact.id] = fact
                if fact.supersedes is not None:
                    ends.setdefault(fact.supersedes, index)
            for forgotten in turn.forgets:
                if forgotten not in facts:
                    raise BenchmarkDataError(f"{path}: a turn forgets unknown fact {forgotten}")
                ends.setdefault(forgotten, index)
    return facts, ends


def _probe_problem(scenario: Scenario, probe: Probe) -> str | None:
    after = probe.after_session
    if after >= len(scenario.sessions):
        return f"after_session {after} is past the last session"
    if probe.day < scenario.sessions[after].day:
        return "its day is before its session"
    said = {fact.id for session in scenario.sessions[: after + 1] for turn in session.turns for fact in turn.facts}
    for fact_id in probe.needed:
        if fact_id not in said:
            return f"needed fact {fact_id} is not stated by then"
        if scenario.ends.get(fact_id, len(scenario.sessions)) <= after:
            return f"needed fact {fact_id} is no longer true then"
    true_then = [scenario.facts[f] for f in said if scenario.ends.get(f, len(scenario.sessions)) > after]
    for item in probe.forbidden:
        if not isinstance(item, str):
            continue
        if not (item in scenario.facts and scenario.ends.get(item, after + 1) <= after):
            return f"forbidden fact {item} is still true then (or unknown)"
        clash = [f.id for f in true_then for p in scenario.facts[item].phrases if p.casefold() in f.text.casefold()]
        if clash:
            return f"a phrase of forbidden fact {item} is in {clash[0]}, which is still true then"
    return None
