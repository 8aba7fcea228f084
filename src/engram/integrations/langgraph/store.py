"""EngramStore: LangGraph's BaseStore over engram.

Each item is one engram record in the namespace it names (tenant fixed per
store), tagged ``langgraph-item``; the item's value lives in the record's
metadata, the indexed fields' text is the record's content, so ``search(query=…)``
runs engram's hybrid retrieval (BM25 ∥ vectors) and returns its scores.
Differences from InMemoryStore/SqliteStore are listed in docs/INTEGRATIONS.md.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any, Literal, cast

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    tokenize_path,
)

from ...aio import AsyncMemory
from ...errors import ConflictError, InvalidValueError
from ...limits import check_storable_text
from ...memory import Memory
from ...model import Kind, MemoryRecord, Scope, Status, parse_enum
from .._slots import Slots, SlotValue
from ._filters import check_namespace, literal_prefix, matches, namespace_matches, split_filter

ITEM_TAG = "langgraph-item"
SPACE = "langgraph"
_PAGE = 200


def readable_text(value: Any) -> str:
    """The whole value as the text a reader sees: its one string when it has one
    (LangMem's ``{"content": "…"}`` is stored as "…"), else ``path: text`` lines of its
    leaves, never its JSON."""
    leaves = list(_leaves(value, ()))
    if len(leaves) == 1:
        return leaves[0][1]
    return "\n".join(f"{'.'.join(path)}: {text}" if path else text for path, text in leaves)


def _leaves(value: Any, path: tuple[str, ...]) -> Iterable[tuple[tuple[str, ...], str]]:
    if isinstance(value, Mapping):
        for key, child in value.items():
            yield from _leaves(child, (*path, str(key)))
    elif isinstance(value, (list, tuple)):
        for child in value:
            yield from _leaves(child, path)
    elif isinstance(value, str):
        if value.strip():
            yield path, value
    elif value is not None:
        yield path, json.dumps(value)


class EngramItem(Item):
    """A LangGraph Item that also carries its engram version (for compare-and-swap)."""

    __slots__ = ("version",)

    def __init__(self, *, version: int, **fields: Any) -> None:
        super().__init__(**fields)
        self.version = version


class EngramSearchItem(SearchItem):
    __slots__ = ("version",)

    def __init__(self, *, version: int, **fields: Any) -> None:
        super().__init__(**fields)
        self.version = version


class EngramStore(BaseStore):
    """A LangGraph ``BaseStore`` backed by engram: persistent, versioned, audited,
    segment-exact namespaces, hybrid search, TTL and compare-and-swap puts.

        memory = Memory.open("memory.db")
        store = EngramStore(memory, tenant="acme", index={"fields": ["text"]})
        graph = builder.compile(store=store)

    ``index`` takes LangGraph's IndexConfig; only ``fields`` is used (engram embeds
    with its own embedder, so ``dims``/``embed`` are ignored). Without it the whole
    value is indexed, so semantic search always works.
    """

    supports_ttl = True

    def __init__(
        self,
        memory: Memory | AsyncMemory,
        *,
        tenant: str = "default",
        index: IndexConfig | Mapping[str, Any] | None = None,
        ttl: TTLConfig | None = None,
        kind: Kind | str = Kind.FACT,
        actor: str = "langgraph",
    ) -> None:
        Scope(tenant)  # validates the tenant label
        if isinstance(memory, AsyncMemory):  # its sync Memory: the store runs async ops off-thread itself
            memory = memory.sync
        elif not isinstance(memory, Memory):
            raise InvalidValueError(f"EngramStore takes an engram Memory or AsyncMemory, got {type(memory).__name__}")
        self.memory = memory
        self.tenant = tenant
        self.index_config = dict(index) if index else None
        fields = (self.index_config or {}).get("fields") or ["$"]
        self._fields = [(path, path if path == "$" else tokenize_path(path)) for path in fields]
        self.ttl_config = ttl
        self.kind = parse_enum(Kind, kind, "kind")
        self.actor = actor
        self._slots = Slots(memory, SPACE)
        self._sweeper: threading.Thread | None = None
        self._stop = threading.Event()

    # -- the public BaseStore surface (engram's label rules instead of "no dots") ----------

    def get(self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None) -> EngramItem | None:
        return cast(EngramItem | None, self.batch([GetOp(_tuple(namespace), str(key), self._refresh(refresh_ttl))])[0])

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """The items are EngramSearchItems (with their version)."""
        op = SearchOp(_tuple(namespace_prefix), filter, limit, offset, query, self._refresh(refresh_ttl))
        return cast(list[SearchItem], self.batch([op])[0])

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
        expected_version: int | None = None,
    ) -> None:
        """Store or replace an item. ``expected_version`` (from ``get(...).version``;
        0 = the key must not exist) makes it a compare-and-swap that raises
        ``engram.ConflictError`` when another writer got there first."""
        op = PutOp(_tuple(namespace), str(key), value, index=index, ttl=self._ttl(ttl))
        self._put(op, expected_version=expected_version, validate_root=True)

    def delete(self, namespace: tuple[str, ...], key: str, *, expected_version: int | None = None) -> None:
        self._put(PutOp(_tuple(namespace), str(key), None), expected_version=expected_version)

    def list_namespaces(
        self,
        *,
        prefix: tuple[str, ...] | None = None,
        suffix: tuple[str, ...] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        return cast(list[tuple[str, ...]], self.batch([_list_op(prefix, suffix, max_depth, limit, offset)])[0])

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> EngramItem | None:
        return await asyncio.to_thread(self.get, namespace, key, refresh_ttl=refresh_ttl)

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        return await asyncio.to_thread(
            self.search, namespace_prefix, query=query, filter=filter, limit=limit, offset=offset,
            refresh_ttl=refresh_ttl,
        )

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
        expected_version: int | None = None,
    ) -> None:
        await asyncio.to_thread(self.put, namespace, key, value, index, ttl=ttl, expected_version=expected_version)

    async def adelete(self, namespace: tuple[str, ...], key: str, *, expected_version: int | None = None) -> None:
        await asyncio.to_thread(self.delete, namespace, key, expected_version=expected_version)

    async def alist_namespaces(
        self,
        *,
        prefix: tuple[str, ...] | None = None,
        suffix: tuple[str, ...] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        return await asyncio.to_thread(
            self.list_namespaces, prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    # -- batch -------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops in order; each op is atomic on its own (a batch is not one
        transaction). Every op is checked first: a batch holding an invalid one (bad
        namespace, value, TTL, filter, unknown op) is refused whole, before any op
        runs, as LangGraph's own stores do. Safe from any thread, including beside a
        running event loop."""
        ops = list(ops)
        for op in ops:
            self._check(op)
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(cast(list[SearchItem], self._search(op)))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise InvalidValueError(f"Unknown operation type: {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    # -- operations --------------------------------------------------------------------------

    def _get(self, op: GetOp) -> EngramItem | None:
        scope = Scope(self.tenant, check_namespace(op.namespace))
        now = self.memory.clock.now()
        record = self._slots.live(scope, str(op.key), now)
        if record is None or ITEM_TAG not in record.tags:
            return None
        if op.refresh_ttl:
            record = self._refresh_ttl(record, now)
        return _item(record)

    def _check(self, op: Op) -> None:
        """What running ``op`` would refuse, refused without running it."""
        if isinstance(op, GetOp):
            check_namespace(op.namespace)
        elif isinstance(op, SearchOp):
            check_namespace(op.namespace_prefix)
            split_filter(op.filter)
        elif isinstance(op, PutOp):
            self._checked_put(op)
        elif isinstance(op, ListNamespacesOp):
            for condition in op.match_conditions or ():
                check_namespace(condition.path, wildcards=True)
        else:
            raise InvalidValueError(f"Unknown operation type: {type(op).__name__}")

    def _checked_put(self, op: PutOp, *, validate_root: bool = False) -> Scope:
        # like LangGraph, only put() refuses an empty namespace or the "langgraph" root, never batch()
        scope = Scope(self.tenant, check_namespace(op.namespace, for_write=validate_root))
        if op.value is None:
            return scope
        if not isinstance(op.value, Mapping):
            raise InvalidValueError(f"value must be a mapping (dict), got {type(op.value).__name__}")
        if any(not isinstance(k, str) for k in op.value):
            raise InvalidValueError("value keys must be strings")
        try:
            json.dumps(dict(op.value), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidValueError(f"value must be JSON-serializable (no NaN): {exc}") from None
        check_storable_text(dict(op.value), "value")  # NUL, lone surrogates: what no backend stores
        _check_ttl(op.ttl)
        return scope

    def _put(self, op: PutOp, *, expected_version: int | None = None, validate_root: bool = False) -> None:
        scope = self._checked_put(op, validate_root=validate_root)
        key = str(op.key)
        if op.value is None:
            self._slots.delete(scope, key, actor=self.actor, expected_version=expected_version)
            return
        self._slots.put(scope, key, self._slot_value(op), actor=self.actor, expected_version=expected_version)

    def _slot_value(self, op: PutOp) -> SlotValue:
        now = self.memory.clock.now()
        value = dict(op.value or {})
        text = self._index_text(value, op.index)
        ttl = _check_ttl(op.ttl)
        meta = {"key": str(op.key), "value": value, "indexed": text is not None, "ttl": ttl,
                "updated_at": now.isoformat()}
        content = text if text is not None else str(op.key) or "(item)"
        limit = self.memory.settings.max_content_chars
        return SlotValue(
            content=content[:limit] if content.strip() else "(item)",
            metadata={"langgraph": meta},
            kind=self.kind,
            tags=(ITEM_TAG,),
            expires_at=now + timedelta(minutes=ttl) if ttl is not None else None,
        )

    def _index_text(self, value: dict[str, Any], index: Literal[False] | list[str] | None) -> str | None:
        if index is False:
            return None
        paths = self._fields if index is None else [(p, p if p == "$" else tokenize_path(p)) for p in index]
        texts = [text for path, tokens in paths
                 for text in ([readable_text(value)] if path == "$" else get_text_at_path(value, tokens))
                 if text and text.strip()]
        return "\n".join(texts) if texts else None

    def _search(self, op: SearchOp) -> list[EngramSearchItem]:
        scope = Scope(self.tenant, check_namespace(op.namespace_prefix))
        if op.limit <= 0 or op.offset < 0:
            return []
        sql_filter, python_filter = split_filter(op.filter)
        now = self.memory.clock.now()
        found: list[tuple[MemoryRecord, float | None]]
        if isinstance(op.query, str) and op.query.strip():
            found = list(self._ranked(op, op.query, scope, sql_filter, python_filter))
        else:
            found = [(record, None) for record in self._listed(op, scope, sql_filter, python_filter)]
        out = []
        for record, score in found:
            if op.refresh_ttl:
                record = self._refresh_ttl(record, now)
            out.append(_item(record, score=score))
        return out

    def _ranked(
        self, op: SearchOp, query: str, scope: Scope, sql_filter: dict[str, Any], python_filter: dict[str, Any]
    ) -> list[tuple[MemoryRecord, float]]:
        want = op.offset + op.limit
        k = max(want, 10)
        while True:
            hits = self.memory.search(query, scope, k=k, include_descendants=True, tags=[ITEM_TAG],
                                      metadata=sql_filter, diversify=False)  # items are keyed, not their text
            kept = [
                (hit.record, float(hit.score)) for hit in hits
                if hit.record.metadata["langgraph"].get("indexed", True)
                and matches(_value(hit.record), python_filter)
            ]
            if len(kept) >= want or len(hits) < k:
                return kept[op.offset : want]
            k *= 4

    def _listed(
        self, op: SearchOp, scope: Scope, sql_filter: dict[str, Any], python_filter: dict[str, Any]
    ) -> list[MemoryRecord]:
        filters: dict[str, Any] = {"include_descendants": True, "tags": [ITEM_TAG], "metadata": sql_filter}
        if not python_filter:
            return list(self.memory.list(scope, offset=op.offset, limit=op.limit, **filters).items)
        wanted = [r for r in self.memory.scan(scope, **filters) if matches(_value(r), python_filter)]
        return wanted[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = tuple(op.match_conditions or ())
        for condition in conditions:
            check_namespace(condition.path, wildcards=True)
        root = literal_prefix(conditions)
        found = set()
        for namespace in self.memory.scopes.namespaces(Scope(self.tenant, root)):
            if not all(namespace_matches(namespace, c) for c in conditions):
                continue
            if not self._has_items(namespace):
                continue
            found.add(namespace[: op.max_depth] if op.max_depth is not None else namespace)
        if op.limit <= 0 or op.offset < 0:
            return []
        return sorted(found)[op.offset : op.offset + op.limit]

    def _has_items(self, namespace: tuple[str, ...]) -> bool:
        return bool(self.memory.list(Scope(self.tenant, namespace), tags=[ITEM_TAG], limit=1).items)

    # -- TTL ---------------------------------------------------------------------------------

    def _refresh(self, refresh_ttl: bool | None) -> bool:
        if refresh_ttl is not None:
            return refresh_ttl
        return (self.ttl_config or {}).get("refresh_on_read", True)

    def _ttl(self, ttl: float | NotProvided | None) -> float | None:
        if isinstance(ttl, NotProvided):
            return (self.ttl_config or {}).get("default_ttl")
        return ttl

    def _refresh_ttl(self, record: MemoryRecord, now: datetime) -> MemoryRecord:
        """Push expires_at to now + ttl. Refreshes closer together than 1% of the
        TTL (at most a minute) are skipped, so reads do not write a version each."""
        ttl = record.metadata["langgraph"].get("ttl")
        if ttl is None or record.expires_at is None:
            return record
        target = now + timedelta(minutes=ttl)
        slack = timedelta(seconds=min(max(ttl * 0.6, 0.001), 60.0))
        if target - record.expires_at < slack:
            return record
        try:
            return self.memory.update(record.id, record.scope, actor=self.actor, reason="ttl refresh",
                                      expected_version=record.version, expires_at=target)
        except ConflictError:  # a writer got there first and set its own expiry
            return record

    def sweep_ttl(self) -> int:
        """Forget (soft-delete) every expired item of this tenant; returns how many."""
        scope = Scope(self.tenant)
        expired = [r for r in self.memory.scan(scope, include_descendants=True, tags=[ITEM_TAG],
                                               statuses=[Status.EXPIRED]) if r.expires_at is not None]
        for record in expired:
            try:
                self.memory.forget(record.id, record.scope, actor=self.actor, reason="ttl expired")
            except ConflictError:
                continue
        return len(expired)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> threading.Thread:
        """Sweep in a daemon thread every ``sweep_interval_minutes`` (TTLConfig's, else 5)."""
        if self._sweeper is not None and self._sweeper.is_alive():
            return self._sweeper
        interval = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        self._stop.clear()

        def loop() -> None:
            while not self._stop.wait(interval * 60):
                self.sweep_ttl()

        self._sweeper = threading.Thread(target=loop, name="engram-ttl-sweeper", daemon=True)
        self._sweeper.start()
        return self._sweeper

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        if self._sweeper is None:
            return True
        self._stop.set()
        self._sweeper.join(timeout)
        alive = self._sweeper.is_alive()
        if not alive:
            self._sweeper = None
        return not alive


def _list_op(
    prefix: tuple[str, ...] | None, suffix: tuple[str, ...] | None, max_depth: int | None, limit: int, offset: int
) -> ListNamespacesOp:
    conditions = []
    if prefix:
        conditions.append(MatchCondition(match_type="prefix", path=tuple(prefix)))
    if suffix:
        conditions.append(MatchCondition(match_type="suffix", path=tuple(suffix)))
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1):
        raise InvalidValueError(f"max_depth must be a positive integer, got {max_depth!r}")
    return ListNamespacesOp(match_conditions=tuple(conditions), max_depth=max_depth, limit=limit, offset=offset)


def _tuple(namespace: Any) -> tuple[str, ...]:
    return tuple(check_namespace(namespace))


def _check_ttl(ttl: Any) -> float | None:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0:
        raise InvalidValueError(f"ttl must be a positive number of minutes or None, got {ttl!r}")
    return float(ttl)


def _value(record: MemoryRecord) -> dict[str, Any]:
    return copy.deepcopy(dict(record.metadata["langgraph"]["value"]))


def _item(record: MemoryRecord, *, score: float | Literal[False] | None = False) -> Any:
    meta = record.metadata["langgraph"]
    fields = {
        "namespace": record.scope.namespace,
        "key": meta["key"],
        "value": _value(record),
        "created_at": record.created_at,
        "updated_at": max(datetime.fromisoformat(meta["updated_at"]), record.created_at),
        "version": record.version,
    }
    if score is False:
        return EngramItem(**fields)
    return EngramSearchItem(score=score, **fields)
