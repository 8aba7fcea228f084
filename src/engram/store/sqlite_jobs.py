"""Job-table statements of the SQLite backend."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

from ..model import Job, JobStatus, freeze_mapping
from .codec import dumps, from_epoch, to_epoch


def insert_job(conn: sqlite3.Connection, job: Job) -> None:
    conn.execute(
        "INSERT INTO jobs (tenant, id, status, payload, attempts, max_attempts, next_attempt_at, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (job.tenant, job.id, job.status.value, dumps(dict(job.payload)), job.attempts, job.max_attempts,
         to_epoch(job.next_attempt_at), to_epoch(job.created_at), to_epoch(job.updated_at)),
    )


def claim_due_job(conn: sqlite3.Connection, now: datetime, lease_seconds: float) -> Job | None:
    """Take the oldest due job, or one whose worker's lease ran out (it died)."""
    moment = now.timestamp()
    row = conn.execute(
        "SELECT tenant, id FROM jobs WHERE (status = 'queued' AND next_attempt_at <= ?) "
        "OR (status = 'running' AND lease_until < ?) ORDER BY next_attempt_at LIMIT 1",
        (moment, moment),
    ).fetchone()
    if row is None:
        return None
    conn.execute(
        "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ?, updated_at = ? "
        "WHERE tenant = ? AND id = ?",
        (moment + lease_seconds, moment, row[0], row[1]),
    )
    return job_from_row(conn.execute("SELECT * FROM jobs WHERE tenant = ? AND id = ?", tuple(row)).fetchone())


def finish_job(
    conn: sqlite3.Connection, tenant: str, job_id: str, status: JobStatus, at: datetime, *,
    error: str | None = None, result: dict | None = None, retry_at: datetime | None = None,
) -> None:
    conn.execute(
        # a done job drops its payload (the turns): its result and its scope (a purge finds it) stay
        "UPDATE jobs SET status = ?, last_error = coalesce(?, last_error), result = ?, lease_until = NULL, "
        "next_attempt_at = coalesce(?, next_attempt_at), updated_at = ?, "
        "payload = CASE WHEN ? = 'done' THEN json_object('namespace', json(json_extract(payload, '$.namespace'))) "
        "ELSE payload END WHERE tenant = ? AND id = ?",
        (status.value, error, None if result is None else dumps(result), to_epoch(retry_at), to_epoch(at),
         status.value, tenant, job_id),
    )


def job_from_row(row: sqlite3.Row) -> Job:
    return Job(
        id=row["id"],
        tenant=row["tenant"],
        status=JobStatus(row["status"]),
        payload=freeze_mapping(json.loads(row["payload"])),
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        next_attempt_at=from_epoch(row["next_attempt_at"]),
        created_at=from_epoch(row["created_at"]),
        updated_at=from_epoch(row["updated_at"]),
        last_error=row["last_error"],
        result=None if row["result"] is None else freeze_mapping(json.loads(row["result"])),
    )
