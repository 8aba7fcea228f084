"""The operating parts of ``Memory``: ``memory.jobs`` (background add() and its
worker), ``memory.maintenance`` (expiry, duplicates, re-embedding),
``memory.transfer`` (JSONL export and import) and ``memory.scopes`` (which tenants
and namespaces hold memories). Each is thin, over the one write core (``scopes``, which
only reads, over its read context: ``reads.py``)."""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from .. import jsonl, maintenance
from ..core import WriteCore
from ..episodes.retention import drop_expired_turns
from ..governance.approvals import expire_due
from ..maintenance import MaintenanceReport
from ..model import Job, JobStatus, Scope, check_label, check_scope
from ..pipeline import jobs as _jobs
from ..pipeline.reindex import reindex_store
from ..pipeline.run import Pipeline
from ..reads import ReadContext
from .episodes import Consolidation

DEFAULT_ACTOR = "app"


class Jobs:
    """``memory.jobs``: the durable queue of background ``add()`` calls, and the
    worker thread that drains it in this process (``engram worker`` in another)."""

    def __init__(self, core: WriteCore, pipeline: Callable[[], Pipeline], consolidation: Consolidation,
                 maintain: Callable[[], object], maintenance_interval_s: float) -> None:
        self._core = core
        self._pipeline = pipeline
        self._consolidation = consolidation
        self._maintain = maintain
        self._interval_s = maintenance_interval_s
        self._worker: _jobs.Worker | None = None
        self._lock = threading.Lock()

    def list(
        self, tenant: str | None = None, statuses: Sequence[JobStatus | str] = (), limit: int = 100,
    ) -> builtins.list[Job]:
        """Jobs of one tenant (or all), newest first."""
        return self._core.reads.store.jobs(tenant_or_all(tenant), [JobStatus(s) for s in statuses], limit)

    def drain(self, max_jobs: int | None = None) -> int:
        """Run due background jobs in this thread until none is due."""
        return _jobs.drain(self._core, self._pipeline(), max_jobs)

    def start_worker(self) -> None:
        """Drain background jobs in a daemon thread of this process (idempotent); it also
        runs maintenance every ``maintenance_interval_s`` and the consolidation schedules."""
        with self._lock:
            if self._worker is None:
                schedules = self._consolidation.schedules()
                clock = self._consolidation.clock(schedules) if schedules else None
                tick = (lambda: self._consolidation.run_due(clock)) if clock is not None else None
                self._worker = _jobs.Worker(self._core, self._pipeline, self._maintain,
                                            maintenance_interval_s=self._interval_s, tick=tick).start()

    def stop_worker(self) -> None:
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()


class Maintenance:
    """``memory.maintenance``: the lifecycle work a worker runs on a schedule, and
    re-embedding after a model change."""

    def __init__(self, core: WriteCore, episode_retention: str | None) -> None:
        self._core = core
        self._episode_retention = episode_retention

    def run(self) -> MaintenanceReport:
        """Expire what has passed its time, fold near-identical duplicates, expire
        pending changes nobody reviewed in time and drop turns past their retention
        (every tenant). Workers run it every ``maintenance_interval_s``."""
        report = maintenance.maintain(self._core)
        expire_due(self._core)
        drop_expired_turns(self._core, self._episode_retention)
        self._core.store.erase_traces()  # a purge's WAL a reader kept from being emptied
        return report

    def reindex(self, *, batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> int:
        """Re-embed every record whose vector came from another model (a new version
        each, audited as ``reindex``). Reads keep working meanwhile; a record changed
        concurrently is retried on the next pass."""
        return reindex_store(self._core, batch_size=batch_size, progress=progress)


class Transfer:
    """``memory.transfer``: every record of a scope with its versions, as JSONL, out
    and back in."""

    def __init__(self, core: WriteCore) -> None:
        self._core = core

    def export_to(self, dest: str | Path | IO[str], scope: Scope) -> int:
        """Write every record in the scope (and below), with its versions, as JSONL;
        returns how many records."""
        check_scope(scope)
        reads = self._core.reads
        return jsonl.export_to(reads.store, scope, dest, reads.clock.now())

    def import_from(
        self, source: str | Path | IO[str], *, on_conflict: jsonl.OnConflict = "error", actor: str = DEFAULT_ACTOR,
        progress: Callable[[int, int], None] | None = None,
    ) -> jsonl.ImportResult:
        """Validate the whole file, then write it in one transaction (all-or-nothing),
        through the PII policy and the policy hooks like any write. ``progress(done,
        total)`` follows the writing: records embedded, batch by batch, then written."""
        return jsonl.import_from(self._core, source, on_conflict=on_conflict, actor=actor, progress=progress)


class Scopes:
    """``memory.scopes``: where memories are (it only reads)."""

    def __init__(self, reads: ReadContext) -> None:
        self._reads = reads

    def tenants(self) -> builtins.list[str]:
        """The tenants that hold memories."""
        return self._reads.store.tenants()

    def namespaces(self, scope: Scope) -> builtins.list[tuple[str, ...]]:
        """The namespaces holding memories at and below a scope."""
        check_scope(scope)
        return self._reads.store.namespaces(scope.tenant, scope.namespace)


def tenant_or_all(tenant: str | None) -> str | None:
    return None if tenant is None else check_label(tenant, "tenant")
