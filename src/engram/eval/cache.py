"""An on-disk embedding cache, so benchmark sweeps never embed the same text twice.

Keyed by model name + role + the text's SHA-256; rows are the embedder's own
normalized float32 vectors. One SQLite file (WAL), safe for parallel runs.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..embed.base import Embedder, Role, checked_rows

DEFAULT_CACHE_DIR = ".engram/cache"


def default_cache_dir() -> Path:
    return Path(os.environ.get("ENGRAM_EVAL_CACHE") or DEFAULT_CACHE_DIR)


class CachedEmbedder:
    """Wraps an embedder; same ``name`` and ``dim``, so stored vectors are the model's."""

    def __init__(self, inner: Embedder, directory: str | Path | None = None, batch: int = 256) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.batch = batch
        folder = Path(directory) if directory is not None else default_cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "embeddings.sqlite"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self.hits = self.misses = 0

    def _key(self, text: str, role: Role) -> str:
        return hashlib.sha256(f"{self.name}\x00{self.dim}\x00{role}\x00{text}".encode()).hexdigest()

    def embed(self, texts: Sequence[str], *, role: Role = "passage") -> np.ndarray:
        keys = [self._key(text, role) for text in texts]
        found = self._lookup(keys)
        missing = sorted({i for i, key in enumerate(keys) if key not in found}, key=lambda i: len(texts[i]))
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        for start in range(0, len(missing), self.batch):
            chunk = missing[start : start + self.batch]
            rows = self.inner.embed([texts[i] for i in chunk], role=role)
            fresh = {keys[i]: row for i, row in zip(chunk, rows)}
            self._store(fresh)
            found.update(fresh)
        return checked_rows(self.name, self.dim, texts, [found[key] for key in keys])

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                for key, blob in self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk):
                    row = np.frombuffer(blob, dtype="<f4")
                    if row.shape == (self.dim,):
                        out[key] = row
        return out

    def _store(self, rows: dict[str, np.ndarray]) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                [(key, np.asarray(row, dtype="<f4").tobytes()) for key, row in rows.items()],
            )
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()
