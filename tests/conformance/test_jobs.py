"""Durable background jobs: enqueued in the write's transaction, claimed by one
worker at a time, across tenants, retried after a lease runs out."""

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from engram import Scope
from engram.model import Job, JobStatus, freeze_mapping
from engram.store.base import WriteBatch

pytestmark = [pytest.mark.job_queue]  # the store roles it checks (conftest.py, ROLE_MARKERS)


def _job(job_id: str, tenant: str, at, **payload) -> Job:
    return Job(job_id, tenant, JobStatus.QUEUED, freeze_mapping(payload), 0, 3, at, at, at)


def test_jobs_are_claimed_oldest_first_across_tenants(memory, clock):
    store, now = memory._store, clock.now()
    store.apply(WriteBatch("globex", jobs=(_job("j2", "globex", now - timedelta(seconds=5), n=2),)))
    store.apply(WriteBatch("acme", jobs=(_job("j1", "acme", now - timedelta(seconds=9), n=1),
                                         _job("later", "acme", now + timedelta(hours=1)))))
    first = store.claim_job(now, 60)
    assert (first.id, first.tenant, first.status, first.attempts) == ("j1", "acme", JobStatus.RUNNING, 1)
    assert dict(first.payload) == {"n": 1}
    second = store.claim_job(now, 60)
    assert (second.id, second.tenant) == ("j2", "globex")
    assert store.claim_job(now, 60) is None  # "later" is not due yet
    store.finish_job("acme", "j1", JobStatus.DONE, now, result={"events": [], "ok": True})
    done = store.jobs("acme", [JobStatus.DONE])
    assert [(j.id, dict(j.result)) for j in done] == [("j1", {"events": [], "ok": True})]
    assert {j.id for j in store.jobs(None)} == {"j1", "j2", "later"}


def test_an_expired_lease_is_taken_again_and_errors_are_kept(memory, clock):
    store, now = memory._store, clock.now()
    store.apply(WriteBatch("acme", jobs=(_job("j", "acme", now),)))
    assert store.claim_job(now, 60).attempts == 1
    assert store.claim_job(now + timedelta(seconds=30), 60) is None
    again = store.claim_job(now + timedelta(seconds=61), 60)
    assert (again.id, again.attempts) == ("j", 2)
    store.finish_job("acme", "j", JobStatus.QUEUED, now, error="boom", retry_at=now + timedelta(seconds=5))
    assert store.claim_job(now + timedelta(seconds=4), 60) is None
    retried = store.claim_job(now + timedelta(seconds=5), 60)
    assert (retried.attempts, retried.last_error) == (3, "boom")


def test_concurrent_workers_never_claim_the_same_job(backend, clock):
    backend.require("multi_process")
    store, now = backend.store(), clock.now()
    store.apply(WriteBatch("acme", jobs=tuple(_job(f"j{i:02d}", "acme", now) for i in range(20))))
    workers = [backend.store() for _ in range(4)]

    def drain(worker):
        taken = []
        while (job := worker.claim_job(now, 60)) is not None:
            taken.append(job.id)
        return taken

    with ThreadPoolExecutor(4) as pool:
        claimed = [job for batch in pool.map(drain, workers) for job in batch]
    assert sorted(claimed) == [f"j{i:02d}" for i in range(20)]


def test_background_add_runs_through_the_queue(memory, alice):
    result = memory.add([{"role": "user", "content": "I prefer tea over coffee."}], alice, background=True)
    memory.jobs.stop_worker()
    assert result.job_id is not None
    memory.jobs.drain()
    job = memory.jobs.list("acme")[0]
    assert job.id == result.job_id and job.status is JobStatus.DONE
    assert any("tea" in r.content for r in memory.list(Scope("acme", alice.namespace)).items)
