"""Per-scope matrices of unit vectors, searched exactly with numpy.

An entry holds every vector of one (tenant, namespace filter, model); it is
rebuilt when the tenant's write sequence moved, and evicted least-recently-used
beyond a memory budget.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Kind, Status
from .base import RecordFilter, ScoredId

_STATUS_CODES = {status.value: code for code, status in enumerate(Status)}
_KIND_CODES = {kind.value: code for code, kind in enumerate(Kind)}


@dataclass
class ScopeVectors:
    seq: int
    rowids: np.ndarray
    ids: list[str]
    statuses: np.ndarray
    kinds: np.ndarray
    matrix: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.matrix.nbytes + self.rowids.nbytes + 64 * len(self.ids)

    def nearest(
        self,
        vector: np.ndarray,
        limit: int,
        *,
        statuses: Sequence[Status],
        kinds: Sequence[Kind],
        allowed_rowids: Sequence[int] | None,
    ) -> list[ScoredId]:
        if not self.ids or limit <= 0:
            return []
        mask = np.ones(len(self.ids), dtype=bool)
        if statuses:
            mask &= np.isin(self.statuses, [_STATUS_CODES[s.value] for s in statuses])
        if kinds:
            mask &= np.isin(self.kinds, [_KIND_CODES[k.value] for k in kinds])
        if allowed_rowids is not None:
            mask &= np.isin(self.rowids, np.asarray(allowed_rowids, dtype=np.int64))
        candidates = np.flatnonzero(mask)
        if candidates.size == 0:
            return []
        scores = self.matrix[candidates] @ vector if candidates.size < len(self.ids) else self.matrix @ vector
        take = min(limit, scores.size)
        top = np.argpartition(-scores, take - 1)[:take]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [ScoredId(self.ids[candidates[i]], float(scores[i])) for i in top]


Loader = Callable[[str, tuple[str, ...], bool, str], list]


def build_scope_vectors(seq: int, rows: list, dim_hint: int | None = None) -> ScopeVectors:
    rows = [row for row in rows if row[4] is not None]
    if not rows:
        empty = np.zeros((0, dim_hint or 1), dtype=np.float32)
        return ScopeVectors(seq, np.zeros(0, np.int64), [], np.zeros(0, np.int8), np.zeros(0, np.int8), empty)
    matrix = np.vstack([np.frombuffer(row[4], dtype="<f4") for row in rows]).astype(np.float32, copy=False)
    return ScopeVectors(
        seq=seq,
        rowids=np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows)),
        ids=[row[1] for row in rows],
        statuses=np.fromiter((_STATUS_CODES[row[2]] for row in rows), dtype=np.int8, count=len(rows)),
        kinds=np.fromiter((_KIND_CODES[row[3]] for row in rows), dtype=np.int8, count=len(rows)),
        matrix=matrix,
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

    def _evict(self) -> None:
        total = sum(entry.nbytes for entry in self._entries.values())
        while total > self._max_bytes and len(self._entries) > 1:
            _, dropped = self._entries.popitem(last=False)
            total -= dropped.nbytes
