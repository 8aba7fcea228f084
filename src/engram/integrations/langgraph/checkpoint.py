"""Short-term memory for engram's graphs: LangGraph's own checkpointers, chosen to
sit beside the engram store (SqliteSaver next to the SQLite file, PostgresSaver on
the same PostgreSQL server). engram never rewrites what LangGraph already does."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from ...memory import Memory


def checkpoint_target(memory: Memory) -> str:
    """Where threads live: a ``postgresql://`` URL, a SQLite path or ":memory:"."""
    if memory.dialect == "postgres":
        url = memory.location
        if not url.startswith(("postgresql://", "postgres://")):
            raise ConfigError("engram runs on PostgreSQL but its URL is unknown; pass checkpointer=PostgresSaver(...)")
        return url
    path = memory.location
    if path == ":memory:":
        return path
    db = Path(path)
    return str(db.with_name(db.stem + ".threads.sqlite"))


def default_checkpointer(memory: Memory, target: str | None = None) -> Any:
    """SqliteSaver (``<db>.threads.sqlite`` beside engram's file) or PostgresSaver
    (same server) when engram runs on PostgreSQL. The saver owns its connection;
    close it with ``close_checkpointer``."""
    where = target or checkpoint_target(memory)
    if where.startswith(("postgresql://", "postgres://")):
        try:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg import Connection
            from psycopg.rows import dict_row
        except ImportError as exc:
            raise ConfigError("PostgreSQL threads need langgraph-checkpoint-postgres (pip install "
                              "'engram-agentmem[langgraph,postgres]')") from exc
        conn = Connection.connect(where, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        saver = PostgresSaver(conn)
        saver.setup()
        return saver
    try:
        from langgraph.checkpoint.sqlite import SqliteSaver
    except ImportError as exc:
        raise ConfigError("threads need langgraph-checkpoint-sqlite "
                          "(pip install 'engram-agentmem[langgraph]')") from exc
    if where != ":memory:":
        Path(where).parent.mkdir(parents=True, exist_ok=True)
    sqlite_saver = SqliteSaver(sqlite3.connect(where, check_same_thread=False))
    sqlite_saver.setup()
    return sqlite_saver


def close_checkpointer(saver: Any) -> None:
    conn = getattr(saver, "conn", None)
    if conn is not None and hasattr(conn, "close"):
        conn.close()
