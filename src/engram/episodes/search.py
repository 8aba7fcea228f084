"""``search_past_conversations``: past turns found by words (BM25 over the turns'
lexical terms, indexed at write time) and by meaning (vectors computed lazily, the
first time a scope is searched or consolidated), fused, and returned as thread
excerpts: each matching turn with its neighbours, its thread and its time."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..core import WriteCore
from ..errors import InvalidValueError
from ..limits import check_unicode
from ..model import Scope
from ..reads import ReadContext
from ..values.episodes import EpisodeWrites, Turn, TurnQuery, TurnVector

BM25_K1, BM25_B = 1.2, 0.75
POOL = 200
CANDIDATES = 2000  # matching turns read per search, newest first, all scored; the best POOL are kept
EMBED_BATCH = 256


@dataclass(frozen=True, slots=True)
class ExcerptTurn:
    seq: int
    role: str
    content: str
    at: datetime
    message_id: str | None
    name: str | None
    matched: bool  # the turn the query found (others are its neighbours)


@dataclass(frozen=True, slots=True)
class ThreadExcerpt:
    thread_id: str
    namespace: tuple[str, ...]
    score: float
    at: datetime  # when the best matching turn was said
    turns: tuple[ExcerptTurn, ...]

    @property
    def text(self) -> str:
        return "\n".join(f"{t.role}: {t.content}" for t in self.turns)


@dataclass(frozen=True, slots=True)
class SearchOptions:
    k: int = 5
    window: int = 1  # neighbours on each side of a matching turn
    descendants: bool = False
    lexical_weight: float = 0.5
    embed_limit: int = 2048  # turns embedded lazily per call at most (newest first)
    before: datetime | None = None  # only turns said before this moment


def search_turns(core: WriteCore, scope: Scope, query: str, options: SearchOptions) -> list[ThreadExcerpt]:
    ranked = rank_turns(core, scope, query, options)
    turns = {turn.seq: turn for turn, _ in ranked}
    scores = {turn.seq: score for turn, score in ranked}
    return _excerpts(core.reads, scope, [turn.seq for turn, _ in ranked], turns, scores, options)


def rank_turns(core: WriteCore, scope: Scope, query: str, options: SearchOptions) -> list[tuple[Turn, float]]:
    """Every candidate turn with its fused score, best first (the turn-level ranking
    the excerpts are built from). Takes the write core only to embed turns that have no
    vector yet (``embed_missing``); everything else reads."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidValueError("query must be a non-empty string")
    check_unicode(query, "query")
    if options.k <= 0 or options.window < 0:
        raise InvalidValueError("k must be positive and window >= 0")
    reads = core.reads
    lexical = _lexical(reads, scope, query, options.descendants)
    vector = _semantic(core, scope, query, options)
    scores = _fuse(lexical, vector, options.lexical_weight)
    turns = {seq: turn for seq, (turn, _) in lexical.items()}
    missing = [seq for seq in scores if seq not in turns]
    if missing:
        turns.update({t.seq: t for t in reads.store.turns(scope.tenant, TurnQuery(
            scope.namespace, descendants=options.descendants, seqs=tuple(missing), limit=len(missing)))})
    ranked = sorted((seq for seq in scores if seq in turns and _said_before(turns[seq], options.before)),
                    key=lambda seq: (-scores[seq], -seq))
    return [(turns[seq], scores[seq]) for seq in ranked]


def _said_before(turn: Turn, before: datetime | None) -> bool:
    return before is None or turn.at < before


def _lexical(reads: ReadContext, scope: Scope, query: str, descendants: bool) -> dict[int, tuple[Turn, float]]:
    terms = reads.tokenizer.query_terms(query)
    found = reads.store.turn_candidates(scope.tenant, scope.namespace, descendants, terms, CANDIDATES)
    if not found:
        return {}
    total = max(reads.store.turn_count(scope.tenant, scope.namespace, descendants), len(found))
    docs = [Counter(t.terms.split()) for t in found]
    avgdl = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    df = {term: sum(1 for d in docs if term in d) for term in terms}
    out = {}
    for turn, counts in zip(found, docs):
        length = sum(counts.values())
        score = 0.0
        for term in terms:
            tf = counts.get(term, 0)
            if tf:
                idf = math.log(1 + (total - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / avgdl))
        if score > 0:
            out[turn.seq] = (turn, score)
    best = sorted(out, key=lambda seq: (-out[seq][1], -seq))[:POOL]
    return {seq: out[seq] for seq in best}


def embed_missing(core: WriteCore, scope: Scope, descendants: bool, limit: int) -> int:
    """Give vectors to the scope's turns that have none from the current model (newest
    first, at most ``limit``), in batches, each batch one write. Returns how many."""
    model, done = core.embedder.name, 0
    while done < limit:
        todo = core.store.turns(scope.tenant, TurnQuery(scope.namespace, descendants=descendants,
                                                        without_vector=model, newest_first=True,
                                                        limit=min(EMBED_BATCH, limit - done)))
        if not todo:
            break
        vectors = core.embedder.embed([t.content for t in todo])
        core.commit([], tenant=scope.tenant, episodes=EpisodeWrites(
            vectors=tuple(TurnVector(t.seq, model, v) for t, v in zip(todo, vectors))))
        done += len(todo)
        if len(todo) < EMBED_BATCH:
            break
    return done


def _semantic(core: WriteCore, scope: Scope, query: str, options: SearchOptions) -> dict[int, float]:
    if options.lexical_weight >= 1.0:
        return {}
    reads = core.reads
    if not _read_only(reads):
        embed_missing(core, scope, options.descendants, options.embed_limit)
    return _vector_scores(reads, scope, query, options)


def _read_only(reads: ReadContext) -> bool:
    return bool(getattr(reads.store, "read_only", False))


def _vector_scores(reads: ReadContext, scope: Scope, query: str, options: SearchOptions) -> dict[int, float]:
    """The best turns by cosine to the query, over the stored turn vectors of the
    current model."""
    model = reads.embedder.name
    stored = reads.store.turn_vectors(scope.tenant, scope.namespace, options.descendants, model)
    if _read_only(reads):  # nothing may be written (a read-only file): turns without one are embedded for this search
        todo = reads.store.turns(scope.tenant, TurnQuery(scope.namespace, descendants=options.descendants,
                                                         without_vector=model, newest_first=True,
                                                         limit=options.embed_limit))
        if todo:
            stored.update(zip((t.seq for t in todo), reads.embedder.embed([t.content for t in todo])))
    if not stored:
        return {}
    seqs = np.fromiter(stored.keys(), dtype=np.int64, count=len(stored))
    matrix = np.vstack(list(stored.values()))
    scores = matrix @ reads.embedder.embed([query], role="query")[0]
    top = np.argsort(-scores)[:POOL]
    return {int(seqs[i]): float(scores[i]) for i in top}


def _minmax(scores: dict[int, float]) -> dict[int, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    return {seq: (value - low) / span if span > 0 else 1.0 for seq, value in scores.items()}


def _fuse(lexical: dict[int, tuple[Turn, float]], vector: dict[int, float], weight: float) -> dict[int, float]:
    lex = _minmax({seq: score for seq, (_, score) in lexical.items()})
    vec = _minmax(vector)
    if not vec:
        return lex
    if not lex:
        return vec
    return {seq: weight * lex.get(seq, 0.0) + (1 - weight) * vec.get(seq, 0.0) for seq in {*lex, *vec}}


def _excerpts(reads: ReadContext, scope: Scope, ranked: list[int], turns: dict[int, Turn], scores: dict[int, float],
              options: SearchOptions) -> list[ThreadExcerpt]:
    """The best matches, one excerpt per thread (a thread's later matches join its
    excerpt), each with ``window`` neighbours on both sides."""
    chosen: dict[tuple[tuple[str, ...], str], list[int]] = {}
    for seq in ranked:
        key = (turns[seq].namespace, turns[seq].thread_id)
        if key not in chosen and len(chosen) >= options.k:
            continue
        chosen.setdefault(key, []).append(seq)
    out = []
    for (namespace, thread), seqs in chosen.items():
        around: dict[int, Turn] = {}
        for seq in seqs[:3]:  # the thread's three best matches and their neighbours
            around.update(_neighbours(reads, scope.tenant, turns[seq], options.window))
        best = seqs[0]
        matched = set(seqs)
        out.append(ThreadExcerpt(thread, namespace, round(scores[best], 4), turns[best].at, tuple(
            ExcerptTurn(t.seq, t.role, t.content, t.at, t.message_id, t.name, t.seq in matched)
            for t in sorted(around.values(), key=lambda t: t.seq))))
    return out


def _neighbours(reads: ReadContext, tenant: str, turn: Turn, window: int) -> dict[int, Turn]:
    found = {turn.seq: turn}
    if window:
        query = TurnQuery(turn.namespace, thread_id=turn.thread_id, upto_seq=turn.seq - 1, newest_first=True,
                          limit=window)
        found.update({t.seq: t for t in reads.store.turns(tenant, query)})
        after = TurnQuery(turn.namespace, thread_id=turn.thread_id, after_seq=turn.seq, limit=window)
        found.update({t.seq: t for t in reads.store.turns(tenant, after)})
    return found
