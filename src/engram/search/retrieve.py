"""Hybrid retrieval: lexical ∥ vector candidates → fusion → rerank → diversify.

Each step is a small function so it can be measured and replaced alone; the
settings that won on the benchmarks (docs/BENCHMARKS.md) are the defaults.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

import numpy as np

from ..embed.base import Embedder
from ..embed.ensemble import fuse_parts, part_cosines
from ..errors import InvalidValueError
from ..model import MemoryRecord, SearchHit, Signals
from ..store.base import RecordFilter, ScoredId, Store, TimeRange
from .floor import overlap as term_overlap
from .rewrite import rewrite_query
from .timehints import TimeWindow, time_window
from .tokenize import DEFAULT_TOKENIZER, Tokenizer

Retriever = Literal["hybrid", "bm25", "vector"]
Fusion = Literal["weighted", "rrf", "minmax"]
RETRIEVERS: tuple[str, ...] = ("hybrid", "bm25", "vector")
FUSIONS: tuple[str, ...] = ("weighted", "rrf", "minmax")


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    retriever: Retriever = "hybrid"
    fusion: Fusion = "minmax"
    lexical_weight: float = 0.6  # share of lexical vs vector inside relevance
    rrf_k: int = 60
    relevance_weight: float = 0.85
    importance_weight: float = 0.05
    recency_weight: float = 0.10
    recency_half_life_days: float = 30.0
    pool: int = 50  # candidates taken from each retriever at least
    neighbour_weight: float = 0.5  # lift from a strong hit said just before/after, same thread
    neighbour_window_s: float = 120.0
    thread_weight: float = 0.1  # lift from the best hit of the same thread (session)
    time_weight: float = 0.5  # lift for memories inside a period the query names ("in May 2023")
    query_rewrite: bool = True  # a transcript query keeps only the user's lines (search.rewrite)
    long_query_terms: int = 12  # beyond this many query terms the lexical weight shrinks (0: never)
    diversify: bool = True  # drop hits whose content repeats a better hit word for word

    def __post_init__(self) -> None:
        if self.retriever not in RETRIEVERS:
            raise InvalidValueError(f"unknown retriever {self.retriever!r}; use one of {', '.join(RETRIEVERS)}")
        if self.fusion not in FUSIONS:
            raise InvalidValueError(f"unknown fusion {self.fusion!r}; use one of {', '.join(FUSIONS)}")
        if not (isinstance(self.long_query_terms, int) and self.long_query_terms >= 0):
            raise InvalidValueError(f"long_query_terms must be a non-negative integer, got {self.long_query_terms!r}")
        if not self.neighbour_window_s >= 0:
            raise InvalidValueError(f"neighbour_window_s must be >= 0, got {self.neighbour_window_s!r}")
        for name in ("lexical_weight", "relevance_weight", "importance_weight", "recency_weight", "neighbour_weight",
                     "thread_weight", "time_weight"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
                raise InvalidValueError(f"{name} must be in [0, 1], got {value!r}")


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    lexical: float  # normalized to [0, 1]
    vector: float  # cosine clipped to [0, 1]
    relevance: float


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


def fuse_minmax(
    lexical: list[ScoredId], vector: list[ScoredId], missing_vectors: dict[str, float], lexical_weight: float,
    depth: int | None = None,
) -> list[Candidate]:
    """Convex combination after scaling each list to [0, 1]: BM25 divided by its best
    score, cosine min-max scaled between the best and the ``depth``-th best vector
    candidate (lower ones score 0). Raw cosines of different models sit in narrow,
    model-specific bands (e5: 0.7-0.9), which a fixed weight cannot balance against
    BM25; scaled, they can. A fixed depth keeps the scale, hence the top results,
    the same whatever k the caller asks for."""
    top_lexical = max((hit.score for hit in lexical), default=0.0) or 1.0
    lex = {hit.id: hit.score / top_lexical for hit in lexical}
    raw = {hit.id: hit.score for hit in vector}
    scale = sorted(raw.values(), reverse=True)[:depth]
    low, high = min(scale, default=0.0), max(scale, default=1.0)
    span = high - low
    raw.update(missing_vectors)
    out = []
    for key in dict.fromkeys([*lex, *raw]):
        l_score, cosine = lex.get(key, 0.0), raw.get(key)
        if cosine is None:
            v_score = 0.0
        else:
            # one candidate (or all tied): the top scores 1, anything below it 0
            v_score = min(max((cosine - low) / span, 0.0), 1.0) if span > 1e-9 else float(cosine >= high - 1e-9)
        out.append(Candidate(key, l_score, max(cosine or 0.0, 0.0),
                             lexical_weight * l_score + (1 - lexical_weight) * v_score))
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


def lift_by_context(
    candidates: Sequence[Candidate], records: dict[str, MemoryRecord], settings: RetrievalSettings
) -> list[Candidate]:
    """Memories said next to a strong hit in the same thread (a question and its
    answer, a story told over several turns) are lifted towards it:
    relevance += weight * best_neighbour * (1 - relevance), so scores stay in [0, 1]
    and nothing is pushed down. ``thread_weight`` does the same with the best hit
    of the whole thread (session)."""
    if not (settings.neighbour_weight or settings.thread_weight):
        return list(candidates)
    threads: dict[str, list[tuple[float, Candidate]]] = {}
    for cand in candidates:
        record = records.get(cand.id)
        if record is not None and record.source.thread_id:
            threads.setdefault(record.source.thread_id, []).append((record.valid_from.timestamp(), cand))
    lifted: dict[str, float] = {}
    for members in threads.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda item: item[0])
        times = [t for t, _ in members]
        first, second = sorted((c.relevance for _, c in members), reverse=True)[:2]
        for index, (moment, cand) in enumerate(members):
            best_thread = second if cand.relevance == first else first
            best_near = 0.0
            if settings.neighbour_weight:
                for j in (index - 1, index + 1):
                    if 0 <= j < len(members) and abs(times[j] - moment) <= settings.neighbour_window_s:
                        best_near = max(best_near, members[j][1].relevance)
            lift = settings.neighbour_weight * best_near + settings.thread_weight * best_thread
            lifted[cand.id] = cand.relevance + min(lift, 1.0) * (1.0 - cand.relevance)
    return [replace(c, relevance=lifted[c.id]) if c.id in lifted else c for c in candidates]


def recency(record: MemoryRecord, now: datetime, half_life_days: float) -> float:
    age_days = max((now - record.updated_at).total_seconds(), 0.0) / 86400.0
    return math.pow(0.5, age_days / half_life_days) if half_life_days > 0 else 1.0


def rerank(
    candidates: Sequence[Candidate], records: dict[str, MemoryRecord], settings: RetrievalSettings, now: datetime,
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
            validity=1.0 if record.held_at(now) else 0.0,
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


@dataclass(frozen=True, slots=True)
class Ask:
    """A query once prepared: its text (rewritten), its vector, the period it names,
    its lexical terms (by the store's tokenizer)."""

    text: str
    vector: np.ndarray | None
    window: TimeWindow | None
    terms: tuple[str, ...] = ()


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
    tokenizer: Tokenizer = DEFAULT_TOKENIZER,
) -> list[SearchHit]:
    """Ranked hits, best first. The first ``settings.pool`` are ranked over a pool of
    that size whatever ``k`` is, so asking for more results never reorders the top
    ones; beyond it, a deeper pass supplies the rest."""
    text = rewrite_query(query) if settings.query_rewrite else query
    # The query is embedded on the caller's thread: embedding it in a worker thread while
    # the lexical query ran was measured slower (p50 8.3 vs 7.1 ms on 2 busy cores: the
    # GIL and the thread hand-over cost more than the overlap gained)
    vector = embedder.embed([text], role="query")[0] if settings.retriever in ("hybrid", "vector") else None
    ask = Ask(text, vector, time_window(text, now) if settings.time_weight else None,
              tuple(tokenizer.query_terms(text)))
    parts = tuple(getattr(embedder, "dims", ()))  # an ensemble: the width of each model's part
    hits = _ranked(store, embedder.name, tenant, where, ask, settings.pool, settings, now, parts)
    if k > settings.pool:
        seen = {hit.record.id for hit in hits}
        deeper = _ranked(store, embedder.name, tenant, where, ask, 3 * k, settings, now, parts)
        hits += [hit for hit in deeper if hit.record.id not in seen]
    return with_overlap(hits[:k], ask.terms, tokenizer)


def _ranked(
    store: Store, model: str, tenant: str, where: RecordFilter, ask: Ask, pool: int, settings: RetrievalSettings,
    now: datetime, parts: tuple[int, ...] = (),
) -> list[SearchHit]:
    lexical: list[ScoredId] = []
    vector: list[ScoredId] = []
    window = ask.window
    inside = replace(where, time_ranges=(*where.time_ranges, TimeRange("valid_from", window.start, window.end))) \
        if window else None
    if settings.retriever in ("hybrid", "bm25"):
        lexical = store.lexical(tenant, where, ask.terms, pool)
        if inside is not None:
            lexical = _merge(lexical, store.lexical(tenant, inside, ask.terms, pool))
    if ask.vector is not None:
        vector = store.nearest(tenant, where, model, ask.vector, pool)
        if inside is not None:
            vector = _merge(vector, store.nearest(tenant, inside, model, ask.vector, pool))
    cosines: dict[str, float] = {}
    if parts and ask.vector is not None:
        vector, cosines = ensemble_scores(store, model, tenant, lexical, vector, ask.vector, parts)
    share = lexical_share(settings, len(ask.terms))
    if settings.fusion == "rrf":
        candidates = fuse_rrf(lexical, vector, share, settings.rrf_k)
    else:
        missing = {} if cosines else _missing_vector_scores(store, model, tenant, lexical, vector, ask.vector)
        if settings.fusion == "minmax" and settings.retriever == "hybrid":
            candidates = fuse_minmax(lexical, vector, missing, share, depth=settings.pool)
        else:
            candidates = fuse_weighted(lexical, vector, missing, share)
    if cosines:  # the signal stays the (mean) cosine; the z-fused score only ranked
        candidates = [replace(c, vector=max(cosines.get(c.id, 0.0), 0.0)) for c in candidates]
    candidates.sort(key=lambda cand: -cand.relevance)
    candidates = candidates[: pool]
    records = {record.id: record for record in store.get(tenant, [cand.id for cand in candidates])}
    candidates = lift_by_context(candidates, records, settings)
    if window is not None:
        candidates = lift_inside(candidates, records, window, settings.time_weight)
    hits = rerank(candidates, records, settings, now)
    return diversify(hits) if settings.diversify else hits


def with_overlap(hits: Sequence[SearchHit], terms: Sequence[str], tokenizer: Tokenizer) -> list[SearchHit]:
    """The share of query terms each hit's text holds (the relevance floor's second test).
    Not part of the score, so it is computed only for the hits returned, not the whole pool."""
    return [replace(hit, signals=replace(hit.signals, overlap=term_overlap(
        terms, tokenizer.query_terms(hit.record.indexed_text)))) for hit in hits]


def lift_inside(
    candidates: Sequence[Candidate], records: dict[str, MemoryRecord], window: TimeWindow, weight: float
) -> list[Candidate]:
    """Memories valid from a moment inside the period the query names move up."""
    out = []
    for cand in candidates:
        record = records.get(cand.id)
        if record is not None and window.contains(record.valid_from):
            cand = replace(cand, relevance=cand.relevance + weight * (1.0 - cand.relevance))
        out.append(cand)
    return out


def _merge(first: list[ScoredId], second: list[ScoredId]) -> list[ScoredId]:
    """Union of two candidate lists of the same scorer, best first."""
    best: dict[str, float] = {}
    for hit in (*first, *second):
        best[hit.id] = max(hit.score, best.get(hit.id, float("-inf")))
    return [ScoredId(key, value) for key, value in sorted(best.items(), key=lambda item: -item[1])]


def lexical_share(settings: RetrievalSettings, terms: int) -> float:
    """The lexical weight for a query of ``terms`` distinct terms. Past ``long_query_terms`` it
    shrinks in proportion: a long query (a conversation, a paragraph) matches most
    memories on some word, so BM25 turns to noise while embeddings keep the topic."""
    if settings.retriever != "hybrid":
        return 1.0 if settings.retriever == "bm25" else 0.0
    if not settings.long_query_terms:
        return settings.lexical_weight
    return settings.lexical_weight * min(1.0, settings.long_query_terms / max(terms, 1))


def ensemble_scores(
    store: Store, model: str, tenant: str, lexical: list[ScoredId], vector: list[ScoredId], query: np.ndarray,
    parts: tuple[int, ...],
) -> tuple[list[ScoredId], dict[str, float]]:
    """An ensemble's vector scores over the whole candidate pool (vector and lexical
    candidates): each model's cosines z-scored over the pool and averaged, squashed
    into (0, 1) by a logistic so every fusion can take them; and each candidate's
    mean cosine, the absolute signal."""
    ids = list(dict.fromkeys([hit.id for hit in vector] + [hit.id for hit in lexical]))
    stored = store.vectors(tenant, ids, model) if ids else {}
    ids = [key for key in ids if key in stored]
    if not ids:
        return vector, {}
    per_part = part_cosines(parts, np.vstack([stored[key] for key in ids]), query)
    fused = 1.0 / (1.0 + np.exp(-fuse_parts(per_part)))
    scored = sorted(zip(ids, fused.tolist()), key=lambda item: -item[1])
    return [ScoredId(key, score) for key, score in scored], dict(zip(ids, per_part.mean(axis=0).tolist()))


def _missing_vector_scores(
    store: Store,
    model: str,
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
    stored = store.vectors(tenant, missing, model)
    return {key: float(row @ query_vector) for key, row in stored.items()}
