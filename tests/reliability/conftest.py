"""The reliability suite's scripts (bench/reliability) are importable here: the fast
tests run each of them with small sizes, on SQLite and on PostgreSQL."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parents[2] / "bench" / "reliability"
sys.path.insert(0, str(SUITE))


@pytest.fixture(params=["sqlite", "postgres"])
def backend_name(request) -> str:
    if request.param == "postgres":
        from conformance import pgtools

        if pgtools.SKIP_REASON:
            pytest.skip(pgtools.SKIP_REASON)
        server = pgtools.session_server()
        monkeypatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setenv("ENGRAM_TEST_PG_URL", server.url)
        if server.handle is not None:
            monkeypatch.setenv("ENGRAM_TEST_PG_DATA", str(server.handle.pgdata))
    return request.param
