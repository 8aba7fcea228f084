"""Frozen value objects of episodic memory: threads, their turns, and what a write
batch carries for them (``EpisodeWrites``), plus the per-scope consolidation
watermark moves."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class TurnDraft:
    """One conversation turn to store (already screened by the PII policy). The
    store gives it its sequence number (per tenant, in commit order)."""

    namespace: tuple[str, ...]
    thread_id: str
    role: str
    content: str
    at: datetime
    message_id: str | None = None
    name: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=_empty)  # pii_encrypted tokens, surface, …
    terms: str = ""  # lexical terms of the screened text: the write core fills them in


@dataclass(frozen=True, slots=True)
class Turn:
    """A stored turn. ``seq`` orders every turn of a tenant in commit order: the
    consolidation watermark is a ``seq``."""

    tenant: str
    seq: int
    namespace: tuple[str, ...]
    thread_id: str
    role: str
    content: str
    at: datetime
    message_id: str | None = None
    name: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=_empty)
    terms: str = ""


@dataclass(frozen=True, slots=True)
class Thread:
    """A conversation: who it belongs to (its namespace), when it ran, how many turns
    it has and, once summarised, the ``episode`` memory that tells it."""

    tenant: str
    namespace: tuple[str, ...]
    id: str
    started_at: datetime
    last_at: datetime
    turns: int
    metadata: Mapping[str, Any] = field(default_factory=_empty)
    episode_id: str | None = None
    summarized_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class TurnVector:
    """An embedding computed later (lazily) for a stored turn."""

    seq: int
    model: str
    vector: Any  # np.ndarray (float32)


@dataclass(frozen=True, slots=True)
class EpisodeLink:
    """A thread summarised into an episode memory."""

    namespace: tuple[str, ...]
    thread_id: str
    episode_id: str
    at: datetime


@dataclass(frozen=True, slots=True)
class WatermarkMove:
    """Compare-and-swap of a scope's consolidation watermark: from ``expected`` (the
    last turn consolidated when the run read) to ``to``. Another run having moved it
    meanwhile makes the whole batch a ConflictError, so nothing is written twice."""

    namespace: tuple[str, ...]
    expected: int
    to: int
    at: datetime


@dataclass(frozen=True, slots=True)
class EpisodeWrites:
    """The episode rows one batch writes, in the same transaction as its records."""

    turns: tuple[TurnDraft, ...] = ()
    thread_metadata: tuple[tuple[tuple[str, ...], str, Mapping[str, Any]], ...] = ()  # (namespace, thread, meta)
    vectors: tuple[TurnVector, ...] = ()
    episodes: tuple[EpisodeLink, ...] = ()
    watermarks: tuple[WatermarkMove, ...] = ()
    drop_before: datetime | None = None  # retention: turns older than this go (and threads left empty)

    @property
    def empty(self) -> bool:
        return not (self.turns or self.thread_metadata or self.vectors or self.episodes or self.watermarks
                    or self.drop_before is not None)


@dataclass(frozen=True, slots=True)
class TurnQuery:
    """Which turns of one tenant a read returns, in ``seq`` order."""

    namespace: tuple[str, ...]
    descendants: bool = False
    thread_id: str | None = None
    after_seq: int = 0  # exclusive
    upto_seq: int | None = None  # inclusive
    seqs: tuple[int, ...] | None = None
    without_vector: str | None = None  # only turns with no vector of this model
    limit: int = 1000
    newest_first: bool = False


@dataclass(frozen=True, slots=True)
class ThreadQuery:
    namespace: tuple[str, ...]
    descendants: bool = False
    ids: tuple[str, ...] | None = None
    idle_before: datetime | None = None  # last turn before this moment
    unsummarized: bool = False  # no episode yet, or turns added since it was written
    limit: int = 100
