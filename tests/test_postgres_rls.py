"""Tenant isolation enforced by PostgreSQL itself (row-level security), proven with
raw SQL that has no tenant condition, run as roles RLS applies to: the table
owner (FORCE ROW LEVEL SECURITY) and a plain reader. Superusers and BYPASSRLS
roles skip RLS by design; the store reports which case it runs in."""

from __future__ import annotations

import uuid

import pytest

from engram import FakeHashEmbedder, Memory, Scope, StorageError

try:
    from conformance import pgtools
except ImportError:  # tests/ collected as a package
    from tests.conformance import pgtools

TABLES = ("memories", "memory_versions", "audit_log", "scope_lexicon", "scope_state", "jobs", "pending_changes",
          "recalls", "write_samples", "threads", "turns", "consolidation_state")


@pytest.fixture(scope="module")
def server():
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    server = pgtools.session_server()
    yield server


@pytest.fixture
def setup(server):
    """A schema owned by a non-superuser role, a reader role, and two tenants' data."""
    suffix = uuid.uuid4().hex[:8]
    owner, reader, schema = f"engram_owner_{suffix}", f"engram_reader_{suffix}", f"rls_{suffix}"
    try:
        server.sql(f"CREATE ROLE {owner} LOGIN NOSUPERUSER NOBYPASSRLS")
        server.sql(f"CREATE ROLE {reader} LOGIN NOSUPERUSER NOBYPASSRLS")
    except Exception as exc:  # an external server whose admin URL may not create roles
        pytest.skip(f"cannot create roles on this server: {exc}")
    server.sql(f"CREATE SCHEMA {schema} AUTHORIZATION {owner}")
    owner_url = server.url_for(schema=schema, user=owner)
    memory = Memory.open(owner_url, embedder=FakeHashEmbedder())
    acme, globex = Scope("acme", ("users", "alice")), Scope("globex", ("users", "alice"))
    for scope in (acme, globex):
        record = memory.remember(f"{scope.tenant} secret", scope)
        memory.update(record.id, scope, content=f"{scope.tenant} secret v2")
        memory.context(f"{scope.tenant} secret", scope)  # a recall row per tenant (governance tables)
        memory.threads.record([f"what is the {scope.tenant} weather like?"], scope, thread_id="t")  # episode tables
        memory.consolidation.run(tenant=scope.tenant)  # a consolidation watermark per tenant
    server.sql(f"GRANT USAGE ON SCHEMA {schema} TO {reader}")
    server.sql(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {reader}")
    yield memory, schema, owner, reader
    memory.close()
    server.sql(f"DROP SCHEMA {schema} CASCADE")
    server.sql(f"DROP ROLE {owner}")
    server.sql(f"DROP ROLE {reader}")


def test_a_raw_query_without_tenant_condition_sees_only_its_tenant(setup):
    memory, schema, _, _ = setup
    store = memory._store
    assert store.stats().extra["row_level_security_enforced"] is True
    for table in TABLES:
        tenants = {row[0] for row in store.execute_raw(f"SELECT tenant_id FROM {schema}.{table}", tenant="acme")}
        assert tenants <= {"acme"}, table
    contents = store.execute_raw(f"SELECT content FROM {schema}.memories", tenant="acme")
    assert contents == [("acme secret v2",)]
    assert store.execute_raw(f"SELECT count(*) FROM {schema}.memory_versions", tenant="acme") == [(2,)]
    for table in TABLES:  # no tenant set: nothing at all
        assert store.execute_raw(f"SELECT count(*) FROM {schema}.{table}") == [(0,)], table


def test_writes_to_another_tenant_are_refused_or_touch_nothing(setup):
    memory, schema, _, _ = setup
    store = memory._store
    assert store.execute_raw(f"UPDATE {schema}.memories SET content = 'hacked' RETURNING id", tenant="acme") != []
    assert store.execute_raw(f"DELETE FROM {schema}.memories WHERE tenant_id = 'globex' RETURNING id",
                             tenant="acme") == []
    assert store.execute_raw(f"UPDATE {schema}.audit_log SET actor = 'x' WHERE tenant_id = 'globex' RETURNING id",
                             tenant="acme") == []
    with pytest.raises(StorageError, match="row-level security"):
        store.execute_raw(
            f"INSERT INTO {schema}.scope_lexicon (tenant_id, term, namespace, df) VALUES ('globex', 'injected', '', 1)",
            tenant="acme")
    globex = Scope("globex", ("users", "alice"))
    assert [r.content for r in memory.list(globex).items] == ["globex secret v2"]


def test_a_plain_reader_role_sees_nothing_without_a_tenant(server, setup):
    _, schema, _, reader = setup
    with server.connect(server.url_for(user=reader)) as conn:
        assert conn.execute(f"SELECT count(*) FROM {schema}.memories").fetchone() == (0,)
        conn.execute("SET engram.tenant = 'globex'")
        assert conn.execute(f"SELECT DISTINCT tenant_id FROM {schema}.memories").fetchall() == [("globex",)]
        assert conn.execute(f"UPDATE {schema}.memories SET content = 'x' WHERE tenant_id = 'acme'").rowcount == 0
        conn.execute("SET engram.tenant = '*'")  # a tenant literally named "*", not a wildcard
        assert conn.execute(f"SELECT count(*) FROM {schema}.memories").fetchone() == (0,)


def test_the_cross_tenant_read_is_read_only(setup):
    memory, schema, _, _ = setup
    assert memory._store.tenants() == ["acme", "globex"]
    assert memory.stats().records == 2
    with pytest.raises(StorageError, match="read-only"):
        memory._store._transaction(
            None, lambda conn: conn.execute(f"UPDATE {schema}.memories SET content = 'x'"), write=True)


def test_a_superuser_store_reports_that_rls_does_not_bind_it(server):
    schema = server.new_schema()
    with Memory.open(server.url_for(schema=schema), embedder=FakeHashEmbedder()) as memory:
        assert memory._store.stats().extra["row_level_security_enforced"] is False
    server.drop_schema(schema)


def test_a_bulk_write_goes_through_copy_under_row_level_security(setup):
    """COPY cannot write a table under RLS: batches of 50+ are copied into a temporary
    table and inserted from there, where the tenant policy still applies."""
    memory, schema, _, _ = setup
    acme = Scope("acme", ("users", "bulk"))
    records = memory.remember_many([f"bulk memory {i}" for i in range(80)], acme)
    assert [memory.get(r.id, acme).content for r in records[:3]] == ["bulk memory 0", "bulk memory 1", "bulk memory 2"]
    assert memory._store.execute_raw(f"SELECT count(*) FROM {schema}.memories WHERE namespace LIKE 'users%%bulk%%'",
                                    tenant="globex") == [(0,)]
    assert memory.search("bulk memory 42", acme, k=1)[0].record.id == records[42].id
