"""Hybrid retrieval: lexical ∥ vector candidates → fusion → rerank → diversify.

Each step is a small function so it can be measured and replaced alone; the
settings that won on the benchmarks (docs/BENCHMARKS.md) are the defaults.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np

from ..embed.base import Embedder
from ..errors import InvalidValueError
from ..model import MemoryRecord, SearchHit, Signals
from ..store.base import RecordFilter, ScoredId, Store
from .tokenize import query_terms

Retriever = Literal["hybrid", "bm25", "vector"]
Fusion = Literal["weighted", "rrf"]
RETRIEVERS: tuple[str, ...] = ("hybrid", "bm25", "vector")


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    retriever: Retriever = "hybrid"
    fusion: Fusion = "weighted"
    lexical_weight: float = 0.4  # share of lexical vs vector inside relevance
    rrf_k: int = 60
    relevance_weight: float = 0.85
    importance_weight: float = 0.05
    recency_weight: float = 0.10
    recency_half_life_days: float = 30.0
    pool: int = 50  # candidates taken from each retriever at least

    def __post_init__(self) -> None:
        if self.retriever not in RETRIEVERS:
            raise InvalidValueError(f"unknown retriever {self.retriever!r}; use one of {', '.join(RETRIEVERS)}")
        if self.fusion not in ("weighted", "rrf"):
            raise InvalidValueError(f"unknown fusion {self.fusion!r}; use weighted or rrf")
        for name in ("lexical_weight", "relevance_weight", "importance_weight", "recency_weight"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
                raise InvalidValueError(f"{name} must be in [0, 1], got {value!r}")


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    lexical: float  # normalized to [0, 1]
    vector: float  # cosine clipped to [0, 1]
    relevance: float


def lexical_candidates(store: Store, tenant: str, where: RecordFilter, query: str, pool: int) -> list[ScoredId]:
    return store.lexical(tenant, where, query_terms(query), pool)


def vector_candidates(
    store: Store, embedder: Embedder, tenant: str, where: RecordFilter, query: str, pool: int
) -> tuple[list[ScoredId], np.ndarray]:
    vector = embedder.embed([query], role="query")[0]
    return store.nearest(tenant, where, embedder.name, vector, pool), vector


def fuse_weighted(
    lexical: list[ScoredId], vector: list[ScoredId], missing_vectors: dict[str, float], lexical_weight: float
) -> list[Candidate]:
    """Convex combination of max-normalized BM25 and clipped cosine similarity."""
    top_lexical = max((hit.score for hit in lexical), default=0.0) or 1.0
    lex = {hit.id: hit.score / top_lexical for hit in lexical}
    vec = {hit.id: max(hit.score, 0.0) for hit in vector}
    vec.update({key: max(value, 0.0) for key, value in missing_vectors.items()})
    out = []
    for key in dict.fromkeys([*lex, *vec]):
        l_score, v_score = lex.get(key, 0.0), vec.get(key, 0.0)
        out.append(Candidate(key, l_score, v_score, lexical_weight * l_score + (1 - lexical_weight) * v_score))
    return out


def fuse_rrf(lexical: list[ScoredId], vector: list[ScoredId], lexical_weight: float, k: int) -> list[Candidate]:
    """Reciprocal-rank fusion, scaled so that rank 1 in both lists scores 1.0."""
    weights = {"lex": lexical_weight, "vec": 1 - lexical_weight}
    scores: dict[str, float] = {}
    lex_scores = {hit.id: hit.score for hit in lexical}
    top_lexical = max(lex_scores.values(), default=0.0) or 1.0
    vec_scores = {hit.id: max(hit.score, 0.0) for hit in vector}
    for name, hits in (("lex", lexical), ("vec", vector)):
        for rank, hit in enumerate(hits, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + weights[name] * (k + 1) / (k + rank)
    return [
        Candidate(key, lex_scores.get(key, 0.0) / top_lexical, vec_scores.get(key, 0.0), value)
        for key, value in scores.items()
    ]


def recency(record: MemoryRecord, now: datetime, half_life_days: float) -> float:
    age_days = max((now - record.updated_at).total_seconds(), 0.0) / 86400.0
    return math.pow(0.5, age_days / half_life_days) if half_life_days > 0 else 1.0


def rerank(
    candidates: Sequence[Candidate], records: dict[str, MemoryRecord], settings: RetrievalSettings, now: datetime
) -> list[SearchHit]:
    hits = []
    for cand in candidates:
        record = records.get(cand.id)
        if record is None:
            continue
        signals = Signals(
            lexical=cand.lexical,
            vector=cand.vector,
            relevance=cand.relevance,
            recency=recency(record, now, settings.recency_half_life_days),
            importance=record.importance,
            validity=1.0 if record.is_valid_at(now) else 0.0,
        )
        score = signals.validity * (
            settings.relevance_weight * signals.relevance
            + settings.importance_weight * signals.importance
            + settings.recency_weight * signals.recency
        )
        hits.append(SearchHit(record, score, signals))
    hits.sort(key=lambda hit: (-hit.score, hit.record.id))
    return hits


def diversify(hits: list[SearchHit]) -> list[SearchHit]:
    """Drop hits whose content repeats a better hit word for word."""
    seen: set[str] = set()
    kept = []
    for hit in hits:
        key = " ".join(hit.record.content.lower().split())
        if key not in seen:
            seen.add(key)
            kept.append(hit)
    return kept


def retrieve(
    store: Store,
    embedder: Embedder,
    tenant: str,
    where: RecordFilter,
    query: str,
    *,
    k: int,
    settings: RetrievalSettings,
    now: datetime,
) -> list[SearchHit]:
    pool = max(settings.pool, 3 * k)
    lexical: list[ScoredId] = []
    vector: list[ScoredId] = []
    query_vector = None
    if settings.retriever in ("hybrid", "bm25"):
        lexical = lexical_candidates(store, tenant, where, query, pool)
    if settings.retriever in ("hybrid", "vector"):
        vector, query_vector = vector_candidates(store, embedder, tenant, where, query, pool)
    if settings.fusion == "rrf":
        candidates = fuse_rrf(lexical, vector, _lexical_share(settings), settings.rrf_k)
    else:
        missing = _missing_vector_scores(store, embedder, tenant, lexical, vector, query_vector)
        candidates = fuse_weighted(lexical, vector, missing, _lexical_share(settings))
    candidates.sort(key=lambda cand: -cand.relevance)
    candidates = candidates[: pool]
    records = {record.id: record for record in store.get(tenant, [cand.id for cand in candidates])}
    return diversify(rerank(candidates, records, settings, now))


def _lexical_share(settings: RetrievalSettings) -> float:
    return {"bm25": 1.0, "vector": 0.0}.get(settings.retriever, settings.lexical_weight)


def _missing_vector_scores(
    store: Store,
    embedder: Embedder,
    tenant: str,
    lexical: list[ScoredId],
    vector: list[ScoredId],
    query_vector: np.ndarray | None,
) -> dict[str, float]:
    """Cosine for lexical candidates the vector pool missed, so fusion compares like with like."""
    if query_vector is None:
        return {}
    seen = {hit.id for hit in vector}
    missing = [hit.id for hit in lexical if hit.id not in seen]
    if not missing:
        return {}
    stored = store.vectors(tenant, missing, embedder.name)
    return {key: float(row @ query_vector) for key, row in stored.items()}
