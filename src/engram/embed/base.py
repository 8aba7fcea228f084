"""The embedder protocol: texts in, L2-normalized float32 rows out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from ..errors import EmbeddingError

Role = Literal["query", "passage"]


@runtime_checkable
class Embedder(Protocol):
    """One method. ``name`` is stored beside every vector so that vectors of
    different models are never compared; ``dim`` is the row width."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str], *, role: Role = "passage") -> np.ndarray: ...


def checked_rows(name: str, dim: int, texts: Sequence[str], rows: object) -> np.ndarray:
    """Validate an embedder's output once, at the boundary, and normalize it."""
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    if matrix.shape != (len(texts), dim):
        raise EmbeddingError(f"{name} returned shape {matrix.shape}, expected {(len(texts), dim)}")
    if not np.isfinite(matrix).all():
        raise EmbeddingError(f"{name} returned NaN or infinite values")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)
