"""Okapi BM25 as SQLite FTS5 defines it, shared by both backends so they score alike.

Statistics (document count, total length, document frequencies) are kept per scope
(tenant, namespace) and summed over the scopes a query covers: ranking inside one
scope never depends on another scope's data, let alone another tenant's (issue 11:
a shared index let one tenant learn, through its own scores, which words another
tenant stored).
"""

from __future__ import annotations

import math
from collections import Counter

K1 = 1.2
B = 0.75


def idf(docs: int, df: int) -> float:
    """FTS5's IDF: log((N - n + 0.5) / (n + 0.5)), floored at 1e-6."""
    value = math.log((docs - df + 0.5) / (df + 0.5))
    return 1e-6 if value <= 0.0 else value


def term_counts(terms: str) -> Counter[str]:
    return Counter(terms.split())


def doc_length(terms: str, namespace: tuple[str, ...]) -> int:
    """The document length FTS5 counted when engram indexed scope tokens beside the
    terms (one exact, one per ancestor prefix); kept so stored lengths stay valid."""
    return len(terms.split()) + len(namespace) + 2
