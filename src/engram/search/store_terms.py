"""Which tokenizer a store's lexical terms came from, and what this process uses.

The tokenizer is a property of the store, not of the process: a store records the
name of the tokenizer that made its terms (``Tokenizer.name``, e.g. "v2:bigram") in
its store-wide settings, and every writer and searcher of that store uses that
tokenizer. Two ``Memory`` objects over two stores in one process each use their own.

A store whose terms came from another tokenizer (an engram before tokenizer v2,
which recorded nothing, or another CJK mode) has *stale* terms: the query terms of
this process would not match them. The facade then rebuilds them through the
reindex path (one ``reindex`` version and audit row per record) or refuses to open,
naming the command (``Settings.rebuild_terms``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..store.base import Store
from .tokenize import CJK_MODES, TOKENIZER_VERSION, CJKMode, Tokenizer

TOKENIZER_KEY = "tokenizer"
# What an engram before tokenizer v2 left: terms, and no record of how they were made.
LEGACY_TOKENIZER = "v1"


@dataclass(frozen=True, slots=True)
class StoreTerms:
    """The tokenizer this process uses on a store, and the one its terms came from."""

    tokenizer: Tokenizer
    stored: str

    @property
    def stale(self) -> bool:
        return self.stored != self.tokenizer.name


def tokenizer_named(name: str) -> Tokenizer | None:
    """The tokenizer a recorded name stands for, if this engram still makes its terms."""
    version, _, mode = name.partition(":")
    if version != f"v{TOKENIZER_VERSION}" or mode not in CJK_MODES:
        return None
    return Tokenizer(mode)  # type: ignore[arg-type]  # checked against CJK_MODES


def store_terms(store: Store, requested: CJKMode | None) -> StoreTerms:
    """The store's tokenizer (``requested`` None) or the requested one, and whether the
    stored terms match it. An empty store records what it will be indexed with."""
    stored = store.meta(TOKENIZER_KEY)
    if stored is None:
        if store.tenants():
            stored = LEGACY_TOKENIZER
        else:
            first = Tokenizer(requested) if requested else Tokenizer()
            stored = store.set_meta(TOKENIZER_KEY, first.name, only_if_absent=True)
    own = tokenizer_named(stored)
    wanted = Tokenizer(requested) if requested else (own or Tokenizer())
    return StoreTerms(wanted, stored)


def record_tokenizer(store: Store, tokenizer: Tokenizer) -> None:
    """After every record's terms were rebuilt with ``tokenizer``."""
    store.set_meta(TOKENIZER_KEY, tokenizer.name)
