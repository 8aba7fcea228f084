"""Per-scope columns: unit vectors searched exactly with numpy, and what ranking reads.

An entry holds every vector of one (tenant, namespace filter, model), built from
the scope's packed chunks (store/sqlite_vectors.py); it is rebuilt when the
tenant's write sequence moved, and evicted least-recently-used
beyond a memory budget. Besides status and kind it keeps each record's validity
window (valid_from, valid_to, expires_at), so the default search ("active and
valid now") is answered without a per-query SQL scan of the scope, and the few
fields rerank reads (importance, update time, thread), so ranking the candidate
pool reads no record (``rank_fields``): only the final hits are decoded.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..model import Kind, Status
from .base import RankFields, RecordFilter, ScoredId
from .codec import epoch_microseconds
from .sqlite_vectors import PackedRows

_STATUS_CODES = {status.value: code for code, status in enumerate(Status)}
_KIND_CODES = {kind.value: code for code, kind in enumerate(Kind)}

_DELETED = _STATUS_CODES[Status.DELETED.value]


@dataclass
class ScopeVectors:
    """One scope's columns in rowid order (equal scores rank in insertion order). The
    vectors stay in the blocks they were read in (one per chunk, views of the rows as
    read) for the entry's whole life: copying them into one matrix cost a fresh 2 MB
    of memory per 1,000 records (~0.6 ms of page faults and copying on 2 busy cores,
    bench/search_stages.py), where scoring 32 blocks costs ~0.05 ms more than one
    matrix per query. ``physical`` maps each rowid-order position to its row among the
    blocks when they hold another order."""

    seq: int
    rowids: np.ndarray
    ids: list[str]
    statuses: np.ndarray
    kinds: np.ndarray
    parts: list[np.ndarray]  # float32 blocks, read-only
    valid_from: np.ndarray  # epoch seconds
    valid_to: np.ndarray  # epoch seconds, +inf when open-ended
    expires_at: np.ndarray  # epoch seconds, +inf when never
    importance: np.ndarray  # float64
    updated_us: np.ndarray  # int64 microseconds since the epoch, exactly as the record's datetime holds it
    threads: np.ndarray  # int32 index into thread_names, -1 without a thread
    thread_names: list[str | None]
    physical: np.ndarray | None = None  # row among the blocks of each position (None: the same)
    _positions: dict[str, int] | None = field(default=None, repr=False)
    _starts: list[int] | None = field(default=None, repr=False)
    nbytes: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        # counted once: the cache keeps a running total instead of summing every entry per load
        self.nbytes = (sum(part.nbytes for part in self.parts) + self.rowids.nbytes + 5 * self.valid_from.nbytes
                       + self.threads.nbytes + 64 * len(self.ids))

    def rank_fields(self, positions: Sequence[int]) -> RankFields:
        at = np.asarray(positions, dtype=np.int64)
        threads = self.threads[at].tolist()
        return RankFields(
            ids=tuple(self.ids[i] for i in positions),
            importance=self.importance[at],
            updated_us=self.updated_us[at],
            valid_from=self.valid_from[at],
            valid_to=self.valid_to[at],
            expires_at=self.expires_at[at],
            deleted=self.statuses[at] == _DELETED,
            threads=tuple(self.thread_names[t] if t >= 0 else None for t in threads),
        )

    def position(self, record_id: str) -> int | None:
        if self._positions is None:
            self._positions = {key: index for index, key in enumerate(self.ids)}
        return self._positions.get(record_id)

    def row(self, position: int) -> np.ndarray:
        """The vector at ``position`` (read-only)."""
        at = position if self.physical is None else int(self.physical[position])
        if len(self.parts) == 1:
            return self.parts[0][at]
        if self._starts is None:
            self._starts = np.cumsum([0] + [len(part) for part in self.parts]).tolist()
        block = bisect_right(self._starts, at) - 1
        return self.parts[block][at - self._starts[block]]

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """The cosine of every row with ``vector``, in rowid order. Each row's product is
        the same whatever block holds it (numpy sums each row alone)."""
        query = vector.astype(np.float32, copy=False)
        # einsum runs numpy's own loop: a BLAS matmul may start threads that, on busy cores,
        # turn a 0.05 ms product over a scope into 10 ms or more (measured on 2 loaded cores)
        if len(self.parts) == 1:
            scores = np.einsum("ij,j->i", self.parts[0], query)
        else:
            scores = np.empty(len(self.ids), dtype=np.float32)
            start = 0
            for part in self.parts:
                np.einsum("ij,j->i", part, query, out=scores[start:start + len(part)])
                start += len(part)
        return scores if self.physical is None else scores[self.physical]

    def nearest(
        self,
        vector: np.ndarray,
        limit: int,
        *,
        statuses: Sequence[Status],
        kinds: Sequence[Kind],
        allowed_rowids: Sequence[int] | None,
        valid_at: float | None = None,
    ) -> list[ScoredId]:
        """Top ``limit`` by cosine among rows that pass the filters. ``valid_at``
        (epoch seconds) applies the same test as the SQL filter: valid_from <= t,
        valid_to and expires_at NULL or > t."""
        if not self.ids or limit <= 0:
            return []
        mask = np.ones(len(self.ids), dtype=bool)
        if len(statuses) == 1:  # the default search (active only): one comparison
            mask &= self.statuses == _STATUS_CODES[statuses[0].value]
        elif statuses:
            mask &= np.isin(self.statuses, [_STATUS_CODES[s.value] for s in statuses])
        if kinds:
            mask &= np.isin(self.kinds, [_KIND_CODES[k.value] for k in kinds])
        if valid_at is not None:
            mask &= (self.valid_from <= valid_at) & (self.valid_to > valid_at) & (self.expires_at > valid_at)
        if allowed_rowids is not None:
            mask &= np.isin(self.rowids, np.asarray(allowed_rowids, dtype=np.int64))
        candidates = np.flatnonzero(mask)
        if candidates.size == 0:
            return []
        scores = self.scores(vector)
        if candidates.size < len(self.ids):
            scores = scores[candidates]
        take = min(limit, scores.size)
        top = np.argpartition(-scores, take - 1)[:take]
        top = top[np.argsort(-scores[top], kind="stable")]
        ids = self.ids
        return [ScoredId(ids[at], score) for at, score in zip(candidates[top].tolist(), scores[top].tolist())]


Loader = Callable[[str, tuple[str, ...], bool, str], PackedRows]


def _codes(column: Sequence[str], codes: dict[str, int]) -> np.ndarray:
    return np.array([codes[value] for value in column], dtype=np.int8)


def _thread_codes(column: Sequence[str | None]) -> tuple[np.ndarray, list[str | None]]:
    names: dict[str, int] = {}
    codes = np.array([-1 if value is None else names.setdefault(value, len(names)) for value in column],
                     dtype=np.int32)
    return codes, list(names)


def build_scope_vectors(seq: int, rows: PackedRows) -> ScopeVectors:
    """The entry of ``rows`` (a scope's vector chunks, concatenated), its columns in rowid
    order whatever order the chunks hold the records in; the vector blocks as read."""
    docs, times = rows.docs, rows.times
    ids, statuses, kinds, threads = rows.ids, rows.statuses, rows.kinds, rows.threads
    physical = None
    if docs.size > 1 and not bool(np.all(docs[:-1] < docs[1:])):
        physical = np.argsort(docs, kind="stable")
        at = physical.tolist()
        docs, times = docs[physical], times[physical]
        ids, statuses, kinds, threads = ([column[i] for i in at] for column in (ids, statuses, kinds, threads))
    thread_codes, names = _thread_codes(threads)
    return ScopeVectors(
        seq=seq,
        rowids=np.asarray(docs, dtype=np.int64),
        ids=list(ids),
        statuses=_codes(statuses, _STATUS_CODES),
        kinds=_codes(kinds, _KIND_CODES),
        parts=rows.parts,
        valid_from=np.ascontiguousarray(times[:, 0]),
        valid_to=np.ascontiguousarray(times[:, 1]),
        expires_at=np.ascontiguousarray(times[:, 2]),
        importance=np.ascontiguousarray(times[:, 3]),
        updated_us=epoch_microseconds(times[:, 4]),
        threads=thread_codes,
        thread_names=names,
        physical=physical,
    )


class VectorCache:
    """Scope entries, least recently used evicted beyond ``max_bytes`` (the bytes of the
    entries held are kept as a running total: a load costs the same whatever the number
    of scopes cached)."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._entries: OrderedDict[tuple, ScopeVectors] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0  # searches answered from a fresh entry
        self.loads = 0  # entries built from the store (a cold scope, or one a write made stale)
        self.evictions = 0  # entries dropped for the budget: loads far above the scopes held mean churn

    @property
    def nbytes(self) -> int:
        """The bytes of the entries held now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def summary(self) -> dict[str, int | float]:
        """What ``engram stats`` shows of this process's cache."""
        return {"scopes": len(self._entries), "bytes": self._bytes, "mb": round(self._bytes / 2**20, 1),
                "budget_mb": round(self._max_bytes / 2**20, 1), "hits": self.hits, "loads": self.loads,
                "evictions": self.evictions}

    def get(self, tenant: str, where: RecordFilter, model: str, seq: int, load: Loader) -> ScopeVectors:
        """The fresh entry of this scope and model, else one built from ``load`` (the scope's chunks)."""
        key = (tenant, where.namespace, where.descendants, model)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.seq == seq:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry
        entry = build_scope_vectors(seq, load(tenant, where.namespace, where.descendants, model))
        with self._lock:
            self.loads += 1
            replaced = self._entries.pop(key, None)
            if replaced is not None:
                self._bytes -= replaced.nbytes
            self._entries[key] = entry
            self._bytes += entry.nbytes
            self._evict()
        return entry

    def _fresh(self, tenant: str, model: str, seq: int) -> Iterator[ScopeVectors]:
        """Fresh entries of this tenant and model, most recently used first (usually the
        scope a search just loaded, so callers stop at the first): the entries are copied
        under the lock (one C-level copy) and filtered lazily, not all compared per call."""
        with self._lock:
            items = list(reversed(self._entries.items()))
        for key, entry in items:
            if key[0] == tenant and key[3] == model and entry.seq == seq:
                yield entry

    def rank_fields(self, tenant: str, model: str, seq: int, ids: Sequence[str]) -> list[RankFields]:
        """What ranking reads of ``ids``, from fresh entries of this tenant and model (one
        part per entry that held some; ids found nowhere are left to the caller)."""
        parts: list[RankFields] = []
        rest = list(dict.fromkeys(ids))
        for entry in self._fresh(tenant, model, seq):
            found = [(key, entry.position(key)) for key in rest]
            positions = [position for _, position in found if position is not None]
            if positions:
                parts.append(entry.rank_fields(positions))
                rest = [key for key, position in found if position is None]
            if not rest:
                break
        return parts

    def vectors(self, tenant: str, model: str, seq: int, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors of ``ids`` found in fresh entries (same write sequence) of this tenant and model."""
        found: dict[str, np.ndarray] = {}
        for entry in self._fresh(tenant, model, seq):
            for record_id in ids:
                if record_id not in found:
                    position = entry.position(record_id)
                    if position is not None:
                        found[record_id] = entry.row(position)
            if len(found) == len(ids):
                break
        return found

    def _evict(self) -> None:
        """Drop least recently used entries beyond the budget (the newest always stays)."""
        while self._bytes > self._max_bytes and len(self._entries) > 1:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= dropped.nbytes
            self.evictions += 1
