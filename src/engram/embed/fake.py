"""A deterministic fake embedder for unit tests. Not a real model."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ..text.tokenize import index_terms
from .base import Role, checked_rows


class FakeHashEmbedder:
    """Hashes terms into a fixed number of buckets (bag of words). Texts that
    share words are similar; nothing else is. For tests only."""

    def __init__(self, dim: int = 64, name: str = "fake-hash") -> None:
        self.dim = dim
        self.name = name

    def embed(self, texts: Sequence[str], *, role: Role = "passage") -> np.ndarray:
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in index_terms(text) or ["<empty>"]:
                bucket = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "big")
                rows[row, bucket % self.dim] += 1.0
        return checked_rows(self.name, self.dim, texts, rows)
