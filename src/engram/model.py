"""Frozen value objects shared by every layer: scopes, records, versions, hits, audit."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from .errors import ConfigError, InvalidScopeError, InvalidValueError
from .slots import OTHER_PREFIX, TEAM, USER, Slot, is_other

MAX_LABEL_CHARS = 256
MAX_NAMESPACE_DEPTH = 16


class Kind(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    RULE = "rule"
    CONCLUSION = "conclusion"
    TODO = "todo"
    EPISODE = "episode"
    FILE = "file"


class Status(StrEnum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    DELETED = "deleted"


class Sensitivity(StrEnum):
    NORMAL = "normal"
    PERSONAL = "personal"  # PII: names, contacts
    SECRET = "secret"  # credentials, health, finance: never shown unless asked


class Operation(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    FORGET = "forget"
    RESTORE = "restore"
    EXPIRE = "expire"
    PURGE = "purge"
    RECALL = "recall"
    IMPORT = "import"
    REINDEX = "reindex"
    EXTRACT = "extract"  # one add(): what the extractor proposed and what was done
    # governance (engram.governance)
    PROPOSE = "propose"  # a change matched an approval rule and waits for a reviewer
    APPROVE = "approve"  # a reviewer approved it (the change itself is audited as what it is)
    REJECT = "reject"  # a reviewer rejected it, or it expired unreviewed
    REVIEW = "review"  # a reviewer judged a sampled write (write accuracy)
    REVEAL = "reveal"  # encrypted personal data was shown to an authorised reader
    REKEY = "rekey"  # encrypted values re-encrypted with the current key (a new version)


def parse_enum(enum: type[StrEnum], value: Any, what: str) -> Any:
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(member.value for member in enum)
        raise InvalidValueError(f"unknown {what} {value!r}; expected one of: {allowed}") from None


def check_unit_interval(value: Any, what: str) -> float:
    """Importance and confidence live in [0, 1]; NaN, inf and strings are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidValueError(f"{what} must be a number in [0, 1], got {value!r}")
    number = float(value)
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise InvalidValueError(f"{what} must be in [0, 1], got {value!r}")
    return number


# Characters no label may hold anywhere: controls, zero-width and other invisible
# format characters (U+200B, U+200D, U+FEFF, U+00AD, bidi marks), lone surrogates,
# private-use characters and line/paragraph separators.
FORBIDDEN_IN_LABELS = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


def check_scope(scope: Any) -> None:
    if not isinstance(scope, Scope):
        raise InvalidValueError(f"scope must be an engram.Scope, got {type(scope).__name__}")


def canonical_label(label: str) -> str:
    """The form a label must already have: Unicode NFKC without leading or trailing whitespace."""
    return (label if label.isascii() else unicodedata.normalize("NFKC", label)).strip()


def check_label(label: Any, what: str = "namespace label") -> str:
    """A tenant or namespace label, refused unless it is already in its one canonical form:
    Unicode NFKC (no full-width or other compatibility variants) without leading or trailing
    whitespace, and no invisible or control character anywhere. Never mapped silently:
    "ａｌｉｃｅ" and "alice " are refused, not read as "alice", so two sign-up names that
    look alike are never one user (docs/CONCEPTS.md, Scopes)."""
    if not isinstance(label, str):
        raise InvalidScopeError(f"{what} must be a string, got {type(label).__name__}")
    if any(unicodedata.category(ch) in FORBIDDEN_IN_LABELS for ch in label):
        raise InvalidScopeError(
            f"{what} {label!r} contains a control character, an invisible (zero-width or format) character "
            "or a lone surrogate")
    canonical = canonical_label(label)
    if not canonical:
        raise InvalidScopeError(f"{what} must not be empty")
    if len(label) > MAX_LABEL_CHARS:
        raise InvalidScopeError(f"{what} is longer than {MAX_LABEL_CHARS} characters")
    if canonical != label:
        raise InvalidScopeError(
            f"{what} {label!r} is not in canonical form (Unicode NFKC, no leading or trailing whitespace); "
            "engram refuses it rather than reading it as another label")
    return label


def tenant_in_config(name: Any, where: str) -> str:
    """A tenant named in a configuration file (PII policy, approval rules), held to the same
    canonical form as every Scope: "ａｃｍｅ " in a file is refused, never read as "acme"."""
    try:
        return check_label(name, "tenant")
    except InvalidScopeError as exc:
        raise ConfigError(f"{where}: {exc}") from None


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a memory lives: a required tenant and a namespace path of labels.

    Namespaces match segment by segment: ("users", "alice") never sees
    ("users", "alice", "private") or ("users", "alice2") unless a search asks
    for the prefix explicitly.
    """

    tenant: str
    namespace: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tenant", check_label(self.tenant, "tenant"))
        if isinstance(self.namespace, str):
            raise InvalidScopeError("namespace must be a tuple of labels, not a string")
        namespace = tuple(self.namespace)
        if len(namespace) > MAX_NAMESPACE_DEPTH:
            raise InvalidScopeError(f"namespace is deeper than {MAX_NAMESPACE_DEPTH} labels")
        object.__setattr__(self, "namespace", tuple(check_label(label) for label in namespace))

    @classmethod
    def for_user(cls, tenant: str, user: str, *, agent: str | None = None) -> Scope:
        if agent is None:
            return cls(tenant, ("users", user))
        return cls(tenant, ("agents", agent, "users", user))

    @classmethod
    def for_agent(cls, tenant: str, agent: str) -> Scope:
        return cls(tenant, ("agents", agent))

    @classmethod
    def for_org(cls, tenant: str, org: str) -> Scope:
        return cls(tenant, ("orgs", org))

    def child(self, *labels: str) -> Scope:
        return Scope(self.tenant, self.namespace + tuple(labels))

    def contains(self, other: Scope) -> bool:
        """True when ``other`` is this scope or nested below it (prefix match)."""
        return (
            other.tenant == self.tenant
            and other.namespace[: len(self.namespace)] == self.namespace
        )

    def __str__(self) -> str:
        return "/".join((self.tenant, *self.namespace))


@dataclass(frozen=True, slots=True)
class Source:
    """Where a memory came from."""

    actor: str = "user"
    thread_id: str | None = None
    message_id: str | None = None
    # What the memory was said in reply to (the other side's question, as text).
    # Searched together with the content, so "Berlin." answers "where does she live?".
    reply_to: str | None = None


# The moments engram stores and compares, in UTC: the whole proleptic Gregorian calendar
# Python can hold, to the second, so that every stored moment reads back on both backends
# (SQLite keeps epoch seconds as a double, which rounds 9999-12-31T23:59:59.999999 up
# to year 10000) and "a moment later" never leaves the calendar.
EARLIEST_MOMENT = datetime(1, 1, 1, tzinfo=UTC)
LATEST_MOMENT = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def utc(moment: datetime, what: str = "datetime") -> datetime:
    """The one way a datetime enters engram: timezone-aware, converted to UTC, within the
    calendar engram keeps. ``0001-01-01T00:00:00+14:00`` (the year 0 in UTC) and
    ``9999-12-31T23:59:59-14:00`` (the year 10000) are InvalidValueError, not OverflowError."""
    if not isinstance(moment, datetime):
        raise InvalidValueError(f"{what} must be a timezone-aware datetime, got {type(moment).__name__}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise InvalidValueError(f"{what} {moment.isoformat()} has no timezone; pass an aware datetime")
    try:
        converted = moment.astimezone(UTC)
    except (OverflowError, ValueError):
        converted = None
    if converted is None or not EARLIEST_MOMENT <= converted <= LATEST_MOMENT:
        raise InvalidValueError(
            f"{what} {moment.isoformat()} is outside the calendar engram keeps: from "
            f"{EARLIEST_MOMENT.isoformat()} to {LATEST_MOMENT.isoformat()} in UTC")
    return converted


SUBJECT_LIMIT = 120


def check_subject(subject: Any) -> str:
    """``user``, ``team`` or ``other:<relation and/or name>`` (slots.py)."""
    if not isinstance(subject, str) or not subject or len(subject) > SUBJECT_LIMIT:
        raise InvalidValueError(f"subject must be 'user', 'team' or 'other:<who>' (at most {SUBJECT_LIMIT} "
                                f"characters), got {subject!r}")
    if subject in (USER, TEAM) or (is_other(subject) and subject[len(OTHER_PREFIX):].strip()):
        return subject
    raise InvalidValueError(f"subject must be 'user', 'team' or 'other:<who>', got {subject!r}")


def check_slot(slot: Any) -> str | None:
    """None or one of the slots of slots.Slot."""
    if slot is None:
        return None
    try:
        return Slot(slot).value
    except ValueError:
        names = ", ".join(s.value for s in Slot)
        raise InvalidValueError(f"slot must be null or one of {names}; got {slot!r}") from None


def freeze_mapping(data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(data or {}))


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    id: str
    scope: Scope
    kind: Kind
    content: str
    importance: float
    confidence: float
    created_at: datetime
    updated_at: datetime
    valid_from: datetime
    category: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    sensitivity: Sensitivity = Sensitivity.NORMAL
    status: Status = Status.ACTIVE
    version: int = 1
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    last_accessed_at: datetime | None = None
    access_count: int = 0
    source: Source = field(default_factory=Source)
    embedding_model: str | None = None
    read_only: bool = False
    supersedes: str | None = None
    superseded_by: str | None = None
    # the user's profile (what context() always gives first): True pins the memory into it,
    # False keeps it out, None lets engram decide from kind, category, importance and content
    pinned: bool | None = None
    # who the memory is about ("user", "team", "other:wife sarah") and which slot of theirs it
    # sets (slots.Slot values; None: none); a new value of a single-valued slot of the same
    # subject ends the older one (slots.py)
    subject: str = "user"
    slot: str | None = None

    @property
    def indexed_text(self) -> str:
        """What search indexes (lexically and as a vector): the content, preceded
        by the question it answers when it was said in reply to one."""
        return f"{self.source.reply_to}\n{self.content}" if self.source.reply_to else self.content

    def is_valid_at(self, moment: datetime) -> bool:
        """Active and not yet ended at ``moment`` (what reads of the present show)."""
        if self.status is not Status.ACTIVE:
            return False
        if self.valid_to is not None and moment >= self.valid_to:
            return False
        return self.expires_at is None or moment < self.expires_at

    def held_at(self, moment: datetime) -> bool:
        """Inside its validity window at ``moment`` and not deleted (as-of reads): a
        superseded or expired record held before it ended; at the present its window
        has closed, so only active records pass."""
        if self.status is Status.DELETED or self.valid_from > moment:
            return False
        if self.valid_to is not None and moment >= self.valid_to:
            return False
        return self.expires_at is None or moment < self.expires_at


def seen_at(record: MemoryRecord, moment: datetime) -> MemoryRecord:
    """A record as reads show it at ``moment``: an active record whose validity has
    ended (``valid_to`` or ``expires_at`` passed) is shown expired, as search treats
    it; maintenance later writes that state as a version of its own."""
    if record.status is Status.ACTIVE and not record.is_valid_at(moment):
        return replace(record, status=Status.EXPIRED)
    return record


@dataclass(frozen=True, slots=True)
class Version:
    """One immutable snapshot of a record, with who changed it, when and why."""

    record_id: str
    version: int
    operation: Operation
    actor: str
    at: datetime
    reason: str | None
    record: MemoryRecord | None  # None once the record was purged


@dataclass(frozen=True, slots=True)
class AuditEvent:
    id: int
    tenant: str
    at: datetime
    actor: str
    operation: Operation
    record_id: str | None
    version: int | None
    namespace: tuple[str, ...] = ()
    source_message_id: str | None = None
    detail: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def _signal(default: float, doc: str) -> Any:
    """A field of ``Signals`` with its description (the HTTP schema shows it)."""
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True, slots=True)
class Signals:
    """Why a hit came back: each signal in [0, 1] before weighting.

    The JSON shape (``engram.shapes.signals_data``) and the HTTP schema
    (``server/responses.py``, ``SignalsOut``) are read off these fields, each field's
    ``doc`` its description: a new signal is added here, in ``search/retrieve.py`` and
    in ``config.py`` only (docs/ARCHITECTURE.md)."""

    lexical: float = _signal(0.0, "the BM25 score over the best one in the pool, in [0, 1]")
    vector: float = _signal(0.0, "the cosine to the query vector, clipped to [0, 1]")
    relevance: float = _signal(0.0, "lexical and vector fused (and lifted by neighbours, thread, time)")
    recency: float = _signal(0.0, "0.5 ** (age in days / half-life)")
    importance: float = _signal(0.0, "the record's importance")
    validity: float = _signal(1.0, "1 while the record is valid now, else 0 (multiplies the score)")
    overlap: float = _signal(
        0.0, "share of distinct content terms shared with the query, over the shorter side; with the raw "
             "cosine it decides the relevance floor of context()")


@dataclass(frozen=True, slots=True)
class SearchHit:
    record: MemoryRecord
    score: float
    signals: Signals


@dataclass(frozen=True, slots=True)
class Page:
    items: tuple[MemoryRecord, ...]
    next_offset: int | None


@dataclass(frozen=True, slots=True)
class PurgeReport:
    """What a purge removed, and whether any byte of it is still in the database files
    (``residue``: None when nothing is; else what still holds it and what finishes it,
    e.g. a reader holding the SQLite WAL, or PostgreSQL's dead rows until VACUUM FULL)."""

    records: int
    residue: str | None = None

    @property
    def complete(self) -> bool:
        return self.residue is None


@dataclass(frozen=True, slots=True)
class Stats:
    records: int
    active: int
    by_status: Mapping[str, int]
    by_kind: Mapping[str, int]
    versions: int
    audit_events: int
    tenants: int
    embedding_models: Mapping[str, int]
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def as_tags(tags: Sequence[str] | None) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str):
        raise InvalidValueError("tags must be a list of strings, not a single string")
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip():
            raise InvalidValueError(f"tag {tag!r} must be a non-empty string")
    return tuple(dict.fromkeys(tags))


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation turn handed to ``Memory.add``."""

    role: str  # "user", "assistant", "system", "tool"
    content: str
    id: str | None = None
    name: str | None = None  # the speaker's name where the transcript has one
    at: datetime | None = None


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    PARKED = "parked"  # failed too often; kept with its error for a person to look at


@dataclass(frozen=True, slots=True)
class Job:
    """A durable background add(): survives restarts, retried with backoff."""

    id: str
    tenant: str
    status: JobStatus
    payload: Mapping[str, Any]
    attempts: int
    max_attempts: int
    next_attempt_at: datetime
    created_at: datetime
    updated_at: datetime
    last_error: str | None = None
    result: Mapping[str, Any] | None = None
