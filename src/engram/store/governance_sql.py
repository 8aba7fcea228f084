"""Governance tables (pending changes, recalls, write samples) on both backends.

SQL is built here in pure functions over a ``Dialect``; each backend only supplies a
connection (inside its write transaction) or runs a read. Both drivers' connections
answer ``execute(sql, params)`` with a cursor, so one apply serves both. Values are
converted on the way back from either backend's types (epoch seconds or timestamptz,
JSON text or jsonb).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ..errors import ConflictError, NotFoundError
from ..model import MemoryRecord, Operation, freeze_mapping
from ..values.governance import (
    GovernanceWrites,
    PendingChange,
    PendingQuery,
    PendingStatus,
    ProposedChange,
    RecalledMemory,
    RecallEvent,
    RecallQuery,
    SampleQuery,
    Verdict,
    WriteSample,
)
from .codec import dumps, from_epoch, namespace_from_key, namespace_key, namespace_range, record_from_data
from .codec import record_to_data as _record_data
from .sql import Dialect, DialectTables
from .sql import _check_stored as check_stored

PENDING_COLUMNS = ("id", "namespace", "record_id", "status", "created_at", "expires_at", "actor", "reason", "rule",
                   "changes", "detail", "decided_by", "decided_at", "decision_reason")
RECALL_COLUMNS = ("id", "at", "actor", "thread_id", "memories", "latency_ms", "answer_id", "answered_at", "used")
SAMPLE_COLUMNS = ("id", "record_id", "version", "namespace", "actor", "written_at", "sampled_at", "verdict",
                  "reviewer", "reviewed_at", "note")


class Tables(DialectTables):
    """Where one backend keeps the governance tables, and how it spells parameters."""

    def __init__(self, dialect: Dialect, prefix: str = "") -> None:
        super().__init__(dialect)
        self.pending = f"{prefix}pending_changes"
        self.recalls = f"{prefix}recalls"
        self.samples = f"{prefix}write_samples"
        self.jobs = f"{prefix}jobs"


# -- writes ----------------------------------------------------------------------------------


def apply_governance(conn: Any, t: Tables, tenant: str, writes: GovernanceWrites, purge_ids: Sequence[str]) -> None:
    """Write a batch's governance rows inside the caller's transaction."""
    if writes.empty and not purge_ids:
        return
    check_governance(writes)
    _drop_purged(conn, t, tenant, purge_ids, writes.purged_scopes)
    for pending in writes.pending:
        conn.execute(_insert(t, t.pending, PENDING_COLUMNS, json_columns=("changes", "detail")),
                     (tenant, *pending_values(t, pending)))
    for decision in writes.decisions:
        found = conn.execute(
            f"UPDATE {t.pending} SET status = {t.p}, decided_by = {t.p}, decided_at = {t.p}, "
            f"decision_reason = {t.p} WHERE {t.tenant} = {t.p} AND id = {t.p} AND status = 'pending'",
            (decision.status.value, decision.by, t.time(decision.at), decision.reason, tenant, decision.id),
        )
        if found.rowcount != 1:
            raise ConflictError(f"pending change {decision.id} is no longer pending: it was decided meanwhile")
    for recall in writes.recalls:
        conn.execute(_insert(t, t.recalls, RECALL_COLUMNS, json_columns=("memories", "used")),
                     (tenant, *recall_values(t, recall)))
    for link in writes.answers:
        found = conn.execute(
            f"UPDATE {t.recalls} SET answer_id = {t.p}, answered_at = {t.p}, used = {t.json} "
            f"WHERE {t.tenant} = {t.p} AND id = {t.p}",
            (link.answer_id, t.time(link.at), dumps(list(link.used)), tenant, link.recall_id),
        )
        if found.rowcount != 1:
            raise NotFoundError(f"no recall {link.recall_id!r} in tenant {tenant!r}")
    for sample in writes.samples:
        conn.execute(_insert(t, t.samples, SAMPLE_COLUMNS, json_columns=()) + " ON CONFLICT DO NOTHING",
                     (tenant, *sample_values(t, sample)))
    for verdict in writes.verdicts:
        found = conn.execute(
            f"UPDATE {t.samples} SET verdict = {t.p}, reviewer = {t.p}, reviewed_at = {t.p}, note = {t.p} "
            f"WHERE {t.tenant} = {t.p} AND id = {t.p}",
            (verdict.verdict.value, verdict.reviewer, t.time(verdict.at), verdict.note, tenant, verdict.sample_id),
        )
        if found.rowcount != 1:
            raise NotFoundError(f"no write sample {verdict.sample_id!r} in tenant {tenant!r}")


def _insert(t: Tables, table: str, columns: Sequence[str], *, json_columns: Sequence[str]) -> str:
    marks = [t.json if c in json_columns else t.p for c in columns]
    return f"INSERT INTO {table} ({t.tenant}, {', '.join(columns)}) VALUES ({t.p}, {', '.join(marks)})"


def _drop_purged(conn: Any, t: Tables, tenant: str, ids: Sequence[str], scopes: Sequence[tuple[str, ...]]) -> None:
    """A purge leaves nothing of a record behind: proposals and samples of it go too."""
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ", ".join([t.p] * len(chunk))
        for table in (t.pending, t.samples):
            conn.execute(f"DELETE FROM {table} WHERE {t.tenant} = {t.p} AND record_id IN ({marks})",
                         (tenant, *chunk))
    for namespace in scopes:
        where, params = _namespace_condition(t, namespace)
        for table in (t.pending, t.samples):
            conn.execute(f"DELETE FROM {table} WHERE {t.tenant} = {t.p}{where}", (tenant, *params))
    _scrub_job_results(conn, t, tenant, set(ids))


PURGED_CONTENT = "[purged]"


def _scrub_job_results(conn: Any, t: Tables, tenant: str, ids: set[str]) -> None:
    """A finished background add keeps the events it wrote as its result; the content of
    an event whose record is purged leaves the job too."""
    if not ids:
        return
    found = conn.execute(f"SELECT id, result FROM {t.jobs} WHERE {t.tenant} = {t.p} AND result IS NOT NULL",
                         (tenant,)).fetchall()
    for job_id, result in found:
        data = json.loads(result) if isinstance(result, str) else dict(result)
        events = data.get("events") or []
        if not any(isinstance(e, dict) and e.get("record_id") in ids for e in events):
            continue
        data["events"] = [{**e, "content": PURGED_CONTENT} if isinstance(e, dict) and e.get("record_id") in ids
                          else e for e in events]
        conn.execute(f"UPDATE {t.jobs} SET result = {t.json} WHERE {t.tenant} = {t.p} AND id = {t.p}",
                     (dumps(data), tenant, job_id))


def check_governance(writes: GovernanceWrites) -> None:
    """What one backend would store and another refuse (NUL, lone surrogates) is refused on both."""
    for pending in writes.pending:
        check_stored([pending.id, pending.actor, pending.reason, pending.rule, *pending.namespace], "pending change")
        check_stored(dict(pending.detail), "pending change detail")
        for change in pending.changes:
            check_stored(_record_data(change.record), "proposed record")
            check_stored(dict(change.detail), "proposed change detail")
    for decision in writes.decisions:
        check_stored([decision.id, decision.by, decision.reason], "decision")
    for recall in writes.recalls:
        check_stored([recall.id, recall.actor, recall.thread_id, recall.answer_id,
                      *(m.record_id for m in recall.memories)], "recall")
    for link in writes.answers:
        check_stored([link.recall_id, link.answer_id, *link.used], "answer link")
    for sample in writes.samples:
        check_stored([sample.id, sample.record_id, sample.actor], "write sample")
    for verdict in writes.verdicts:
        check_stored([verdict.sample_id, verdict.reviewer, verdict.note], "verdict")


def pending_values(t: Tables, p: PendingChange) -> tuple:
    changes = [{"operation": c.operation.value, "record": _record_data(c.record), "base_version": c.base_version,
                "reason": c.reason, "detail": dict(c.detail)} for c in p.changes]
    return (p.id, namespace_key(p.namespace), p.record_id, p.status.value, t.time(p.created_at),
            t.time(p.expires_at), p.actor, p.reason, p.rule, dumps(changes), dumps(dict(p.detail)), p.decided_by,
            t.time(p.decided_at), p.decision_reason)


def recall_values(t: Tables, r: RecallEvent) -> tuple:
    memories = [[m.record_id, m.version, round(m.score, 6)] for m in r.memories]
    used = None if r.used is None else dumps(list(r.used))
    return (r.id, t.time(r.at), r.actor, r.thread_id, dumps(memories), r.latency_ms, r.answer_id,
            t.time(r.answered_at), used)


def sample_values(t: Tables, s: WriteSample) -> tuple:
    return (s.id, s.record_id, s.version, namespace_key(s.namespace), s.actor, t.time(s.written_at),
            t.time(s.sampled_at), s.verdict.value if s.verdict else None, s.reviewer, t.time(s.reviewed_at), s.note)


# -- reads -----------------------------------------------------------------------------------


def _namespace_condition(t: Tables, namespace: tuple[str, ...]) -> tuple[str, list[Any]]:
    bounds = namespace_range(namespace)
    if bounds is None:
        return "", []
    return f" AND namespace >= {t.p} AND namespace < {t.p}", list(bounds)


def _ids_condition(t: Tables, ids: tuple[str, ...] | None) -> tuple[str, list[Any]]:
    if ids is None:
        return "", []
    if not ids:
        return " AND 1 = 0", []
    check_stored(list(ids), "id filter")
    return f" AND id IN ({', '.join([t.p] * len(ids))})", list(ids)


def pending_select(t: Tables, tenant: str | None, q: PendingQuery) -> tuple[str, list[Any]]:
    parts, params = ("1 = 1", []) if tenant is None else (f"{t.tenant} = {t.p}", [tenant])
    where, extra = _namespace_condition(t, q.namespace)
    ids, id_params = _ids_condition(t, q.ids)
    sql = f"SELECT {t.tenant}, {', '.join(PENDING_COLUMNS)} FROM {t.pending} WHERE {parts}{where}{ids}"
    params += extra + id_params
    if q.statuses:
        sql += f" AND status IN ({', '.join([t.p] * len(q.statuses))})"
        params += [s.value for s in q.statuses]
    if q.record_id is not None:
        check_stored(q.record_id, "record id filter")
        sql += f" AND record_id = {t.p}"
        params.append(q.record_id)
    if q.expires_before is not None:
        sql += f" AND expires_at <= {t.p}"
        params.append(t.time(q.expires_before))
    return sql + f" ORDER BY created_at, id LIMIT {t.p} OFFSET {t.p}", [*params, q.limit, q.offset]


def recall_select(t: Tables, tenant: str, q: RecallQuery) -> tuple[str, list[Any]]:
    ids, params = _ids_condition(t, q.ids)
    sql = f"SELECT {t.tenant}, {', '.join(RECALL_COLUMNS)} FROM {t.recalls} WHERE {t.tenant} = {t.p}{ids}"
    params = [tenant, *params]
    for column, value in (("answer_id", q.answer_id), ("thread_id", q.thread_id)):
        if value is not None:
            check_stored(value, f"{column} filter")
            sql += f" AND {column} = {t.p}"
            params.append(value)
    if q.since is not None:
        sql += f" AND at >= {t.p}"
        params.append(t.time(q.since))
    if q.until is not None:
        sql += f" AND at <= {t.p}"
        params.append(t.time(q.until))
    order = "at DESC, id DESC" if q.newest_first else "at, id"
    return sql + f" ORDER BY {order} LIMIT {t.p}", [*params, q.limit]


def sample_select(t: Tables, tenant: str, q: SampleQuery) -> tuple[str, list[Any]]:
    where, extra = _namespace_condition(t, q.namespace)
    ids, id_params = _ids_condition(t, q.ids)
    sql = f"SELECT {t.tenant}, {', '.join(SAMPLE_COLUMNS)} FROM {t.samples} WHERE {t.tenant} = {t.p}{where}{ids}"
    params = [tenant, *extra, *id_params]
    if q.reviewed is not None:
        sql += f" AND verdict IS {'NOT ' if q.reviewed else ''}NULL"
    if q.written_after is not None:
        sql += f" AND written_at >= {t.p}"
        params.append(t.time(q.written_after))
    return sql + f" ORDER BY sampled_at, id LIMIT {t.p}", [*params, q.limit]


def _time(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return None if value is None else value.astimezone(UTC)
    return from_epoch(float(value))


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def _moment(value: Any) -> datetime:
    moment = _time(value)
    assert moment is not None
    return moment


def pending_from_row(row: Sequence[Any]) -> PendingChange:
    (tenant, id_, namespace, _, status, created, expires, actor, reason, rule, changes, detail, by, at,
     why) = tuple(row)
    return PendingChange(
        id=id_, tenant=tenant, namespace=namespace_from_key(namespace), status=PendingStatus(status),
        created_at=_moment(created), expires_at=_moment(expires), actor=actor, reason=reason, rule=rule,
        changes=tuple(_proposed(c) for c in _json(changes)), detail=freeze_mapping(_json(detail)),
        decided_by=by, decided_at=_time(at), decision_reason=why,
    )


def _proposed(data: dict[str, Any]) -> ProposedChange:
    record: MemoryRecord = record_from_data(data["record"])
    return ProposedChange(Operation(data["operation"]), record, data.get("base_version"), data.get("reason"),
                          freeze_mapping(data.get("detail")))


def recall_from_row(row: Sequence[Any]) -> RecallEvent:
    tenant, id_, at, actor, thread, memories, latency, answer, answered, used = tuple(row)
    found = _json(used)
    return RecallEvent(
        id=id_, tenant=tenant, at=_moment(at), actor=actor, thread_id=thread,
        memories=tuple(RecalledMemory(m[0], int(m[1]), float(m[2])) for m in _json(memories)),
        latency_ms=None if latency is None else float(latency), answer_id=answer, answered_at=_time(answered),
        used=None if found is None else tuple(found),
    )


def sample_from_row(row: Sequence[Any]) -> WriteSample:
    tenant, id_, record_id, version, namespace, actor, written, sampled, verdict, reviewer, reviewed, note = tuple(row)
    return WriteSample(
        id=id_, tenant=tenant, record_id=record_id, version=int(version), namespace=namespace_from_key(namespace),
        actor=actor, written_at=_moment(written), sampled_at=_moment(sampled),
        verdict=None if verdict is None else Verdict(verdict), reviewer=reviewer, reviewed_at=_time(reviewed),
        note=note,
    )


# -- migrations ------------------------------------------------------------------------------

SQLITE_MIGRATION = """
    CREATE TABLE pending_changes (
        tenant TEXT NOT NULL, id TEXT NOT NULL, namespace TEXT NOT NULL, record_id TEXT NOT NULL,
        status TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL NOT NULL, actor TEXT NOT NULL,
        reason TEXT, rule TEXT NOT NULL, changes TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '{}',
        decided_by TEXT, decided_at REAL, decision_reason TEXT,
        PRIMARY KEY (tenant, id)
    );
    CREATE INDEX pending_status ON pending_changes (tenant, status, expires_at);
    CREATE INDEX pending_record ON pending_changes (tenant, record_id);
    CREATE TABLE recalls (
        tenant TEXT NOT NULL, id TEXT NOT NULL, at REAL NOT NULL, actor TEXT NOT NULL, thread_id TEXT,
        memories TEXT NOT NULL, latency_ms REAL, answer_id TEXT, answered_at REAL, used TEXT,
        PRIMARY KEY (tenant, id)
    );
    CREATE INDEX recalls_time ON recalls (tenant, at);
    CREATE INDEX recalls_answer ON recalls (tenant, answer_id) WHERE answer_id IS NOT NULL;
    CREATE INDEX recalls_thread ON recalls (tenant, thread_id, at) WHERE thread_id IS NOT NULL;
    CREATE TABLE write_samples (
        tenant TEXT NOT NULL, id TEXT NOT NULL, record_id TEXT NOT NULL, version INTEGER NOT NULL,
        namespace TEXT NOT NULL, actor TEXT NOT NULL, written_at REAL NOT NULL, sampled_at REAL NOT NULL,
        verdict TEXT, reviewer TEXT, reviewed_at REAL, note TEXT,
        PRIMARY KEY (tenant, id), UNIQUE (tenant, record_id, version)
    );
    CREATE INDEX samples_written ON write_samples (tenant, written_at)
"""

POSTGRES_TABLES = ("pending_changes", "recalls", "write_samples")
POSTGRES_MIGRATION = """
    CREATE TABLE {schema}.pending_changes (
        tenant_id text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL, namespace text COLLATE "C" NOT NULL,
        record_id text COLLATE "C" NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL, actor text NOT NULL, reason text, rule text NOT NULL,
        changes jsonb NOT NULL, detail jsonb NOT NULL DEFAULT '{{}}', decided_by text, decided_at timestamptz,
        decision_reason text,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX pending_status ON {schema}.pending_changes (tenant_id, status, expires_at);
    CREATE INDEX pending_record ON {schema}.pending_changes (tenant_id, record_id);
    CREATE TABLE {schema}.recalls (
        tenant_id text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL, at timestamptz NOT NULL,
        actor text NOT NULL, thread_id text, memories jsonb NOT NULL, latency_ms double precision,
        answer_id text, answered_at timestamptz, used jsonb,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX recalls_time ON {schema}.recalls (tenant_id, at);
    CREATE INDEX recalls_answer ON {schema}.recalls (tenant_id, answer_id) WHERE answer_id IS NOT NULL;
    CREATE INDEX recalls_thread ON {schema}.recalls (tenant_id, thread_id, at) WHERE thread_id IS NOT NULL;
    CREATE TABLE {schema}.write_samples (
        tenant_id text COLLATE "C" NOT NULL, id text COLLATE "C" NOT NULL, record_id text COLLATE "C" NOT NULL,
        version integer NOT NULL, namespace text COLLATE "C" NOT NULL, actor text NOT NULL,
        written_at timestamptz NOT NULL, sampled_at timestamptz NOT NULL, verdict text, reviewer text,
        reviewed_at timestamptz, note text,
        PRIMARY KEY (tenant_id, id), UNIQUE (tenant_id, record_id, version)
    );
    CREATE INDEX samples_written ON {schema}.write_samples (tenant_id, written_at);
"""
