from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engram import FakeClock, FakeHashEmbedder, Memory

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def memory(tmp_path):
    mem = Memory.open(str(tmp_path / "memory.db"), embedder=FakeHashEmbedder())
    yield mem
    mem.close()


@pytest.fixture
def clocked_memory(tmp_path, clock):
    mem = Memory.open(str(tmp_path / "clocked.db"), embedder=FakeHashEmbedder(), clock=clock)
    yield mem
    mem.close()
