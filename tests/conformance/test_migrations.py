"""Numbered, append-only migrations with a version table; foreign or newer
databases are refused untouched."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from engram import MigrationError, NotAnEngramDatabaseError
from engram.store import open_store

pytestmark = [pytest.mark.store_admin]  # the store roles it checks (conftest.py, ROLE_MARKERS)


def _latest(backend) -> int:
    if backend.name == "sqlite":
        from engram.store.sqlite_migrations import MIGRATIONS
    else:
        from engram.store.postgres_migrations import MIGRATIONS
    versions = [m[0] for m in MIGRATIONS]
    # numbers are assigned to parallel branches ahead of merging, so one branch alone may
    # skip a number that another one holds; they stay unique and in order
    assert versions == sorted(set(versions)) and versions[0] == 1, "migrations are numbered 1, 2, 3… in order"
    return versions[-1]


def _versions(backend) -> list[int]:
    if backend.name == "sqlite":
        from engram.store.sqlite_migrations import MIGRATIONS
    else:
        from engram.store.postgres_migrations import MIGRATIONS
    return [m[0] for m in MIGRATIONS]


def _version_table(backend) -> str:
    return "schema_migrations" if backend.name == "sqlite" else "engram_migrations"


def test_a_new_database_is_at_the_latest_version(backend):
    assert backend.store().schema_version() == _latest(backend)
    assert backend.store().stats().extra["schema_version"] == _latest(backend)


def test_reopening_keeps_data_and_applies_nothing_twice(backend, alice):
    memory = backend.memory()
    record = memory.remember("persisted", alice)
    memory.close()
    again = backend.memory()
    assert again.get(record.id, alice).content == "persisted"
    rows = backend.raw(f"SELECT version FROM {_version_table(backend)} ORDER BY version")
    assert [r[0] for r in rows] == _versions(backend)


def test_concurrent_first_opens_migrate_once(backend):
    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: open_store(backend.target), range(4)))
    for store in stores:
        assert store.schema_version() == _latest(backend)
        store.close()


def test_a_database_from_a_newer_engram_is_refused(backend):
    backend.store().close()
    applied_at = "0" if backend.name == "sqlite" else "now()"
    table = _version_table(backend)
    backend.raw(f"INSERT INTO {table} (version, name, applied_at) VALUES (999, 'future', {applied_at})")
    with pytest.raises(MigrationError, match="newer"):
        open_store(backend.target)


def test_someone_elses_database_is_refused_untouched(backend):
    if backend.name == "sqlite":
        backend.raw("CREATE TABLE customers (id INTEGER)")
    else:
        backend.server.sql(f'CREATE SCHEMA "{backend.schema}"')
        backend.server.sql(f'CREATE TABLE "{backend.schema}".customers (id integer)')
    with pytest.raises(NotAnEngramDatabaseError):
        open_store(backend.target)
    tables = (backend.raw("SELECT name FROM sqlite_master") if backend.name == "sqlite" else
              backend.server.sql("SELECT tablename FROM pg_tables WHERE schemaname = %s", (backend.schema,)))
    assert tables == [("customers",)]
