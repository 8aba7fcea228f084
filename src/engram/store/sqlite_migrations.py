"""Append-only numbered migrations for the SQLite backend. Never edit a shipped one."""

from __future__ import annotations

from collections.abc import Callable
from sqlite3 import Connection

from .episodes_sql import SQLITE_MIGRATION as EPISODES
from .governance_sql import SQLITE_MIGRATION as GOVERNANCE
from .sqlite_lexical import migrate as scoped_postings
from .sqlite_vectors import migrate as vector_chunks

APPLICATION_ID = 0x656E6772  # "engr": marks a SQLite file as engram's

# a migration is SQL statements, or a function of the connection for what SQL alone cannot do
MIGRATIONS: tuple[tuple[int, str, str | Callable[[Connection], None]], ...] = (
    (
        1,
        "initial schema",
        """
        CREATE TABLE engram_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE memories (
            rowid INTEGER PRIMARY KEY,
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            namespace TEXT NOT NULL,
            kind TEXT NOT NULL,
            content TEXT NOT NULL,
            category TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}',
            importance REAL NOT NULL,
            confidence REAL NOT NULL,
            sensitivity TEXT NOT NULL,
            status TEXT NOT NULL,
            version INTEGER NOT NULL,
            valid_from REAL NOT NULL,
            valid_to REAL,
            expires_at REAL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_accessed_at REAL,
            access_count INTEGER NOT NULL DEFAULT 0,
            actor TEXT NOT NULL,
            thread_id TEXT,
            message_id TEXT,
            embedding_model TEXT,
            embedding BLOB,
            read_only INTEGER NOT NULL DEFAULT 0,
            supersedes TEXT,
            superseded_by TEXT,
            UNIQUE (tenant, id)
        );
        CREATE INDEX memories_scope ON memories (tenant, namespace, status);
        CREATE INDEX memories_created ON memories (tenant, created_at);
        CREATE TABLE memory_versions (
            tenant TEXT NOT NULL,
            record_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            operation TEXT NOT NULL,
            actor TEXT NOT NULL,
            at REAL NOT NULL,
            reason TEXT,
            snapshot TEXT,
            PRIMARY KEY (tenant, record_id, version)
        );
        CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            at REAL NOT NULL,
            actor TEXT NOT NULL,
            operation TEXT NOT NULL,
            record_id TEXT,
            version INTEGER,
            namespace TEXT,
            source_message_id TEXT,
            detail TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX audit_record ON audit_log (tenant, record_id);
        CREATE INDEX audit_time ON audit_log (tenant, at);
        CREATE TABLE tenant_state (tenant TEXT PRIMARY KEY, seq INTEGER NOT NULL);
        CREATE VIRTUAL TABLE memory_fts USING fts5 (
            terms, scope, tokenize = 'unicode61 remove_diacritics 0'
        );
        """,
    ),
    (
        2,
        "durable background jobs",
        """
        CREATE TABLE jobs (
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            status TEXT NOT NULL,
            payload TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            max_attempts INTEGER NOT NULL,
            next_attempt_at REAL NOT NULL,
            lease_until REAL,
            last_error TEXT,
            result TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (tenant, id)
        );
        CREATE INDEX jobs_due ON jobs (status, next_attempt_at)
        """,
    ),
    (
        3,
        "the message a memory replies to",
        """
        ALTER TABLE memories ADD COLUMN reply_to TEXT;
        CREATE INDEX memories_thread ON memories (tenant, thread_id, valid_from) WHERE thread_id IS NOT NULL
        """,
    ),
    (4, "governance: pending changes, recalls, write samples", GOVERNANCE),
    (5, "episodes: threads, turns, consolidation watermarks and leases", EPISODES),
    (6, "lexical postings and BM25 statistics per scope (no file-wide FTS5 index)", scoped_postings),
    (7, "a memory pinned into or out of the user's profile (NULL: engram decides)",
     "ALTER TABLE memories ADD COLUMN pinned INTEGER"),
    (8, "vectors packed per scope in chunks with the fields search filters and ranks on", vector_chunks),
    (
        9,
        "who a memory is about and which slot of theirs it sets",
        """
        ALTER TABLE memories ADD COLUMN subject TEXT NOT NULL DEFAULT 'user';
        ALTER TABLE memories ADD COLUMN slot TEXT
        """,
    ),
)
