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
from ..store.base import RankFields, RecordFilter, ScoredId, Store, TimeRange
from ..store.codec import microseconds
from ..text.tokenize import DEFAULT_TOKENIZER, Tokenizer
from .floor import overlap as term_overlap
from .rewrite import rewrite_query
from .timehints import TimeWindow, time_window

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
class Pool:
    """The fused candidates as columns: ids in fusion order, and per candidate its
    lexical signal (BM25 over the best, [0, 1]), vector signal (cosine clipped to
    [0, 1]) and relevance (the fused score)."""

    ids: list[str]
    lexical: np.ndarray
    vector: np.ndarray
    relevance: np.ndarray

    def take(self, at: np.ndarray) -> Pool:
        return Pool([self.ids[i] for i in at.tolist()], self.lexical[at], self.vector[at], self.relevance[at])

    def best(self, count: int) -> Pool:
        """The ``count`` most relevant, ties in fusion order."""
        return self.take(np.argsort(-self.relevance, kind="stable")[:count])


def _column(values: Sequence[float]) -> np.ndarray:
    return np.array(values, dtype=np.float64)


def _scaled_lexical(lexical: list[ScoredId]) -> dict[str, float]:
    top_lexical = max((hit.score for hit in lexical), default=0.0) or 1.0
    return {hit.id: hit.score / top_lexical for hit in lexical}


def fuse_weighted(
    lexical: list[ScoredId], vector: list[ScoredId], missing_vectors: dict[str, float], lexical_weight: float
) -> Pool:
    """Convex combination of max-normalized BM25 and clipped cosine similarity."""
    lex = _scaled_lexical(lexical)
    vec = {hit.id: max(hit.score, 0.0) for hit in vector}
    vec.update({key: max(value, 0.0) for key, value in missing_vectors.items()})
    ids = list(dict.fromkeys([*lex, *vec]))
    l_score = _column([lex.get(key, 0.0) for key in ids])
    v_score = _column([vec.get(key, 0.0) for key in ids])
    return Pool(ids, l_score, v_score, lexical_weight * l_score + (1 - lexical_weight) * v_score)


def fuse_minmax(
    lexical: list[ScoredId], vector: list[ScoredId], missing_vectors: dict[str, float], lexical_weight: float,
    depth: int | None = None,
) -> Pool:
    """Convex combination after scaling each list to [0, 1]: BM25 divided by its best
    score, cosine min-max scaled between the best and the ``depth``-th best vector
    candidate (lower ones score 0). Raw cosines of different models sit in narrow,
    model-specific bands (e5: 0.7-0.9), which a fixed weight cannot balance against
    BM25; scaled, they can. A fixed depth keeps the scale, hence the top results,
    the same whatever k the caller asks for."""
    lex = _scaled_lexical(lexical)
    raw = {hit.id: hit.score for hit in vector}
    scale = sorted(raw.values(), reverse=True)[:depth]
    low, high = min(scale, default=0.0), max(scale, default=1.0)
    span = high - low
    raw.update(missing_vectors)
    ids = list(dict.fromkeys([*lex, *raw]))
    l_score = _column([lex.get(key, 0.0) for key in ids])
    known = np.array([key in raw for key in ids], dtype=bool)
    cosine = _column([raw.get(key, 0.0) for key in ids])
    if span > 1e-9:
        v_score = np.minimum(np.maximum((cosine - low) / span, 0.0), 1.0)
    else:  # one candidate (or all tied): the top scores 1, anything below it 0
        v_score = (cosine >= high - 1e-9).astype(np.float64)
    v_score = np.where(known, v_score, 0.0)
    return Pool(ids, l_score, np.maximum(cosine, 0.0), lexical_weight * l_score + (1 - lexical_weight) * v_score)


def fuse_rrf(lexical: list[ScoredId], vector: list[ScoredId], lexical_weight: float, k: int) -> Pool:
    """Reciprocal-rank fusion, scaled so that rank 1 in both lists scores 1.0."""
    weights = {"lex": lexical_weight, "vec": 1 - lexical_weight}
    scores: dict[str, float] = {}
    lex = _scaled_lexical(lexical)
    vec_scores = {hit.id: max(hit.score, 0.0) for hit in vector}
    for name, hits in (("lex", lexical), ("vec", vector)):
        for rank, hit in enumerate(hits, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + weights[name] * (k + 1) / (k + rank)
    ids = list(scores)
    return Pool(ids, _column([lex.get(key, 0.0) for key in ids]), _column([vec_scores.get(key, 0.0) for key in ids]),
                _column([scores[key] for key in ids]))


def lift_by_context(
    relevance: np.ndarray, threads: Sequence[str | None], times: np.ndarray, settings: RetrievalSettings
) -> np.ndarray:
    """Memories said next to a strong hit in the same thread (a question and its
    answer, a story told over several turns) are lifted towards it:
    relevance += weight * best_neighbour * (1 - relevance), so scores stay in [0, 1]
    and nothing is pushed down. ``thread_weight`` does the same with the best hit
    of the whole thread (session). ``times``: each candidate's valid_from (epoch s)."""
    if not (settings.neighbour_weight or settings.thread_weight):
        return relevance
    groups: dict[str, list[int]] = {}
    for index, thread in enumerate(threads):
        if thread:
            groups.setdefault(thread, []).append(index)
    members_of = [members for members in groups.values() if len(members) > 1]
    if not members_of:
        return relevance
    rel, moments = relevance.tolist(), times.tolist()
    lifted = list(rel)
    for members in members_of:
        members.sort(key=lambda i: moments[i])
        first, second = sorted((rel[i] for i in members), reverse=True)[:2]
        for position, i in enumerate(members):
            best_thread = second if rel[i] == first else first
            best_near = 0.0
            if settings.neighbour_weight:
                for j in (position - 1, position + 1):
                    if 0 <= j < len(members) and abs(moments[members[j]] - moments[i]) <= settings.neighbour_window_s:
                        best_near = max(best_near, rel[members[j]])
            lift = settings.neighbour_weight * best_near + settings.thread_weight * best_thread
            lifted[i] = rel[i] + min(lift, 1.0) * (1.0 - rel[i])
    return _column(lifted)


def lift_inside(relevance: np.ndarray, times: np.ndarray, window: TimeWindow, weight: float) -> np.ndarray:
    """Memories valid from a moment inside the period the query names move up."""
    inside = (times >= window.start.timestamp()) & (times < window.end.timestamp())
    return np.where(inside, relevance + weight * (1.0 - relevance), relevance)


def recency(updated_us: np.ndarray, now: datetime, half_life_days: float) -> np.ndarray:
    """0.5 ** (age in days / half-life), the age from exact microseconds (as datetimes subtract)."""
    if half_life_days <= 0:
        return np.ones(len(updated_us))
    now_us = microseconds(now)
    return _column([math.pow(0.5, max((now_us - at) / 10**6, 0.0) / 86400.0 / half_life_days)
                    for at in updated_us.tolist()])


@dataclass(frozen=True, slots=True)
class Ranked:
    """The pool after rerank, best first: ids, scores and signal columns."""

    ids: list[str]
    score: np.ndarray
    lexical: np.ndarray
    vector: np.ndarray
    relevance: np.ndarray
    recency: np.ndarray
    importance: np.ndarray
    validity: np.ndarray

    def signals(self, i: int) -> Signals:
        return Signals(lexical=float(self.lexical[i]), vector=float(self.vector[i]),
                       relevance=float(self.relevance[i]), recency=float(self.recency[i]),
                       importance=float(self.importance[i]), validity=float(self.validity[i]))


def rerank(pool: Pool, fields: RankFields, relevance: np.ndarray, settings: RetrievalSettings,
           now: datetime) -> Ranked:
    """Score = validity * (relevance, importance and recency weighted); ``fields`` aligned with ``pool``."""
    moment = now.timestamp()
    validity = (~fields.deleted & (fields.valid_from <= moment) & (moment < fields.valid_to)
                & (moment < fields.expires_at)).astype(np.float64)
    fresh = recency(fields.updated_us, now, settings.recency_half_life_days)
    score = validity * (settings.relevance_weight * relevance + settings.importance_weight * fields.importance
                        + settings.recency_weight * fresh)
    negative = (-score).tolist()
    order = sorted(range(len(pool.ids)), key=lambda i: (negative[i], pool.ids[i]))
    at = np.array(order, dtype=np.int64)
    return Ranked([pool.ids[i] for i in order], score[at], pool.lexical[at], pool.vector[at], relevance[at],
                  fresh[at], fields.importance[at], validity[at])


def _content_key(record: MemoryRecord) -> str:
    return " ".join(record.content.lower().split())


def diversify(hits: list[SearchHit]) -> list[SearchHit]:
    """Drop hits whose content repeats a better hit word for word."""
    seen: set[str] = set()
    kept = []
    for hit in hits:
        key = _content_key(hit.record)
        if key not in seen:
            seen.add(key)
            kept.append(hit)
    return kept


def hits_of(store: Store, tenant: str, ranked: Ranked, want: int, *, distinct: bool) -> list[SearchHit]:
    """The first ``want`` hits of ``ranked``, reading only their records (a few more when
    ``distinct`` drops a hit whose content repeats a better one word for word)."""
    hits: list[SearchHit] = []
    seen: set[str] = set()
    start = 0
    while len(hits) < want and start < len(ranked.ids):
        stop = min(len(ranked.ids), start + (want - len(hits)) + (2 if distinct else 0))
        records = {record.id: record for record in store.get(tenant, ranked.ids[start:stop])}
        for i in range(start, stop):
            record = records.get(ranked.ids[i])
            if record is None or len(hits) >= want:
                continue
            if distinct:
                key = _content_key(record)
                if key in seen:
                    continue
                seen.add(key)
            hits.append(SearchHit(record, float(ranked.score[i]), ranked.signals(i)))
        start = stop
    return hits


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
    hits = _ranked(store, embedder.name, tenant, where, ask, settings.pool, settings, now, parts,
                   want=min(k, settings.pool))
    if k > settings.pool:
        seen = {hit.record.id for hit in hits}
        deeper = _ranked(store, embedder.name, tenant, where, ask, 3 * k, settings, now, parts, want=3 * k)
        hits += [hit for hit in deeper if hit.record.id not in seen]
    return with_overlap(hits[:k], ask.terms, tokenizer)


def _ranked(
    store: Store, model: str, tenant: str, where: RecordFilter, ask: Ask, pool: int, settings: RetrievalSettings,
    now: datetime, parts: tuple[int, ...] = (), *, want: int,
) -> list[SearchHit]:
    """The best ``want`` hits of a pool of ``pool`` candidates. The pool is fused,
    lifted and reranked as columns (store.rank_fields: nothing decoded); only the
    records of the hits returned are read."""
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
    fused: Pool
    if settings.fusion == "rrf":
        fused = fuse_rrf(lexical, vector, share, settings.rrf_k)
    else:
        missing = {} if cosines else _missing_vector_scores(store, model, tenant, lexical, vector, ask.vector)
        if settings.fusion == "minmax" and settings.retriever == "hybrid":
            fused = fuse_minmax(lexical, vector, missing, share, depth=settings.pool)
        else:
            fused = fuse_weighted(lexical, vector, missing, share)
    if cosines:  # the signal stays the (mean) cosine; the z-fused score only ranked
        fused = replace(fused, vector=np.maximum(_column([cosines.get(key, 0.0) for key in fused.ids]), 0.0))
    fused = fused.best(pool)
    fields = store.rank_fields(tenant, fused.ids, model)
    at = {key: index for index, key in enumerate(fields.ids)}
    found = [index for index, key in enumerate(fused.ids) if key in at]  # a record gone meanwhile drops out
    fused = fused.take(np.array(found, dtype=np.int64))
    fields = _aligned(fields, [at[key] for key in fused.ids])
    relevance = lift_by_context(fused.relevance, fields.threads, fields.valid_from, settings)
    if window is not None:
        relevance = lift_inside(relevance, fields.valid_from, window, settings.time_weight)
    ranked = rerank(fused, fields, relevance, settings, now)
    return hits_of(store, tenant, ranked, want, distinct=settings.diversify)


def _aligned(fields: RankFields, order: list[int]) -> RankFields:
    if order == list(range(len(fields.ids))):
        return fields
    at = np.array(order, dtype=np.int64)
    return RankFields(tuple(fields.ids[i] for i in order), fields.importance[at], fields.updated_us[at],
                      fields.valid_from[at], fields.valid_to[at], fields.expires_at[at], fields.deleted[at],
                      tuple(fields.threads[i] for i in order))


def with_overlap(hits: Sequence[SearchHit], terms: Sequence[str], tokenizer: Tokenizer) -> list[SearchHit]:
    """The share of query terms each hit's text holds (the relevance floor's second test).
    Not part of the score, so it is computed only for the hits returned, not the whole pool."""
    out = []
    for hit in hits:
        s = hit.signals
        share = term_overlap(terms, tokenizer.query_terms(hit.record.indexed_text))
        out.append(SearchHit(hit.record, hit.score, Signals(s.lexical, s.vector, s.relevance, s.recency,
                                                              s.importance, s.validity, share)))
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
