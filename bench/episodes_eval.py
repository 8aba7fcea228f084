"""Retrieval over raw turns vs consolidated memories vs both, on LoCoMo and LongMemEval.

    python bench/episodes_eval.py --locomo ../shared/bench/locomo/locomo_dev.json \
        --longmemeval ../shared/bench/longmemeval/longmemeval_s_dev60.json.gz --out bench/results/episodes.json

Per unit (a LoCoMo conversation, a LongMemEval question's haystack) one fresh SQLite
memory: every session is recorded as a thread of turns (``record_turns``, the turns'
own times and ids), the turns are indexed (vectors computed), then ``consolidate()``
runs offline (rule extractor; idle sessions become episodes). Each question is then
answered three ways, k items each:

- turns: ``search_past_conversations``'s turn ranking (BM25 + vectors over turns);
- memories: ``Memory.search`` over the consolidated facts and episodes;
- both: the two rankings fused by reciprocal rank, k items.

recall@k: the share of a question's evidence turns the k items cover (a turn covers
itself; a fact the turns it was extracted from; an episode the turns it quotes).
Session recall_all@k (LongMemEval): every evidence session covered (an episode covers
its session). Context tokens: the estimated tokens of the k items' text.
Consolidation throughput: turns per second of ``consolidate()`` (turn vectors are
computed before it and timed apart).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engram import FakeClock, Memory, PIIPolicy, Scope, Settings, USEEmbedder
from engram.episodes.search import SearchOptions, embed_missing, rank_turns
from engram.eval.data import Dataset, Unit, load
from engram.model import Message
from engram.search.context import estimate_tokens
from engram.store.sqlite import SQLiteStore

SCOPE = Scope("bench", ("users", "u"))
MODES = ("turns-bm25", "turns", "memories", "both")


@dataclass
class Item:
    text: str
    covers: frozenset[str]  # evidence (turn) ids
    sessions: frozenset[str]


def ingest(memory: Memory, unit: Unit) -> dict[str, float]:
    by_session: dict[str, list] = {}
    for doc in unit.docs:
        by_session.setdefault(doc.group or "s", []).append(doc)
    for session, docs in by_session.items():
        turns = [Message(str(d.metadata.get("role", "user")), d.text, d.id, d.metadata.get("speaker"), d.at)
                 for d in sorted(docs, key=lambda d: d.position)]
        memory.threads.record(turns, SCOPE, thread_id=session)
    started = time.perf_counter()
    embed_missing(memory._core, SCOPE, False, 10**9)
    embedded = time.perf_counter() - started
    started = time.perf_counter()
    runs = 0
    while memory.consolidation.run(tenant=SCOPE.tenant).turns:
        runs += 1
    return {"turns": len(unit.docs), "embed_s": embedded, "consolidate_s": time.perf_counter() - started,
            "runs": runs}


def _quoted(episode: str, docs: dict[str, str]) -> frozenset[str]:
    return frozenset(doc_id for doc_id, text in docs.items() if " ".join(text.split())[:60] in episode)


def memory_items(memory: Memory, query: str, k: int, session_docs: dict[str, dict[str, str]]) -> list[Item]:
    items = []
    for hit in memory.search(query, SCOPE, k=k):
        record = hit.record
        if record.kind.value == "episode" and "summarizer" in record.metadata:  # a thread's summary
            thread = str(record.metadata.get("thread_id"))
            covers = _quoted(" ".join(record.content.split()), session_docs.get(thread, {}))
            items.append(Item(record.content, covers, frozenset({thread})))
        else:
            sources = frozenset(str(s) for s in record.metadata.get("source_message_ids", []))
            sessions = frozenset(s for s, docs in session_docs.items() if sources & set(docs))
            items.append(Item(record.content, sources, sessions))
    return items


def turn_items(memory: Memory, query: str, k: int, lexical_weight: float) -> list[Item]:
    ranked = rank_turns(memory._core, SCOPE, query, SearchOptions(k=k, lexical_weight=lexical_weight, embed_limit=0))
    return [Item(t.content, frozenset({t.message_id or ""}), frozenset({t.thread_id})) for t, _ in ranked[:k]]


def fused(first: Sequence[Item], second: Sequence[Item], k: int) -> list[Item]:
    scores: dict[int, float] = {}
    pool = [*first, *second]
    for ranking, offset in ((first, 0), (second, len(first))):
        for rank, _ in enumerate(ranking):
            scores[offset + rank] = 1.0 / (60 + rank + 1)
    return [pool[i] for i in sorted(scores, key=lambda i: -scores[i])[:k]]


def evaluate(dataset: Dataset, embedder, ks: Sequence[int], limit_units: int | None) -> dict:
    rows: dict[str, dict[int, list[dict[str, float]]]] = {m: {k: [] for k in ks} for m in MODES}
    per_unit: dict[str, dict[int, list[float]]] = {m: {k: [] for k in ks} for m in MODES}
    ingest_stats = []
    memory_counts = []
    for unit in dataset.units[:limit_units]:
        path = Path(tempfile.mkdtemp()) / "episodes.db"
        latest = max(d.at for d in unit.docs if d.at is not None)
        clock = FakeClock(latest)
        clock.advance(days=1)  # every session idle: each becomes an episode
        settings = Settings(auto_worker=False, consolidation_budget_tokens=10**9, record_recalls=False)
        with Memory(SQLiteStore(str(path)), embedder=embedder, clock=clock, settings=settings,
                    pii=PIIPolicy(default="allow", actions={})) as memory:
            ingest_stats.append(ingest(memory, unit))
            stats = memory._store.stats(SCOPE.tenant)
            memory_counts.append(dict(stats.by_kind))
            session_docs: dict[str, dict[str, str]] = {}
            for doc in unit.docs:
                session_docs.setdefault(doc.group or "s", {})[doc.id] = doc.text
            first = {m: {k: len(rows[m][k]) for k in ks} for m in MODES}
            for query in unit.queries:
                for k in ks:
                    bm25 = turn_items(memory, query.text, k, 1.0)
                    turns = turn_items(memory, query.text, k, memory.settings.lexical_weight)
                    memories = memory_items(memory, query.text, k, session_docs)
                    for mode, items in (("turns-bm25", bm25), ("turns", turns), ("memories", memories),
                                        ("both", fused(turns, memories, k))):
                        covered = frozenset().union(*(i.covers for i in items)) if items else frozenset()
                        sessions = frozenset().union(*(i.sessions for i in items)) if items else frozenset()
                        row = {"recall": len(query.gold & covered) / len(query.gold),
                               "tokens": float(sum(estimate_tokens(i.text) for i in items))}
                        if query.gold_groups:
                            row["session_recall_all"] = float(query.gold_groups <= sessions)
                        rows[mode][k].append(row)
            for m in MODES:
                for k in ks:
                    mine = rows[m][k][first[m][k]:]
                    per_unit[m][k].append(statistics.fmean(r["recall"] for r in mine))
    turns = sum(s["turns"] for s in ingest_stats)
    consolidate_s = sum(s["consolidate_s"] for s in ingest_stats)
    kinds: dict[str, int] = {}
    for counts in memory_counts:
        for kind, n in counts.items():
            kinds[kind] = kinds.get(kind, 0) + n
    summary = {mode: {str(k): {**{key: statistics.fmean(r[key] for r in rows[mode][k]) for key in rows[mode][k][0]},
                               "unit_recall_min": min(per_unit[mode][k]), "unit_recall_max": max(per_unit[mode][k]),
                               "unit_recall_sd": statistics.pstdev(per_unit[mode][k])}
                      for k in ks} for mode in MODES}
    return {"units": len(ingest_stats), "questions": len(rows["turns"][ks[0]]), "turns": turns,
            "memories_by_kind": kinds, "embed_s": sum(s["embed_s"] for s in ingest_stats),
            "consolidate_s": consolidate_s, "consolidate_turns_per_s": turns / consolidate_s if consolidate_s else 0,
            "per_unit_consolidate_s": [round(s["consolidate_s"], 3) for s in ingest_stats], "results": summary}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path)
    parser.add_argument("--longmemeval", type=Path)
    parser.add_argument("--k", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--units", type=int, default=None, help="first N units of each dataset")
    parser.add_argument("--out", type=Path, default=Path("bench/results/episodes.json"))
    args = parser.parse_args()
    embedder = USEEmbedder()
    out = {}
    if args.locomo:
        out["locomo"] = evaluate(load("locomo", args.locomo), embedder, args.k, args.units)
    if args.longmemeval:
        out["longmemeval"] = evaluate(load("longmemeval", args.longmemeval), embedder, args.k, args.units)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2))
    for name, result in out.items():
        print(f"\n{name}: {result['units']} units, {result['questions']} questions, {result['turns']} turns, "
              f"memories {result['memories_by_kind']}, consolidation {result['consolidate_turns_per_s']:.0f} "
              f"turns/s ({result['consolidate_s']:.1f} s), turn vectors {result['embed_s']:.1f} s")
        for mode, by_k in result["results"].items():
            print(mode, json.dumps(by_k))


if __name__ == "__main__":
    main()
