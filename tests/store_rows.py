"""Raw store batches for tests of the storage layer itself (the library writes only
through the write core; these tests exercise store.apply directly)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engram.model import MemoryRecord
from engram.store.base import RecordWrite, WriteBatch
from engram.text.tokenize import index_text


def creates(tenant: str, rows: Sequence[tuple[MemoryRecord, np.ndarray]]) -> WriteBatch:
    """One batch creating these records with these vectors (no version or audit rows)."""
    return WriteBatch(tenant, records=tuple(RecordWrite(r, index_text(r.indexed_text), v, None) for r, v in rows))
