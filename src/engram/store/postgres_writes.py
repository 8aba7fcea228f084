"""The write path of the PostgreSQL backend: one WriteBatch in one transaction.

Every row the batch touches is locked first, in id order, so concurrent writers
queue instead of deadlocking, and a compare-and-swap sees the committed version.
New records are plain INSERTs (a concurrent insert of the same id is a unique
violation, hence ConflictError), never upserts that could overwrite each other.
"""

from __future__ import annotations

import psycopg

from ..errors import ConflictError
from . import episodes_sql
from . import erase_sql as erase
from . import postgres_rows as rows
from .base import WriteBatch
from .governance_sql import Tables, apply_governance
from .sql import POSTGRES


def apply_batch(conn: psycopg.Connection, s: str, batch: WriteBatch) -> None:
    """Write one batch inside the caller's transaction, in the order the protocol
    promises: purges, records (compare-and-swap), versions, touches, jobs, audit;
    then the lexical statistics of each scope written."""
    tenant = batch.tenant
    erasing = erase.Tables(POSTGRES, f"{s}.")
    if batch.holding is not None:
        erase.check_holding(conn, erasing, tenant, batch.holding)
    for erased in batch.governance.purged_scopes:
        erase.erase_scope(conn, erasing, tenant, erased, batch.purge_ids)
    ids = sorted({*batch.purge_ids, *(w.record.id for w in batch.records), *(t.record_id for t in batch.touches)})
    stored: dict[str, Stored] = {}
    if ids:  # lock every row the batch touches, in one order, so writers never deadlock
        found = conn.execute(
            f"SELECT id, version, tf, doc_len, namespace FROM {s}.memories WHERE tenant_id = %s AND id = ANY(%s) "
            "ORDER BY id FOR UPDATE",
            (tenant, ids),
        )
        stored = {row[0]: (row[1], row[2], row[3], row[4]) for row in found}
    delta = rows.LexiconDeltas()
    if batch.purge_ids:
        for record_id in batch.purge_ids:
            if record_id in stored:
                _, tf, length, namespace = stored.pop(record_id)
                delta.of(namespace).add(tf, length, -1)
        purge = list(batch.purge_ids)
        conn.execute(f"DELETE FROM {s}.memories WHERE tenant_id = %s AND id = ANY(%s)", (tenant, purge))
        conn.execute(f"DELETE FROM {s}.memory_versions WHERE tenant_id = %s AND record_id = ANY(%s)",
                     (tenant, purge))
    inserts, updates = _record_rows(batch, stored, delta)
    cur = conn.cursor()
    if len(inserts) >= COPY_FROM:
        _copy_records(cur, s, inserts)
    elif inserts:
        cur.executemany(_INSERT.format(s=s), inserts)
    if updates:
        cur.executemany(_UPDATE.format(s=s), updates)
    if batch.versions:
        cur.executemany(
            f"INSERT INTO {s}.memory_versions (tenant_id, record_id, version, operation, actor, at, reason, "
            "snapshot) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [rows.version_params(tenant, v) for v in batch.versions],
        )
    if batch.touches:
        cur.executemany(
            f"UPDATE {s}.memories SET access_count = access_count + 1, "
            "last_accessed_at = greatest(last_accessed_at, %s) WHERE tenant_id = %s AND id = %s",
            [(t.at, tenant, t.record_id) for t in batch.touches],
        )
    if batch.jobs:
        cur.executemany(
            f"INSERT INTO {s}.jobs (tenant_id, id, status, payload, attempts, max_attempts, next_attempt_at, "
            "created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [rows.job_params(job) for job in batch.jobs],
        )
    if batch.audit:
        cur.executemany(
            f"INSERT INTO {s}.audit_log (tenant_id, at, actor, operation, record_id, version, namespace, "
            "source_message_id, detail) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [rows.audit_params(tenant, d) for d in batch.audit],
        )
    apply_governance(conn, Tables(POSTGRES, f"{s}."), tenant, batch.governance, batch.purge_ids)
    episodes_sql.apply_episodes(conn, episodes_sql.Tables(POSTGRES, f"{s}."), tenant, batch.episodes,
                                batch.governance.purged_scopes)
    for namespace, change in delta.changed():
        _apply_lexicon(conn, s, tenant, namespace, change)
    if batch.purge_ids:  # a scope left without records keeps no statistics row naming it
        conn.execute(f"DELETE FROM {s}.scope_state WHERE tenant_id = %s AND docs <= 0", (tenant,))


Stored = tuple[int, dict[str, int], int, str]  # version, term frequencies, length, namespace key


COPY_FROM = 50  # inserts per batch from which COPY beats a pipelined executemany


def _copy_records(cur: psycopg.Cursor, s: str, inserts: list[tuple]) -> None:
    """New records through COPY: one stream instead of one statement per row. COPY
    cannot write a table under row-level security, so the rows go to a session
    temporary table (emptied at commit) and from there in one INSERT, which the
    tenant policies check as usual."""
    columns = ", ".join(rows.WRITE_COLUMNS)
    cur.execute(f"CREATE TEMP TABLE IF NOT EXISTS engram_copy ON COMMIT DELETE ROWS AS "
                f"SELECT {columns} FROM {s}.memories WITH NO DATA")
    with cur.copy(f"COPY pg_temp.engram_copy ({columns}) FROM STDIN") as copy:
        for params in inserts:
            copy.write_row(params)
    cur.execute(f"INSERT INTO {s}.memories ({columns}) SELECT {columns} FROM pg_temp.engram_copy")
    cur.execute("TRUNCATE pg_temp.engram_copy")


def _record_rows(
    batch: WriteBatch, stored: dict[str, Stored], delta: rows.LexiconDeltas
) -> tuple[list[tuple], list[tuple]]:
    inserts, updates = [], []
    for write in batch.records:
        record = write.record
        current = stored.get(record.id)
        version = None if current is None else current[0]
        if version != write.expected_version:
            if write.expected_version is None:
                raise ConflictError(f"record {record.id} already exists")
            raise ConflictError(
                f"record {record.id} is at version {version}, expected {write.expected_version}: "
                "it changed meanwhile"
            )
        params = rows.record_params(write)
        tf = params[_TF].obj
        length = params[_DOC_LEN]
        namespace = params[_NAMESPACE]
        if current is None:
            inserts.append(params)
            delta.of(namespace).add(tf, length, +1)
        elif current[3] == namespace:
            updates.append((*params[2:], params[0], params[1]))
            delta.of(namespace).replace(current[1], current[2], tf, length)
        else:  # moved to another scope: out of the old one's statistics, into the new one's
            updates.append((*params[2:], params[0], params[1]))
            delta.of(current[3]).add(current[1], current[2], -1)
            delta.of(namespace).add(tf, length, +1)
        stored[record.id] = (record.version, tf, length, namespace)
    return inserts, updates


def _apply_lexicon(conn: psycopg.Connection, s: str, tenant: str, namespace: str, delta: rows.LexiconDelta) -> None:
    """Add a batch's change to one scope's statistics (terms in one order: no deadlocks)."""
    changed = sorted((term, d) for term, d in delta.df.items() if d)
    if changed:
        conn.execute(
            f"INSERT INTO {s}.scope_lexicon AS l (tenant_id, term, namespace, df) "
            "SELECT %s, t, %s, d FROM unnest(%s::text[], %s::bigint[]) AS x(t, d) ORDER BY t "
            "ON CONFLICT (tenant_id, term, namespace) DO UPDATE SET df = l.df + excluded.df",
            (tenant, namespace, [t for t, _ in changed], [d for _, d in changed]),
        )
        dropped = [t for t, d in changed if d < 0]
        if dropped:
            conn.execute(f"DELETE FROM {s}.scope_lexicon WHERE tenant_id = %s AND term = ANY(%s) AND namespace = %s "
                         "AND df <= 0", (tenant, dropped, namespace))
    conn.execute(
        f"INSERT INTO {s}.scope_state AS t (tenant_id, namespace, docs, total_len) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (tenant_id, namespace) DO UPDATE SET docs = t.docs + excluded.docs, "
        "total_len = t.total_len + excluded.total_len",
        (tenant, namespace, delta.docs, delta.total_len),
    )


_TF = rows.WRITE_COLUMNS.index("tf")
_DOC_LEN = rows.WRITE_COLUMNS.index("doc_len")
_NAMESPACE = rows.WRITE_COLUMNS.index("namespace")
_INSERT = (
    "INSERT INTO {s}.memories (" + ", ".join(rows.WRITE_COLUMNS) + ") VALUES ("
    + ", ".join("%s::tsvector" if c == "tsv" else "%s" for c in rows.WRITE_COLUMNS) + ")"
)
_UPDATE = (
    "UPDATE {s}.memories SET "
    + ", ".join(f"{c} = %s::tsvector" if c == "tsv" else f"{c} = %s" for c in rows.WRITE_COLUMNS[2:])
    + " WHERE tenant_id = %s AND id = %s"
)
