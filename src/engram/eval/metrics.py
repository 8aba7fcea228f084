"""Ranking metrics, per query and averaged. Pure functions over id lists.

Conventions (../shared/bench/README.md, LongMemEval's eval_utils):
recall@k = share of the gold ids in the top k; hit@k (= recall_any@k) = at
least one; recall_all@k = every one; ndcg_any@k = binary-relevance nDCG with the
ideal ranking putting min(|gold|, k) relevant items first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    wanted = set(gold)
    if not wanted:
        raise ValueError("recall of a query without gold ids is undefined")
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def hit_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    wanted = set(gold)
    return float(any(item in wanted for item in ranked[:k]))


def recall_all_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    wanted = set(gold)
    if not wanted:
        raise ValueError("recall of a query without gold ids is undefined")
    return float(wanted <= set(ranked[:k]))


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    wanted = set(gold)
    if not wanted:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 2) for rank, item in enumerate(ranked[:k]) if item in wanted)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(wanted), k)))
    return dcg / ideal


def group_ranking(ranked: Sequence[str], group_of: Callable[[str], str]) -> list[str]:
    """Documents ranked → their groups (sessions) ranked by first appearance. The
    first k groups are what LongMemEval's turn→session evaluation counts at k."""
    return list(dict.fromkeys(group_of(item) for item in ranked))


def query_metrics(ranked: Sequence[str], gold: Iterable[str], ks: Sequence[int], names: Sequence[str]) -> dict:
    gold = frozenset(gold)
    functions: Mapping[str, Callable[[Sequence[str], Iterable[str], int], float]] = {
        "recall": recall_at, "hit": hit_at, "recall_any": hit_at, "recall_all": recall_all_at, "ndcg_any": ndcg_at,
    }
    return {f"{name}@{k}": functions[name](ranked, gold, k) for name in names for k in ks}


def mean_metrics(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    keys = list(rows[0])
    return {key: sum(row[key] for row in rows) / len(rows) for key in keys}


def summarize(per_query: Sequence[Mapping], metric_key: str = "metrics") -> dict:
    """{"overall": means, "by_category": {category: means}, "n": count} from rows
    holding a ``category`` and a metrics mapping. Nested levels (e.g. "turn" and
    "session") are averaged level by level."""
    def average(rows: Sequence[Mapping]) -> dict:
        values = [row[metric_key] for row in rows]
        if values and all(isinstance(v, Mapping) and all(isinstance(x, Mapping) for x in v.values()) for v in values):
            return {level: mean_metrics([v[level] for v in values]) for level in values[0]}
        return mean_metrics(values)

    by_category: dict[str, list[Mapping]] = {}
    for row in per_query:
        by_category.setdefault(str(row["category"]), []).append(row)
    return {
        "n": len(per_query),
        "overall": average(per_query),
        "by_category": {cat: {"n": len(rows), **average(rows)} for cat, rows in sorted(by_category.items())},
    }
