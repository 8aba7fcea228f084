"""The read context: what code that only reads needs, without the write core.

Readers (the parts' read verbs, the governance and episode readers, the quality
report) take a ``ReadContext``: the store to read, the embedder whose vectors they
compare, the clock, the store's tokenizer, the input limits and the PII policies
(identifiers are looked up as the policy stored them). It has no way to write: every
write goes through ``WriteCore`` (core.py), which hands out its context as
``WriteCore.reads``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .clock import Clock
from .embed.base import Embedder
from .limits import InputLimits
from .pii import PIIPolicies, PIIPolicy
from .store.base import Store
from .text.tokenize import DEFAULT_TOKENIZER, Tokenizer


@dataclass(frozen=True, slots=True)
class ReadContext:
    """Store, embedder, clock, tokenizer, limits and PII policies, for reading only
    (``tests/test_architecture.py`` keeps ``store.apply`` to the write core)."""

    store: Store
    embedder: Embedder
    clock: Clock
    tokenizer: Tokenizer = DEFAULT_TOKENIZER
    limits: InputLimits = field(default_factory=InputLimits)
    pii: PIIPolicies = field(default_factory=PIIPolicies)

    def pii_for(self, tenant: str) -> PIIPolicy:
        return self.pii.for_tenant(tenant)

    def stored_vectors(self, tenant: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these records made by the current embedder."""
        return self.store.vectors(tenant, list(ids), self.embedder.name) if ids else {}
