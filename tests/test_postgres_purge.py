"""Purge on PostgreSQL leaves the content in dead row versions until VACUUM; after
``store.vacuum(full=True)`` no live file of the schema holds a byte of it (issue 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram import FakeHashEmbedder, Memory, Scope
from engram.store.postgres import PostgresStore

try:
    from conformance import pgtools
except ImportError:  # tests/ collected as a package
    from tests.conformance import pgtools

SECRET = "Zanzibarquux Vexillomancer phoned from 555-0199-8876"
NEEDLES = [b"Zanzibarquux", b"zanzibarquux", b"Vexillomancer", b"vexillomanc", b"0199-8876"]


@pytest.fixture
def server():
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    return pgtools.session_server()


def _traces(server, schema: str) -> list[str]:
    server.sql("CHECKPOINT")  # dirty pages reach the files
    data = Path(server.sql("SHOW data_directory")[0][0])
    paths = server.sql("SELECT pg_relation_filepath(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = "
                       "c.relnamespace WHERE n.nspname = %s AND pg_relation_filepath(c.oid) IS NOT NULL", (schema,))
    found = []
    for (relative,) in paths:
        for file in data.glob(relative + "*"):
            content = file.read_bytes()
            found += [f"{relative}:{needle.decode()}" for needle in NEEDLES if needle in content]
    return found


def test_vacuum_full_after_a_purge_leaves_no_trace_in_the_schemas_files(server):
    schema = server.new_schema()
    try:
        with Memory(PostgresStore(server.url_for(schema=schema)), embedder=FakeHashEmbedder()) as memory:
            scope = Scope("acme", ("users", "ana"))
            memory.remember_many([f"ordinary memory {i} about tea" for i in range(30)], scope)
            secret = memory.remember(SECRET, scope)
            memory.update(secret.id, scope, content=SECRET + " again")
            memory.purge(secret.id, scope, reason="right to be forgotten")
            assert _traces(server, schema)  # dead row versions still hold it: the scan sees them
            memory._store.vacuum(full=True)
            assert _traces(server, schema) == []
            assert len(memory.list(scope).items) == 30
    finally:
        server.drop_schema(schema)
