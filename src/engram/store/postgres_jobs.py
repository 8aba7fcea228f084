"""The job queue of the PostgreSQL backend (durable background add())."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

import psycopg
from psycopg.types.json import Jsonb

from ..model import Job, JobStatus, Operation
from . import postgres_rows as rows
from .base import AuditDraft, WriteBatch
from .sql import check_storable

T = TypeVar("T")


class PostgresStore(Protocol):
    """What the job queries need of postgres.PostgresStore (which calls them): its
    schema and its tenant-scoped transactions."""

    _s: str

    def _transaction(self, tenant: str | None, work: Callable[[psycopg.Connection], T], *, write: bool) -> T: ...

    def _read(self, tenant: str | None, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[tuple]: ...


def claim(store: PostgresStore, now: datetime, lease_seconds: float) -> Job | None:
    """Find due jobs with a read across tenants, then claim one inside its own
    tenant's transaction; the UPDATE re-checks that it is still due, so two
    workers never run the same job."""
    due = ("((status = 'queued' AND next_attempt_at <= %(now)s) "
           "OR (status = 'running' AND lease_until < %(now)s))")
    candidates = store._read(
        None,
        f"SELECT tenant_id, id FROM {store._s}.jobs WHERE {due} ORDER BY next_attempt_at LIMIT 8",
        {"now": now},
    )
    take = (
        f"UPDATE {store._s}.jobs SET status = 'running', attempts = attempts + 1, lease_until = %(lease)s, "
        f"updated_at = %(now)s WHERE tenant_id = %(tenant)s AND id = %(id)s AND {due} RETURNING {rows.JOB_COLUMNS}"
    )
    lease = now + timedelta(seconds=lease_seconds)
    for tenant, job_id in candidates:
        values = {"now": now, "lease": lease, "tenant": tenant, "id": job_id}

        def work(conn: psycopg.Connection, values: dict[str, Any] = values) -> list[tuple]:
            return conn.execute(take, values).fetchall()

        found = store._transaction(tenant, work, write=True)
        if found:
            return rows.job_from_row(found[0])
    return None


def finish(
    store: PostgresStore, tenant: str, job_id: str, status: JobStatus, at: datetime, *, error: str | None = None,
    result: dict[str, Any] | None = None, retry_at: datetime | None = None,
) -> None:
    if error is not None:
        error = error.replace("\x00", "\\x00").encode("utf-8", "replace").decode("utf-8")
    check_storable(WriteBatch(tenant, audit=(AuditDraft("worker", Operation.UPDATE, at, detail=result or {}),)))
    store._transaction(
        tenant,
        lambda conn: conn.execute(
            f"UPDATE {store._s}.jobs SET status = %s, last_error = coalesce(%s, last_error), result = %s, "
            "lease_until = NULL, next_attempt_at = coalesce(%s, next_attempt_at), updated_at = %s, "
            "payload = CASE WHEN %s = 'done' THEN jsonb_build_object('namespace', payload -> 'namespace') "
            "ELSE payload END "  # a done job drops its turns, keeps its scope (a purge finds it)
            "WHERE tenant_id = %s AND id = %s",
            (status.value, error, None if result is None else Jsonb(result), retry_at, at, status.value, tenant,
             job_id),
        ),
        write=True,
    )


def listing(store: PostgresStore, tenant: str | None, statuses: Sequence[JobStatus], limit: int) -> list[Job]:
    sql, params = f"SELECT {rows.JOB_COLUMNS} FROM {store._s}.jobs WHERE true", list[Any]()
    if tenant is not None:
        sql += " AND tenant_id = %s"
        params.append(tenant)
    if statuses:
        sql += " AND status = ANY(%s)"
        params.append([JobStatus(s).value for s in statuses])
    found = store._read(tenant or None, sql + " ORDER BY created_at DESC LIMIT %s", [*params, limit])
    return [rows.job_from_row(row) for row in found]
