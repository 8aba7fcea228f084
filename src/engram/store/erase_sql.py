"""What erasing a whole scope (``purge_scope``: a user who asks to be forgotten) removes
besides the records, on both backends, inside the purge's write transaction (issue 21
item 1). SQL is built here once over a ``Dialect``, like governance_sql.py.

Order matters on PostgreSQL, where writers run concurrently: first the scope's jobs,
consolidation leases and pending changes go (a writer still holding one of those rows
makes the purge wait for its commit); only then is the scope checked to hold nothing
but the records this purge lists. A record written there since the purge listed them
(a job, a consolidation run, an approval that committed first) makes the purge start
over instead of surviving it; background work that commits later finds its job or lease
gone and writes nothing (``check_holding``).

Then what stays for the tenant's accountability loses everything of the user: the
audit rows of the scope keep operation, time, record id and version, lose the scope's
labels, the free text of their details (reasons, review notes, thread and answer ids)
and message ids; recalls that served the user's records or threads, write samples and
pending changes go. The purge's own audit rows name no scope.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from ..errors import ConflictError, WorkCancelledError
from .base import Holding
from .codec import dumps, namespace_from_key, namespace_key, namespace_range
from .sql import Dialect, DialectTables

ERASED = "[erased]"
KEPT_DETAIL = ("prompt_tokens", "completion_tokens")  # token accounting (engram stats) keeps counting
_CHUNK = 500


class Tables(DialectTables):
    def __init__(self, dialect: Dialect, prefix: str = "") -> None:
        super().__init__(dialect)
        self.memories = f"{prefix}memories"
        self.jobs = f"{prefix}jobs"
        self.audit = f"{prefix}audit_log"
        self.recalls = f"{prefix}recalls"
        self.samples = f"{prefix}write_samples"
        self.pending = f"{prefix}pending_changes"
        self.threads = f"{prefix}threads"
        self.state = f"{prefix}consolidation_state"


def check_holding(conn: Any, t: Tables, tenant: str, holding: Holding) -> None:
    """Refuse a background write whose job or lease is gone. On PostgreSQL the row is
    locked (FOR SHARE) until the write commits, so a purge deleting it waits for it."""
    lock = "" if t.sqlite else " FOR SHARE"
    if holding.job_id is not None:
        row = conn.execute(f"SELECT 1 FROM {t.jobs} WHERE {t.tenant} = {t.p} AND id = {t.p} "
                           f"AND status = 'running'{lock}", (tenant, holding.job_id)).fetchone()
        if row is None:
            raise WorkCancelledError(f"background job {holding.job_id} is no longer running (its scope was purged "
                                     "or the job cancelled meanwhile): nothing of it was written")
    if holding.lease is not None:
        namespace, holder = holding.lease
        row = conn.execute(f"SELECT 1 FROM {t.state} WHERE {t.tenant} = {t.p} AND namespace = {t.p} "
                           f"AND lease_holder = {t.p}{lock}", (tenant, namespace_key(namespace), holder)).fetchone()
        if row is None:
            raise WorkCancelledError("the consolidation lease of this scope is no longer held (the scope was purged "
                                     "meanwhile, or the lease ran out and another run took it): nothing was written")


def _subtree(t: Tables, namespace: tuple[str, ...]) -> tuple[str, list[Any]]:
    bounds = namespace_range(namespace)
    if bounds is None:
        return "", []
    return f" AND namespace >= {t.p} AND namespace < {t.p}", list(bounds)


def _within(namespace: Any, scope: tuple[str, ...]) -> bool:
    labels = json.loads(namespace) if isinstance(namespace, str) else namespace
    return isinstance(labels, list) and tuple(labels[: len(scope)]) == scope


def _delete_ids(conn: Any, t: Tables, table: str, tenant: str, ids: Sequence[str]) -> None:
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start: start + _CHUNK])
        conn.execute(f"DELETE FROM {table} WHERE {t.tenant} = {t.p} AND id IN ({', '.join([t.p] * len(chunk))})",
                     (tenant, *chunk))


def erase_scope(conn: Any, t: Tables, tenant: str, namespace: tuple[str, ...], purge_ids: Collection[str]) -> None:
    """Everything of a purged scope but its records (which the backend deletes next)."""
    purged = set(purge_ids)
    _drop_jobs(conn, t, tenant, namespace, purged)
    where, params = _subtree(t, namespace)
    for table in (t.state, t.pending):
        conn.execute(f"DELETE FROM {table} WHERE {t.tenant} = {t.p}{where}", (tenant, *params))
    written = [row[0] for row in conn.execute(
        f"SELECT id FROM {t.memories} WHERE {t.tenant} = {t.p}{where}", (tenant, *params)).fetchall()
        if row[0] not in purged]
    if written:
        raise ConflictError(f"{len(written)} record(s) were written to the scope while it was being purged: "
                            "purge it again")
    threads = {row[0] for row in conn.execute(
        f"SELECT id FROM {t.threads} WHERE {t.tenant} = {t.p}{where}", (tenant, *params)).fetchall()}
    _drop_recalls(conn, t, tenant, purged, threads)
    conn.execute(f"DELETE FROM {t.samples} WHERE {t.tenant} = {t.p}{where}", (tenant, *params))
    _anonymize_audit(conn, t, tenant, namespace)


def _drop_jobs(conn: Any, t: Tables, tenant: str, namespace: tuple[str, ...], purged: set[str]) -> None:
    """Jobs of the scope, whatever their status: a queued one would bring the user back,
    a finished one keeps the user's words in its result. A job finished before jobs kept
    their scope is known by the purged records its events name."""
    scope_of = "json_extract(payload, '$.namespace')" if t.sqlite else "payload -> 'namespace'"
    rows = conn.execute(f"SELECT id, {scope_of} FROM {t.jobs} WHERE {t.tenant} = {t.p}", (tenant,)).fetchall()
    doomed = [job_id for job_id, labels in rows if labels is not None and _within(labels, namespace)]
    unscoped = [job_id for job_id, labels in rows if labels is None]
    for start in range(0, len(unscoped), _CHUNK):
        chunk = unscoped[start: start + _CHUNK]
        found = conn.execute(f"SELECT id, result FROM {t.jobs} WHERE {t.tenant} = {t.p} "
                             f"AND id IN ({', '.join([t.p] * len(chunk))})", (tenant, *chunk)).fetchall()
        for job_id, result in found:
            data = json.loads(result) if isinstance(result, str) else (result or {})
            events = data.get("events") or [] if isinstance(data, dict) else []
            if any(isinstance(e, dict) and e.get("record_id") in purged for e in events):
                doomed.append(job_id)
    _delete_ids(conn, t, t.jobs, tenant, doomed)


def _drop_recalls(conn: Any, t: Tables, tenant: str, purged: set[str], threads: set[str]) -> None:
    """A recall that served a purged record or was asked in one of the user's threads
    holds the user's thread and answer ids: it goes."""
    rows = conn.execute(f"SELECT id, memories, thread_id FROM {t.recalls} WHERE {t.tenant} = {t.p}",
                        (tenant,)).fetchall()
    doomed = []
    for recall_id, memories, thread_id in rows:
        served = json.loads(memories) if isinstance(memories, str) else (memories or [])
        if thread_id in threads or any(isinstance(m, list) and m and m[0] in purged for m in served):
            doomed.append(recall_id)
    _delete_ids(conn, t, t.recalls, tenant, doomed)


def _anonymize_audit(conn: Any, t: Tables, tenant: str, namespace: tuple[str, ...]) -> None:
    where, params = _subtree(t, namespace)
    rows = conn.execute(f"SELECT id, actor, detail, namespace FROM {t.audit} WHERE {t.tenant} = {t.p}{where}",
                        (tenant, *params)).fetchall()
    updates = []
    for audit_id, actor, detail, key in rows:
        labels = {label.casefold() for label in namespace_from_key(key or "") if label}
        data = json.loads(detail) if isinstance(detail, str) else (detail or {})
        kept = {k: data[k] for k in KEPT_DETAIL if isinstance(data, dict) and isinstance(data.get(k), int)}
        shown_actor = ERASED if any(label in actor.casefold() for label in labels) else actor
        updates.append((shown_actor, dumps({**kept, "scope_erased": True}), tenant, audit_id))
    if updates:
        conn.cursor().executemany(
            f"UPDATE {t.audit} SET actor = {t.p}, detail = {t.json}, namespace = '', source_message_id = NULL "
            f"WHERE {t.tenant} = {t.p} AND id = {t.p}", updates)
