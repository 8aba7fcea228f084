"""FAKE judge for tests: it answers from a table of texts, and records every call.

Tests of the pipeline, reconciliation and the block need a judge whose answers they
choose; the learned judge (``learned.py``) is tested on its own. A text not in the
table gets ``default`` (a durable fact about the user with no slot unless told
otherwise), so a test names only the texts it is about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...slots import USER, Judgement, Utterance


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


@dataclass(frozen=True, slots=True)
class JudgeCall:
    texts: tuple[str, ...]
    vectors_given: bool


@dataclass
class ScriptedJudge:
    """FAKE judge. ``table``: text (whitespace and case folded) → its judgement."""

    table: Mapping[str, Judgement] = field(default_factory=dict)
    default: Judgement = field(default_factory=lambda: Judgement(Utterance.FACT, USER, None))
    name: str = "scripted-fake"
    calls: list[JudgeCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_key = {_key(text): judgement for text, judgement in self.table.items()}

    def judge(self, texts: Sequence[str], *, vectors: np.ndarray | None = None) -> list[Judgement]:
        if vectors is not None and len(vectors) != len(texts):
            raise ValueError(f"{len(vectors)} vectors for {len(texts)} texts")
        self.calls.append(JudgeCall(tuple(texts), vectors is not None))
        return [self._by_key.get(_key(text), self.default) for text in texts]

    @property
    def judged(self) -> list[str]:
        """Every text judged, in order."""
        return [text for call in self.calls for text in call.texts]


def fact(slot: str | None = None, subject: str = USER, confidence: float = 0.95) -> Judgement:
    """A durable fact (for building tables)."""
    return Judgement(Utterance.FACT, subject, slot, confidence)


def change(slot: str | None = None, subject: str = USER, confidence: float = 0.95) -> Judgement:
    return Judgement(Utterance.CHANGE, subject, slot, confidence)


def not_durable(utterance: Utterance, confidence: float = 0.95) -> Judgement:
    """Chatter, a question, a request, a passing state, pasted text, a forget."""
    return Judgement(utterance, USER, None, confidence)
