"""Storage backends behind one narrow protocol (base.Store)."""

from __future__ import annotations

from .base import MetadataCondition, RecordFilter, Store, TimeRange


def open_store(target: str, **options) -> Store:
    """``postgresql://…`` opens the PostgreSQL backend; anything else is a SQLite path
    (``sqlite:///path`` accepted)."""
    if target.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore

        return PostgresStore(target, **options)
    if target.startswith("sqlite:///"):
        target = target[len("sqlite:///") :]
    from .sqlite import SQLiteStore

    return SQLiteStore(target, **options)


__all__ = ["MetadataCondition", "RecordFilter", "Store", "TimeRange", "open_store"]
