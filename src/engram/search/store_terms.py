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

import os
import socket
import time
import uuid
from dataclasses import dataclass

from ..store.base import Store
from ..text.tokenize import CJK_MODES, TOKENIZER_VERSION, CJKMode, Tokenizer

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


REBUILD_KEY = "terms_rebuild"  # "holder until" while one process rebuilds the terms; "" when none does
REBUILD_LEASE_S = 120.0  # renewed after every batch; a holder that died frees it after this long


class RebuildLease:
    """Which process rebuilds a store's stale terms: one only, whoever else opens the
    store meanwhile (three openers of an old file rebuilt it twice: 10,000 duplicate
    versions). A compare-and-swap on a store-wide setting; renewed while it runs."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.held: str | None = None

    def _mine(self) -> str:
        return f"{self.holder} {time.time() + REBUILD_LEASE_S:.3f}"

    def take(self) -> bool:
        current = self.store.set_meta(REBUILD_KEY, "", only_if_absent=True)
        if current:
            _, _, until = current.rpartition(" ")
            try:
                if float(until) > time.time():
                    return False  # another process is rebuilding right now
            except ValueError:
                pass  # unreadable: take it over
        mine = self._mine()
        if self.store.set_meta(REBUILD_KEY, mine, expected=current) != mine:
            return False  # another opener took it first
        self.held = mine
        return True

    def renew(self) -> None:
        if self.held is not None:
            mine = self._mine()
            if self.store.set_meta(REBUILD_KEY, mine, expected=self.held) == mine:
                self.held = mine

    def release(self) -> None:
        if self.held is not None:
            self.store.set_meta(REBUILD_KEY, "", expected=self.held)
            self.held = None


def record_tokenizer(store: Store, tokenizer: Tokenizer) -> None:
    """After every record's terms were rebuilt with ``tokenizer``."""
    store.set_meta(TOKENIZER_KEY, tokenizer.name)
