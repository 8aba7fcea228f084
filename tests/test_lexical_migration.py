"""Stores written before per-scope lexical statistics (SQLite migration 6, PostgreSQL
migration 5) are migrated in place and then rank exactly like a store written fresh."""

import sqlite3
import uuid

import pytest

from engram import FakeHashEmbedder, Memory, Scope
from engram.store import postgres_migrations
from engram.store import sqlite_vectors as vector_chunks
from engram.store.base import RecordFilter
from engram.store.sqlite import SQLiteStore
from engram.store.sqlite_migrations import MIGRATIONS as SQLITE_MIGRATIONS
from engram.text.tokenize import query_terms

try:
    from conformance import pgtools
except ImportError:  # tests/ collected as a package
    from tests.conformance import pgtools

SCOPES = [Scope("acme", ("users", "ana")), Scope("acme", ("users", "bob")), Scope("globex", ("users", "ana"))]
TEXTS = ["green tea in the morning", "tea with the team on friday", "the harbour at night",
         "friday deploys are frozen", "green light for the harbour project"]
QUERIES = ["green tea", "friday harbour", "team deploys night"]


def _fill(memory: Memory) -> dict[str, tuple[Scope, str]]:
    written = {}
    for n, scope in enumerate(SCOPES):
        for record in memory.remember_many(TEXTS[n:] + [f"note {n} about tea"], scope):
            written[record.id] = (scope, record.content)
    first = next(iter(written))
    scope, _ = written[first]
    memory.update(first, scope, content="green tea, updated")
    memory.purge(list(written)[3], SCOPES[0] if written[list(written)[3]][0] == SCOPES[0] else
                 written[list(written)[3]][0])
    return written


def _rankings(memory: Memory) -> list:
    out = []
    for scope in SCOPES + [Scope("acme", ("users",))]:
        where = RecordFilter(namespace=scope.namespace, descendants=len(scope.namespace) == 1)
        for query in QUERIES:
            hits = memory._store.lexical(scope.tenant, where, query_terms(query), 20)
            contents = {r.id: r.content for r in memory._store.get(scope.tenant, [h.id for h in hits])}
            # ties fall back to record ids, which differ between the two stores
            out.append((scope, query, sorted((-round(h.score, 9), contents[h.id]) for h in hits)))
    return out


def _nearest(memory: Memory) -> list:
    out = []
    for scope in SCOPES:
        vector = memory.embedder.embed(["green tea friday"], role="query")[0]
        hits = memory._store.nearest(scope.tenant, RecordFilter(namespace=scope.namespace), memory.embedder.name,
                                    vector, 10)
        contents = {r.id: r.content for r in memory._store.get(scope.tenant, [h.id for h in hits])}
        out.append(sorted((-round(h.score, 6), contents[h.id]) for h in hits))
    return out


def _as_sqlite_version_7(path: str) -> None:
    """Turn a current file back into what engram wrote before migration 8: one row per
    record's vector in memory_vectors, keyed by scope * 2**32 + record, no chunks."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE memory_vectors (key INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
        for row in conn.execute(f"SELECT {', '.join(vector_chunks.CHUNK_COLUMNS)} FROM vector_chunks").fetchall():
            chunk = vector_chunks.decode(row)
            scope = chunk.key >> 32
            conn.executemany("INSERT INTO memory_vectors (key, embedding) VALUES (?, ?)",
                             [((scope << 32) | doc, vector) for doc, vector in zip(chunk.docs, chunk.vectors)])
        conn.execute("DROP TABLE vector_chunks")
        conn.execute("DROP TABLE vector_slots")
        conn.execute("DELETE FROM schema_migrations WHERE version = 8")


def _as_sqlite_version_4(path: str) -> None:
    """Turn a current file back into what engram wrote before migration 6: one
    file-wide FTS5 table holding each record's terms, vectors in the records' rows, no
    postings, no terms column."""
    _as_sqlite_version_7(path)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE VIRTUAL TABLE memory_fts USING fts5 (terms, scope, "
                     "tokenize = 'unicode61 remove_diacritics 0')")
        conn.execute("INSERT INTO memory_fts (rowid, terms, scope) SELECT rowid, terms, 'sx' FROM memories")
        conn.execute("UPDATE memories SET embedding = (SELECT v.embedding FROM memory_vectors v JOIN scopes s "
                     "ON v.key = (s.id << 32) | memories.rowid WHERE s.tenant = memories.tenant "
                     "AND s.namespace = memories.namespace)")
        conn.execute("DROP TABLE lexical_postings")
        conn.execute("DROP TABLE memory_vectors")
        conn.execute("DROP TABLE scopes")
        conn.execute("ALTER TABLE memories DROP COLUMN terms")
        conn.execute("DELETE FROM schema_migrations WHERE version = 6")  # the later ones stay applied


def test_sqlite_store_at_version_7_packs_its_vectors_and_ranks_like_a_fresh_one(tmp_path):
    """Migration 8 moves each record's vector into its scope's chunks: the same vectors,
    the same nearest neighbours and the same searches as a store written fresh."""
    old_path, fresh_path = str(tmp_path / "old.db"), str(tmp_path / "fresh.db")
    with Memory(SQLiteStore(old_path), embedder=FakeHashEmbedder()) as memory:
        written = _fill(memory)
        ids = {scope.tenant: [key for key, (s, _) in written.items() if s.tenant == scope.tenant] for scope in SCOPES}
        before = {tenant: memory._store.vectors(tenant, keys, memory.embedder.name) for tenant, keys in ids.items()}
    _as_sqlite_version_7(old_path)
    with sqlite3.connect(old_path) as conn:
        assert conn.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] > 0
    with Memory(SQLiteStore(old_path), embedder=FakeHashEmbedder()) as migrated, \
            Memory(SQLiteStore(fresh_path), embedder=FakeHashEmbedder()) as fresh:
        _fill(fresh)
        assert migrated._store.schema_version() == max(m[0] for m in SQLITE_MIGRATIONS)
        assert migrated._store.execute_raw("SELECT name FROM sqlite_master WHERE name = 'memory_vectors'") == []
        for tenant, keys in ids.items():
            after = migrated._store.vectors(tenant, keys, migrated.embedder.name)
            assert after.keys() == before[tenant].keys() and len(after) > 0
            assert all(after[key].tobytes() == before[tenant][key].tobytes() for key in after)
        assert _nearest(migrated) == _nearest(fresh)
        for memory in (migrated, fresh):
            record = memory.remember("green harbour tea", SCOPES[0])
            memory.update(record.id, SCOPES[0], content="green harbour tea twice")
        assert _nearest(migrated) == _nearest(fresh)


def test_sqlite_store_at_version_4_migrates_and_ranks_like_a_fresh_one(tmp_path):
    old_path, fresh_path = str(tmp_path / "old.db"), str(tmp_path / "fresh.db")
    with Memory(SQLiteStore(old_path), embedder=FakeHashEmbedder()) as memory:
        _fill(memory)
    _as_sqlite_version_4(old_path)
    with Memory(SQLiteStore(old_path), embedder=FakeHashEmbedder()) as migrated, \
            Memory(SQLiteStore(fresh_path), embedder=FakeHashEmbedder()) as fresh:
        _fill(fresh)
        assert migrated._store.schema_version() == max(m[0] for m in SQLITE_MIGRATIONS)
        assert _rankings(migrated) == _rankings(fresh)
        assert _nearest(migrated) == _nearest(fresh)
        assert migrated._store.execute_raw("SELECT name FROM sqlite_master WHERE name = 'memory_fts'") == []
        assert migrated._store.execute_raw("SELECT count(*) FROM memories WHERE embedding IS NOT NULL") == [(0,)]
        # and it keeps indexing and unindexing correctly afterwards
        for memory in (migrated, fresh):
            record = memory.remember("green harbour tea", SCOPES[0])
            memory.update(record.id, SCOPES[0], content="green harbour tea twice")
        assert _rankings(migrated) == _rankings(fresh)


@pytest.fixture
def owner_url():
    """A schema owned by a role bound by row-level security (no superuser)."""
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    server = pgtools.session_server()
    suffix = uuid.uuid4().hex[:8]
    owner, schemas = f"engram_mig_{suffix}", [f"mig_{suffix}", f"fresh_{suffix}"]
    server.sql(f"CREATE ROLE {owner} LOGIN NOSUPERUSER NOBYPASSRLS")
    for schema in schemas:
        server.sql(f"CREATE SCHEMA {schema} AUTHORIZATION {owner}")
    yield [(server.url_for(schema=schema, user=owner), schema) for schema in schemas]
    for schema in schemas:
        server.sql(f"DROP SCHEMA {schema} CASCADE")
    server.sql(f"DROP ROLE {owner}")


def _as_postgres_version_3(server, schema: str) -> None:
    """Turn a current schema back into what engram wrote before migration 5: document
    frequencies and lengths per tenant (lexicon, tenant_state), none per scope."""
    s = f'"{schema}"'
    first = postgres_migrations.MIGRATIONS[0][2].format(schema=s)
    parts = [part for part in first.split(";") if f"{s}.lexicon " in part or f"{s}.tenant_state " in part]
    with server.connect() as conn:
        conn.execute(";".join(parts))
        conn.execute(f"INSERT INTO {s}.lexicon SELECT tenant_id, t, count(*) FROM {s}.memories, "
                     "jsonb_object_keys(tf) AS t GROUP BY 1, 2")
        conn.execute(f"INSERT INTO {s}.tenant_state SELECT tenant_id, count(*), sum(doc_len) FROM {s}.memories "
                     "GROUP BY 1")
        conn.execute(f"DROP TABLE {s}.scope_lexicon, {s}.scope_state")
        conn.execute(f"DELETE FROM {s}.engram_migrations WHERE version = 5")  # the others stay applied


def test_postgres_schema_at_version_3_migrates_and_ranks_like_a_fresh_one(owner_url):
    (old_url, old_schema), (fresh_url, _) = owner_url
    with Memory.open(old_url, embedder=FakeHashEmbedder()) as memory:
        _fill(memory)
    _as_postgres_version_3(pgtools.session_server(), old_schema)
    with Memory.open(old_url, embedder=FakeHashEmbedder()) as migrated, \
            Memory.open(fresh_url, embedder=FakeHashEmbedder()) as fresh:
        _fill(fresh)
        assert migrated._store.schema_version() == max(m[0] for m in postgres_migrations.MIGRATIONS)
        assert _rankings(migrated) == _rankings(fresh)
        assert sorted(migrated._store.tenants()) == ["acme", "globex"]
        for memory in (migrated, fresh):
            record = memory.remember("green harbour tea", SCOPES[0])
            memory.update(record.id, SCOPES[0], content="green harbour tea twice")
        assert _rankings(migrated) == _rankings(fresh)
