"""A mem0-compatible entry point: ``from engram.compat.mem0 import Memory``.

For code written against mem0's open-source ``Memory``: the same methods, arguments
and result shapes (``{"results": [{"id", "memory", "event", ...}]}``), on engram's
store, pipeline, versions and audit. Both mem0 styles are accepted: ids as keywords
(``search(query, user_id="alice")``, mem0 1.x) and in ``filters``
(``search(query, filters={"user_id": "alice"})``, mem0 2.x).

Scopes: ``user_id`` → ``users/<user>``; ``agent_id`` → ``agents/<agent>``; both →
``agents/<agent>/users/<user>`` (as ``Scope.for_user(agent=...)``); ``run_id`` adds
``runs/<run>`` below. Reads by user (or agent) include their runs. Events: engram's
ADD, UPDATE and NOOP are mem0's ADD, UPDATE and NONE; a SUPERSEDE (the old fact is no
longer true) is shown as mem0 shows a contradiction: DELETE of the old memory, then
ADD of the new one (engram keeps the old one's history). SKIPPED is left out, as mem0
leaves out what it does not store.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from .. import Memory as EngramMemory
from ..errors import InvalidValueError, NotFoundError
from ..model import MemoryRecord, Operation, Scope, Status, Version

DEFAULT_TENANT = "default"
ENTITY_KEYS = ("user_id", "agent_id", "run_id")
_OPS = {"eq": "$eq", "ne": "$ne", "gt": "$gt", "gte": "$gte", "lt": "$lt", "lte": "$lte"}
_EVENTS = {Operation.CREATE: "ADD", Operation.IMPORT: "ADD", Operation.UPDATE: "UPDATE",
           Operation.RESTORE: "UPDATE", Operation.REINDEX: "UPDATE"}
# engram's add() takes no metadata: the metadata of a mem0 add() is written as a second
# version right after; history() folds it into the ADD, as mem0 shows one step.
ADD_METADATA = "mem0 add() metadata"


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
            run_id: str | None = None, metadata: Mapping[str, Any] | None = None, infer: bool = True,
            **_: Any) -> dict[str, Any]:
        scope = self._scope(user_id, agent_id, run_id)
        turns = _messages(messages)
        if not infer:
            return {"results": self._add_raw(turns, scope, metadata)}
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
        if metadata:
            for item in results:
                if item["event"] != "DELETE":
                    self._merge_metadata(item["id"], metadata)
        return {"results": results}

    def _add_raw(self, turns: list[dict[str, Any]], scope: Scope,
                 metadata: Mapping[str, Any] | None) -> list[dict[str, Any]]:
        results = []
        for turn in turns:
            if turn.get("role") == "system" or not turn.get("content"):
                continue
            data = {**dict(metadata or {}), "role": turn["role"]}
            if turn.get("name"):
                data["actor_id"] = turn["name"]
            record = self.memory.remember(turn["content"], scope, metadata=data, actor="mem0")
            results.append({"id": record.id, "memory": record.content, "event": "ADD",
                            "actor_id": turn.get("name"), "role": turn["role"]})
        return results

    def update(self, memory_id: str, data: str | None = None, *, text: str | None = None,
               metadata: Mapping[str, Any] | None = None) -> dict[str, str]:
        content = text if text is not None else data
        if content is None and metadata is None:
            raise ValueError("At least one of text, metadata, or expiration_date must be provided.")
        record = self._record(memory_id)
        changes: dict[str, Any] = {}
        if content is not None:
            changes["content"] = content
        if metadata is not None:
            changes["metadata"] = {**dict(record.metadata), **dict(metadata)}
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
            record = self._record(memory_id)
        except NotFoundError:
            return None
        return _item(record) if record.status is Status.ACTIVE else None

    def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                filters: Mapping[str, Any] | None = None, limit: int | None = None, top_k: int | None = None,
                **_: Any) -> dict[str, Any]:
        scope, metadata = self._scope_and_filters(user_id, agent_id, run_id, filters)
        count = limit or top_k or 100
        page = self.memory.list(scope, limit=count, include_descendants=True, metadata=metadata or None)
        return {"results": [{key: value for key, value in _item(r).items() if key != "score"} for r in page.items]}

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, limit: int | None = None, top_k: int | None = None,
               filters: Mapping[str, Any] | None = None, threshold: float | None = None,
               **_: Any) -> dict[str, Any]:
        scope, metadata = self._scope_and_filters(user_id, agent_id, run_id, filters)
        hits = self.memory.search(query, scope, k=limit or top_k or 100, include_descendants=True,
                                  metadata=metadata or None, min_score=threshold or 0.0)
        return {"results": [_item(hit.record, score=hit.score) for hit in hits]}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        record = self._record(memory_id)
        versions = self.memory.history(record.id, Scope(self.tenant))
        out, previous = [], None
        for version in versions:
            if version.reason == ADD_METADATA:
                continue
            content = version.record.content if version.record else None
            deleted = version.operation not in _EVENTS
            out.append({"id": f"{record.id}:{version.version}", "memory_id": record.id, "old_memory": previous,
                        "new_memory": None if deleted else content,
                        "event": "DELETE" if deleted else _EVENTS[version.operation],
                        "created_at": record.created_at.isoformat(), "updated_at": version.at.isoformat(),
                        "is_deleted": deleted, "actor_id": version.actor, "role": None})
            previous = content
        return out

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
        given = dict(filters or {})
        ids = {key: given.pop(key, None) for key in ENTITY_KEYS}
        scope = self._scope(user_id or ids["user_id"], agent_id or ids["agent_id"], run_id or ids["run_id"])
        return scope, _metadata_filter(given)

    def _record(self, memory_id: str) -> MemoryRecord:
        return self.memory.get(memory_id, Scope(self.tenant))

    def _version(self, record_id: str | None, number: int) -> str | None:
        if record_id is None:
            return None
        versions: Sequence[Version] = self.memory.history(record_id, Scope(self.tenant))
        found = next((v for v in versions if v.version == number), None)
        return found.record.content if found and found.record else None

    def _merge_metadata(self, record_id: str, metadata: Mapping[str, Any]) -> None:
        record = self._record(record_id)
        if any(record.metadata.get(key) != value for key, value in metadata.items()):
            self.memory.update(record_id, Scope(self.tenant), metadata={**dict(record.metadata), **dict(metadata)},
                               actor="mem0", reason=ADD_METADATA)

    def _all(self, scope: Scope) -> list[MemoryRecord]:
        return list(self.memory.scan(scope, include_descendants=True))

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _messages(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, Mapping):
        return [dict(messages)]
    if isinstance(messages, list):
        return [dict(m) for m in messages]
    raise ValueError("messages must be str, dict, or list[dict]")


def _metadata_filter(filters: Mapping[str, Any]) -> dict[str, Any]:
    """mem0's ``{"key": value}`` and ``{"key": {"gte": 3}}`` as engram's metadata filter."""
    out: dict[str, Any] = {}
    for key, condition in filters.items():
        if key in ("AND", "OR", "NOT") or (isinstance(condition, Mapping) and set(condition) - set(_OPS)):
            raise InvalidValueError(f"filter {key!r}: engram's mem0 layer supports equality and "
                                    f"{', '.join(_OPS)} on metadata")
        out[key] = {_OPS[op]: value for op, value in condition.items()} if isinstance(condition, Mapping) \
            else condition
    return out


def _item(record: MemoryRecord, *, score: float | None = None) -> dict[str, Any]:
    """mem0's MemoryItem: id, memory, hash, metadata, score, created_at, updated_at,
    plus the entity ids the memory was added with."""
    metadata = {k: v for k, v in record.metadata.items() if k not in ("role", "actor_id")}
    item: dict[str, Any] = {
        "id": record.id, "memory": record.content, "hash": hashlib.md5(record.content.encode()).hexdigest(),
        "metadata": metadata or None, "score": score, "created_at": record.created_at.isoformat(),
        "updated_at": record.updated_at.isoformat(),
    }
    labels = record.scope.namespace
    for key, label in (("agent_id", "agents"), ("user_id", "users"), ("run_id", "runs")):
        if label in labels[:-1]:
            item[key] = labels[labels.index(label) + 1]
    for key in ("role", "actor_id"):
        if key in record.metadata:
            item[key] = record.metadata[key]
    return item
