"""Durable background add(): a job table drained by worker threads or processes.

A job survives restarts; a worker that dies leaves a lease that runs out and the
job is taken again; failures retry with exponential backoff and a job that keeps
failing is parked with its error (visible in `engram jobs` and `engram stats`).

The payload holds only what the tenant's PII policy lets a memory hold: turns are
masked like memories, encrypted values kept as ciphertext (decrypted only while the
job runs), forbidden values never stored. A finished job keeps its result (events
with masked content) and drops its payload.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import timedelta
from typing import Any

from ..core import WriteCore
from ..errors import EngramError, WorkCancelledError
from ..model import Job, JobStatus, Message, Scope, freeze_mapping
from ..pii import ENCRYPTED_KEY, masked_for_display, redact_message, reveal
from ..store.base import Holding
from ..writes import new_id
from .messages import message_from_data, message_to_data
from .run import AddResult, AddRun, Pipeline

log = logging.getLogger(__name__)
LEASE_SECONDS = 300.0
MAX_ATTEMPTS = 5
BACKOFF_SECONDS = 2.0
SHOWN_CHARS = 1000  # of each event's text kept in a finished job's result (the record holds the whole)


def enqueue(core: WriteCore, messages: list[Message], scope: Scope, thread_id: str | None, actor: str,
            force: bool) -> Job:
    now = core.clock.now()
    policy = core.pii_for(scope.tenant)
    turns = []
    for message in messages:
        redacted, encrypted = redact_message(message, policy)
        turns.append({**message_to_data(redacted), **({ENCRYPTED_KEY: encrypted} if encrypted else {})})
    payload = {"namespace": list(scope.namespace), "messages": turns, "thread_id": thread_id, "actor": actor,
               "force": force}
    job = Job(new_id(), scope.tenant, JobStatus.QUEUED, freeze_mapping(payload), 0, MAX_ATTEMPTS, now, now, now)
    core.enqueue(job)
    return job


def _turns(payload: Any, key: str | None) -> list[Message]:
    """The job's turns as said (encrypted values decrypted for the extractor, with the tenant's keys)."""
    out = []
    for data in payload["messages"]:
        message = message_from_data(data)
        if data.get(ENCRYPTED_KEY):
            message = replace(message, content=reveal(message.content, data, key))
        out.append(message)
    return out


def work_once(core: WriteCore, pipeline: Pipeline) -> Job | None:
    """Claim one due job and run it. Returns the job, or None when nothing was due."""
    job = core.store.claim_job(core.clock.now(), LEASE_SECONDS)
    if job is None:
        return None
    payload = job.payload
    scope = Scope(job.tenant, tuple(payload["namespace"]))
    try:
        run = AddRun(core, pipeline, scope, payload.get("thread_id"), payload["actor"])
        with core.holding(Holding(job_id=job.id)):  # a purge of the scope meanwhile: nothing is written
            result = run.run(_turns(payload, core.pii_for(job.tenant).encryption_key),
                             force=bool(payload.get("force")))
        if result.error:
            raise EngramError(f"extraction failed: {result.error}")
    except WorkCancelledError as exc:  # the job row is gone with its scope: nothing to record it on
        log.info("job %s cancelled: %s", job.id, exc)
        return job
    except Exception as exc:  # a job's edge: any failure is recorded on the job, never lost
        _failed(core, job, f"{type(exc).__name__}: {exc}")
        return job
    core.store.finish_job(job.tenant, job.id, JobStatus.DONE, core.clock.now(), result=_summary(result))
    return job


def _summary(result: AddResult) -> dict[str, Any]:
    """What a finished job keeps: every event (SKIPPED ones with their reason) and the
    count of each, so a job whose items were all invalid says so in its result."""
    events = [asdict(e) | {"kind": e.kind.value if e.kind else None, "content": e.content[:SHOWN_CHARS]}
              for e in result.events]
    counts: dict[str, int] = {}
    for event in result.events:
        counts[event.event] = counts.get(event.event, 0) + 1
    return {"events": events, "counts": counts, "usage": asdict(result.usage)}


def _failed(core: WriteCore, job: Job, error: str) -> None:
    now = core.clock.now()
    # an error may quote what the model or the turns said: kept as the policy lets text be shown
    error = masked_for_display(error, core.pii_for(job.tenant))[:SHOWN_CHARS]
    attempts = job.attempts  # already counted by claim
    if attempts >= job.max_attempts:
        log.warning("job %s parked after %d attempts: %s", job.id, attempts, error)
        core.store.finish_job(job.tenant, job.id, JobStatus.PARKED, now, error=error)
        return
    retry_at = now + timedelta(seconds=BACKOFF_SECONDS * 2 ** (attempts - 1))
    core.store.finish_job(job.tenant, job.id, JobStatus.QUEUED, now, error=error, retry_at=retry_at)


def drain(core: WriteCore, pipeline: Pipeline, max_jobs: int | None = None) -> int:
    """Run due jobs until none is due (or max_jobs ran)."""
    done = 0
    while max_jobs is None or done < max_jobs:
        if work_once(core, pipeline) is None:
            break
        done += 1
    return done


class Worker:
    """A daemon thread draining the job table and running maintenance on its
    interval; stop() lets the current job finish."""

    def __init__(
        self, core: WriteCore, pipeline: Callable[[], Pipeline], maintain: Callable[[], object], *,
        maintenance_interval_s: float = 0.0, poll_seconds: float = 0.5, tick: Callable[[], object] | None = None,
    ) -> None:
        """``tick``: called on every loop (consolidation schedules check whether they are due)."""
        self._core = core
        self._pipeline = pipeline
        self._maintain = maintain
        self._interval = maintenance_interval_s
        self._poll = poll_seconds
        self._tick = tick
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="engram-worker", daemon=True)

    def start(self) -> Worker:
        self._thread.start()
        return self

    def _loop(self) -> None:
        next_maintenance = time.monotonic() + self._interval
        while not self._stop.is_set():
            try:
                ran = work_once(self._core, self._pipeline())
                if self._interval and time.monotonic() >= next_maintenance:
                    next_maintenance = time.monotonic() + self._interval
                    log.info("engram maintenance: %s", self._maintain())
                if self._tick is not None:
                    self._tick()
            except EngramError as exc:  # the store itself failed: wait and try again
                log.warning("engram worker: %s", exc)
                ran = None
            if ran is None:
                self._stop.wait(self._poll)

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
