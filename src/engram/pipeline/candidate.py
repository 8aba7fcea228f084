"""A fact proposed by an extractor, before gating and reconciliation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..model import Kind

ASKED = "asked"  # metadata: the candidate was told inside a request or a question (pipeline/judging.py)


@dataclass(frozen=True, slots=True)
class Candidate:
    kind: Kind
    content: str  # one self-contained statement, in the speaker's language
    confidence: float  # how sure the extractor is that this was said and meant
    importance: float  # how much it matters to remember
    source_message_ids: tuple[str, ...] = ()
    category: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    extractor: str = "rules"  # which extractor proposed it ("rules", "llm:<model>")
    ends: tuple[str, ...] = ()  # what a change says is no longer so ("Marchmont" in "left the Marchmont flat")
    # who it is about (engram.slots: "user", "team", "other:wife sarah") and the slot it sets; None: not
    # yet known (the judge fills them; values an extractor gives win)
    subject: str | None = None
    slot: str | None = None
    said: str | None = None  # the user's own sentence it was read from (what the judge reads), when known
