"""Durable background add(): a job table drained by worker threads or processes.

A job survives restarts; a worker that dies leaves a lease that runs out and the
job is taken again; failures retry with exponential backoff and a job that keeps
failing is parked with its error (visible in `engram jobs` and `engram stats`).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict
from datetime import timedelta
from typing import TYPE_CHECKING

from ..errors import EngramError
from ..model import Job, JobStatus, Message, Scope, freeze_mapping
from ..store.base import WriteBatch
from ..writes import new_id
from .messages import message_from_data, message_to_data

if TYPE_CHECKING:
    from ..memory import Memory

log = logging.getLogger(__name__)
LEASE_SECONDS = 300.0
MAX_ATTEMPTS = 5
BACKOFF_SECONDS = 2.0


def enqueue(memory: Memory, messages: list[Message], scope: Scope, thread_id: str | None, actor: str,
            force: bool) -> Job:
    now = memory.clock.now()
    payload = {"namespace": list(scope.namespace), "messages": [message_to_data(m) for m in messages],
               "thread_id": thread_id, "actor": actor, "force": force}
    job = Job(new_id(), scope.tenant, JobStatus.QUEUED, freeze_mapping(payload), 0, MAX_ATTEMPTS, now, now, now)
    memory.store.apply(WriteBatch(scope.tenant, jobs=(job,)))
    return job


def work_once(memory: Memory) -> Job | None:
    """Claim one due job and run it. Returns the job, or None when nothing was due."""
    job = memory.store.claim_job(memory.clock.now(), LEASE_SECONDS)
    if job is None:
        return None
    payload = job.payload
    scope = Scope(job.tenant, tuple(payload["namespace"]))
    messages = [message_from_data(m) for m in payload["messages"]]
    try:
        result = memory.run_add(messages, scope, thread_id=payload.get("thread_id"), actor=payload["actor"],
                                force=bool(payload.get("force")))
        if result.error:
            raise EngramError(f"extraction failed: {result.error}")
    except Exception as exc:  # a job's edge: any failure is recorded on the job, never lost
        _failed(memory, job, f"{type(exc).__name__}: {exc}")
        return job
    summary = {"events": [asdict(e) | {"kind": e.kind.value if e.kind else None} for e in result.events],
               "usage": asdict(result.usage)}
    memory.store.finish_job(job.tenant, job.id, JobStatus.DONE, memory.clock.now(), result=summary)
    return job


def _failed(memory: Memory, job: Job, error: str) -> None:
    now = memory.clock.now()
    attempts = job.attempts  # already counted by claim
    if attempts >= job.max_attempts:
        log.warning("job %s parked after %d attempts: %s", job.id, attempts, error)
        memory.store.finish_job(job.tenant, job.id, JobStatus.PARKED, now, error=error)
        return
    retry_at = now + timedelta(seconds=BACKOFF_SECONDS * 2 ** (attempts - 1))
    memory.store.finish_job(job.tenant, job.id, JobStatus.QUEUED, now, error=error, retry_at=retry_at)


def drain(memory: Memory, max_jobs: int | None = None) -> int:
    """Run due jobs until none is due (or max_jobs ran)."""
    done = 0
    while max_jobs is None or done < max_jobs:
        if work_once(memory) is None:
            break
        done += 1
    return done


class Worker:
    """A daemon thread draining the job table; stop() lets the current job finish."""

    def __init__(self, memory: Memory, poll_seconds: float = 0.5) -> None:
        self._memory = memory
        self._poll = poll_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="engram-worker", daemon=True)

    def start(self) -> Worker:
        self._thread.start()
        return self

    def _loop(self) -> None:
        interval = self._memory.settings.maintenance_interval_s
        next_maintenance = time.monotonic() + interval
        while not self._stop.is_set():
            try:
                ran = work_once(self._memory)
                if interval and time.monotonic() >= next_maintenance:
                    next_maintenance = time.monotonic() + interval
                    log.info("engram maintenance: %s", self._memory.maintain())
            except EngramError as exc:  # the store itself failed: wait and try again
                log.warning("engram worker: %s", exc)
                ran = None
            if ran is None:
                self._stop.wait(self._poll)

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
