"""Per-scope columns: unit vectors searched exactly with numpy, and what ranking reads.

An entry holds every vector of one (tenant, namespace filter, model); it is
rebuilt when the tenant's write sequence moved, and evicted least-recently-used
beyond a memory budget. Besides status and kind it keeps each record's validity
window (valid_from, valid_to, expires_at), so the default search ("active and
valid now") is answered without a per-query SQL scan of the scope, and the few
fields rerank reads (importance, update time, thread), so ranking the candidate
pool reads no record (``rank_fields``): only the final hits are decoded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

import numpy as np

from ..model import Kind, Status
from .base import RankFields, RecordFilter, ScoredId
from .codec import epoch_microseconds

_STATUS_CODES = {status.value: code for code, status in enumerate(Status)}
_KIND_CODES = {kind.value: code for code, kind in enumerate(Kind)}

# the columns a loader returns, in this order
LOADED_COLUMNS = ("rowid", "id", "status", "kind", "embedding", "valid_from", "valid_to", "expires_at",
                  "importance", "updated_at", "thread_id")
_DELETED = _STATUS_CODES[Status.DELETED.value]


@dataclass
class ScopeVectors:
    seq: int
    rowids: np.ndarray
    ids: list[str]
    statuses: np.ndarray
    kinds: np.ndarray
    matrix: np.ndarray
    valid_from: np.ndarray  # epoch seconds
    valid_to: np.ndarray  # epoch seconds, +inf when open-ended
    expires_at: np.ndarray  # epoch seconds, +inf when never
    importance: np.ndarray  # float64
    updated_us: np.ndarray  # int64 microseconds since the epoch, exactly as the record's datetime holds it
    threads: np.ndarray  # int32 index into thread_names, -1 without a thread
    thread_names: list[str | None]
    _positions: dict[str, int] | None = field(default=None, repr=False)

    @property
    def nbytes(self) -> int:
        return (self.matrix.nbytes + self.rowids.nbytes + 5 * self.valid_from.nbytes + self.threads.nbytes
                + 64 * len(self.ids))

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
        if statuses:
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
        rows = self.matrix[candidates] if candidates.size < len(self.ids) else self.matrix
        # einsum runs numpy's own loop: a BLAS matmul may start threads that, on busy cores,
        # turn a 0.05 ms product over a scope into 10 ms or more (measured on 2 loaded cores)
        scores = np.einsum("ij,j->i", rows, vector.astype(np.float32, copy=False))
        take = min(limit, scores.size)
        top = np.argpartition(-scores, take - 1)[:take]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [ScoredId(self.ids[candidates[i]], float(scores[i])) for i in top]


Loader = Callable[[str, tuple[str, ...], bool, str], list]


def _times(column: tuple, missing: float) -> np.ndarray:
    if None in column:
        column = tuple(missing if value is None else value for value in column)
    return np.array(column, dtype=np.float64)


def _codes(column: tuple, codes: dict[str, int]) -> np.ndarray:
    return np.array([codes[value] for value in column], dtype=np.int8)


def _thread_codes(column: tuple) -> tuple[np.ndarray, list[str | None]]:
    names: dict[str, int] = {}
    codes = np.array([-1 if value is None else names.setdefault(value, len(names)) for value in column],
                     dtype=np.int32)
    return codes, list(names)


def build_scope_vectors(seq: int, rows: list, dim_hint: int | None = None) -> ScopeVectors:
    """The entry of ``rows`` (LOADED_COLUMNS, any order), kept in rowid order: equal
    scores then rank in insertion order whatever order the loader read them in. Built
    column by column (one pass of C per column, not a Python loop per row and field)."""
    rows = sorted((row for row in rows if row[4] is not None), key=itemgetter(0))
    if not rows:
        empty = np.zeros((0, dim_hint or 1), dtype=np.float32)
        none = np.zeros(0, np.float64)
        return ScopeVectors(seq, np.zeros(0, np.int64), [], np.zeros(0, np.int8), np.zeros(0, np.int8), empty,
                            none, none, none, none, np.zeros(0, np.int64), np.zeros(0, np.int32), [])
    (rowids, ids, statuses, kinds, blobs, valid_from, valid_to, expires_at, importance, updated_at,
     thread_ids) = zip(*rows)
    matrix = np.frombuffer(b"".join(blobs), dtype="<f4")
    width = len(blobs[0]) // 4
    if matrix.size != width * len(rows):  # rows of different widths: let vstack say so
        matrix = np.vstack([np.frombuffer(blob, dtype="<f4") for blob in blobs])
    matrix = matrix.reshape(len(rows), -1).astype(np.float32, copy=False)
    matrix.flags.writeable = False  # rows are handed out by vectors(); nobody may change them
    threads, names = _thread_codes(thread_ids)
    return ScopeVectors(
        seq=seq,
        rowids=np.array(rowids, dtype=np.int64),
        ids=list(ids),
        statuses=_codes(statuses, _STATUS_CODES),
        kinds=_codes(kinds, _KIND_CODES),
        matrix=matrix,
        valid_from=_times(valid_from, -np.inf),
        valid_to=_times(valid_to, np.inf),
        expires_at=_times(expires_at, np.inf),
        importance=np.array(importance, dtype=np.float64),
        updated_us=epoch_microseconds(_times(updated_at, 0.0)),
        threads=threads,
        thread_names=names,
    )


class VectorCache:
    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._entries: OrderedDict[tuple, ScopeVectors] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, tenant: str, where: RecordFilter, model: str, seq: int, load: Loader) -> ScopeVectors:
        key = (tenant, where.namespace, where.descendants, model)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.seq == seq:
                self._entries.move_to_end(key)
                return entry
        entry = build_scope_vectors(seq, load(tenant, where.namespace, where.descendants, model))
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
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
                        found[record_id] = entry.matrix[position]
            if len(found) == len(ids):
                break
        return found

    def _evict(self) -> None:
        total = sum(entry.nbytes for entry in self._entries.values())
        while total > self._max_bytes and len(self._entries) > 1:
            _, dropped = self._entries.popitem(last=False)
            total -= dropped.nbytes
