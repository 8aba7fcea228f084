"""Append-only numbered migrations for the PostgreSQL backend. Never edit a shipped one.

Every table that holds tenant data has ``tenant_id`` as the first column of its
primary key, so Citus can distribute it by tenant (docs/POSTGRES.md). Row-level
security is forced (it binds the table owner too): a transaction sees only the
tenant named by ``SET LOCAL engram.tenant``. A read-only wildcard (chr(31) || 'all',
which no tenant label can spell) exists
for the two cross-tenant reads (``tenants()`` and ``stats()`` without a tenant)
and never allows a write.

``{schema}`` is replaced by the store's schema name (validated, quoted).
"""

from __future__ import annotations

from typing import Any

import psycopg

from ..errors import ConnectionLostError, EngramError, MigrationError, NotAnEngramDatabaseError
from .episodes_sql import POSTGRES_MIGRATION as EPISODES
from .episodes_sql import POSTGRES_TABLES as EPISODE_TABLES
from .governance_sql import POSTGRES_MIGRATION as GOVERNANCE
from .governance_sql import POSTGRES_TABLES as GOVERNANCE_TABLES

TENANT_SETTING = "engram.tenant"
# Tenant labels refuse control characters, so no tenant can be called this.
ALL_TENANTS = "\x1fall"
TENANT_TABLES = ("memories", "memory_versions", "audit_log", "lexicon", "tenant_state", "jobs")  # as of migration 1

_CURRENT = f"current_setting('{TENANT_SETTING}', true)"


def _rls(table: str) -> str:
    own = f"tenant_id = {_CURRENT}"
    return f"""
        ALTER TABLE {{schema}}.{table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE {{schema}}.{table} FORCE ROW LEVEL SECURITY;
        CREATE POLICY tenant_read ON {{schema}}.{table} FOR SELECT
            USING ({own} OR {_CURRENT} = chr(31) || 'all');
        CREATE POLICY tenant_insert ON {{schema}}.{table} FOR INSERT WITH CHECK ({own});
        CREATE POLICY tenant_update ON {{schema}}.{table} FOR UPDATE USING ({own}) WITH CHECK ({own});
        CREATE POLICY tenant_delete ON {{schema}}.{table} FOR DELETE USING ({own});
    """


MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "initial schema",
        """
        CREATE TABLE {schema}.memories (
            tenant_id text COLLATE "C" NOT NULL,
            id text COLLATE "C" NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            namespace text COLLATE "C" NOT NULL,
            kind text NOT NULL,
            content text NOT NULL,
            category text,
            tags jsonb NOT NULL DEFAULT '[]',
            metadata jsonb NOT NULL DEFAULT '{{}}',
            importance double precision NOT NULL,
            confidence double precision NOT NULL,
            sensitivity text NOT NULL,
            status text NOT NULL,
            version integer NOT NULL,
            valid_from timestamptz NOT NULL,
            valid_to timestamptz,
            expires_at timestamptz,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            last_accessed_at timestamptz,
            access_count integer NOT NULL DEFAULT 0,
            actor text NOT NULL,
            thread_id text,
            message_id text,
            embedding_model text,
            embedding vector,
            read_only boolean NOT NULL DEFAULT false,
            supersedes text,
            superseded_by text,
            tf jsonb NOT NULL DEFAULT '{{}}',
            doc_len integer NOT NULL DEFAULT 0,
            tsv tsvector NOT NULL DEFAULT ''::tsvector,
            PRIMARY KEY (tenant_id, id)
        );
        -- Vectors out of line: lexical and filter scans then read ~1 KB rows instead of ~3 KB
        -- (a 512-d vector is 2 KB); HNSW searches read vectors from the index, and exact
        -- searches fetch them only for the rows of the scope.
        ALTER TABLE {schema}.memories ALTER COLUMN embedding SET STORAGE EXTERNAL;
        ALTER TABLE {schema}.memories SET (toast_tuple_target = 1024);
        CREATE INDEX memories_scope ON {schema}.memories (tenant_id, namespace, status);
        CREATE INDEX memories_created ON {schema}.memories (tenant_id, created_at, seq);
        CREATE INDEX memories_terms ON {schema}.memories USING gin (tsv) WITH (fastupdate = off);
        CREATE TABLE {schema}.memory_versions (
            tenant_id text COLLATE "C" NOT NULL,
            record_id text COLLATE "C" NOT NULL,
            version integer NOT NULL,
            operation text NOT NULL,
            actor text NOT NULL,
            at timestamptz NOT NULL,
            reason text,
            snapshot jsonb,
            PRIMARY KEY (tenant_id, record_id, version)
        );
        CREATE TABLE {schema}.audit_log (
            tenant_id text COLLATE "C" NOT NULL,
            id bigint GENERATED ALWAYS AS IDENTITY,
            at timestamptz NOT NULL,
            actor text NOT NULL,
            operation text NOT NULL,
            record_id text,
            version integer,
            namespace text COLLATE "C",
            source_message_id text,
            detail jsonb NOT NULL DEFAULT '{{}}',
            PRIMARY KEY (tenant_id, id)
        );
        CREATE INDEX audit_record ON {schema}.audit_log (tenant_id, record_id);
        CREATE INDEX audit_time ON {schema}.audit_log (tenant_id, at);
        CREATE TABLE {schema}.lexicon (
            tenant_id text COLLATE "C" NOT NULL,
            term text COLLATE "C" NOT NULL,
            df bigint NOT NULL,
            PRIMARY KEY (tenant_id, term)
        );
        CREATE TABLE {schema}.tenant_state (
            tenant_id text COLLATE "C" NOT NULL PRIMARY KEY,
            docs bigint NOT NULL,
            total_len bigint NOT NULL
        );
        CREATE TABLE {schema}.jobs (
            tenant_id text COLLATE "C" NOT NULL,
            id text COLLATE "C" NOT NULL,
            status text NOT NULL,
            payload jsonb NOT NULL,
            attempts integer NOT NULL DEFAULT 0,
            max_attempts integer NOT NULL,
            next_attempt_at timestamptz NOT NULL,
            lease_until timestamptz,
            last_error text,
            result jsonb,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (tenant_id, id)
        );
        CREATE INDEX jobs_due ON {schema}.jobs (status, next_attempt_at);
        """
        + "".join(_rls(table) for table in TENANT_TABLES),
    ),
    (
        2,
        "the message a memory replies to",
        """
        ALTER TABLE {schema}.memories ADD COLUMN reply_to text;
        CREATE INDEX memories_thread ON {schema}.memories (tenant_id, thread_id, valid_from)
            WHERE thread_id IS NOT NULL;
        """,
    ),
    (3, "governance: pending changes, recalls, write samples",
     GOVERNANCE + "".join(_rls(table) for table in GOVERNANCE_TABLES)),
    (4, "episodes: threads, turns, consolidation watermarks",
     EPISODES + "".join(_rls(table) for table in EPISODE_TABLES)),
    (5, "lexical statistics per scope (tenant, namespace)",
     """
        CREATE TABLE {schema}.scope_lexicon (
            tenant_id text COLLATE "C" NOT NULL,
            term text COLLATE "C" NOT NULL,
            namespace text COLLATE "C" NOT NULL,
            df bigint NOT NULL,
            PRIMARY KEY (tenant_id, term, namespace)
        );
        CREATE TABLE {schema}.scope_state (
            tenant_id text COLLATE "C" NOT NULL,
            namespace text COLLATE "C" NOT NULL,
            docs bigint NOT NULL,
            total_len bigint NOT NULL,
            PRIMARY KEY (tenant_id, namespace)
        );
        SELECT set_config('engram.tenant', chr(31) || 'all', true);
        INSERT INTO {schema}.scope_lexicon (tenant_id, term, namespace, df)
            SELECT m.tenant_id, t.term, m.namespace, count(*) FROM {schema}.memories m,
                LATERAL jsonb_object_keys(m.tf) AS t (term) GROUP BY 1, 2, 3;
        INSERT INTO {schema}.scope_state (tenant_id, namespace, docs, total_len)
            SELECT tenant_id, namespace, count(*), sum(doc_len) FROM {schema}.memories GROUP BY 1, 2;
        SELECT set_config('engram.tenant', '', true);
        DROP TABLE {schema}.lexicon;
        DROP TABLE {schema}.tenant_state;
     """ + _rls("scope_lexicon") + _rls("scope_state")),
    # Store-wide settings describing the stored index (the tokenizer of the lexical
    # terms); no tenant column and no row-level security: they are the schema's.
    (6, "store-wide settings", "CREATE TABLE {schema}.engram_meta (key text PRIMARY KEY, value text NOT NULL);"),
    (7, "a memory pinned into or out of the user's profile (NULL: engram decides)",
     "ALTER TABLE {schema}.memories ADD COLUMN pinned boolean;"),
    (8, "who a memory is about and which slot of theirs it sets",
     "ALTER TABLE {schema}.memories ADD COLUMN subject text NOT NULL DEFAULT 'user';"
     "ALTER TABLE {schema}.memories ADD COLUMN slot text;"),
)


def migrate(conninfo: str, kwargs: dict[str, Any], schema: str) -> None:
    """Bring the schema to the latest version, once, whoever else is starting now."""
    try:
        with psycopg.connect(conninfo, **kwargs) as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"engram.migrate.{schema}",))
            _ensure_vector_extension(conn)
            _check_is_engram(conn, schema)
            s = f'"{schema}"'
            if not conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone():
                conn.execute(f"CREATE SCHEMA {s}")  # needs CREATE on the database; an existing schema does not
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {s}.engram_migrations (version integer PRIMARY KEY, "
                "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            applied = {row[0] for row in conn.execute(f"SELECT version FROM {s}.engram_migrations")}
            known = {version for version, _, _ in MIGRATIONS}
            if applied - known:
                raise MigrationError(
                    f"schema {schema} is at version {max(applied)}, newer than this engram knows ({max(known)})"
                )
            for version, name, sql in MIGRATIONS:
                if version not in applied:
                    conn.execute(sql.format(schema=s))
                    conn.execute(f"INSERT INTO {s}.engram_migrations (version, name) VALUES (%s, %s)",
                                 (version, name))
    except EngramError:
        raise
    except psycopg.OperationalError as exc:
        raise ConnectionLostError(f"cannot reach PostgreSQL: {exc}") from exc
    except psycopg.Error as exc:
        raise MigrationError(f"migrating schema {schema} failed: {exc}") from exc


def _ensure_vector_extension(conn: psycopg.Connection) -> None:
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    try:
        with conn.transaction():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise MigrationError(
            "the pgvector extension is not installed and this role may not install it; "
            "run CREATE EXTENSION vector as an administrator once (docs/POSTGRES.md)"
        ) from exc


def _check_is_engram(conn: psycopg.Connection, schema: str) -> None:
    """A schema of that name with tables but no engram_migrations belongs to someone else."""
    tables = {row[0] for row in conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))}
    if tables and "engram_migrations" not in tables:
        raise NotAnEngramDatabaseError(
            f"schema {schema} holds tables engram did not create ({', '.join(sorted(tables)[:5])}); "
            "refusing to touch it"
        )
