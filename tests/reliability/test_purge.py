"""Issue 21 item 1: after ``purge_scope`` nothing of the user remains, and nothing begun
before the purge (a queued or running job, a consolidation run, an approval, a write
racing the purge) brings any of it back."""

from __future__ import annotations

import sqlite3
import threading

import _common
import purge_scan
import pytest

from engram import FakeClock, FakeHashEmbedder, Memory, PendingApprovalError, Scope, Settings, WriteIntent
from engram.approval_rules import ApprovalRule, ApprovalRules
from engram.model import Message

ANA = Scope.for_user("acme", "wibblewobble")


def _open(url: str, **kw) -> Memory:
    settings = kw.pop("settings", Settings(auto_worker=False))
    return Memory.open(url, embedder=FakeHashEmbedder(), settings=settings, **kw)


@pytest.fixture
def target(backend_name):
    made = _common.new_target(backend_name)
    yield made
    made.close()


def _everything_in(memory: Memory, scope: Scope) -> list:
    return [*memory.list(scope, include_descendants=True, statuses=None).items,
            *memory.threads.list(scope, include_descendants=True),
            *memory.approvals.list(scope, status=None)]


def test_nothing_of_a_purged_user_stays_in_the_files_and_nothing_comes_back(backend_name):
    result = purge_scan.run(backend_name, users=2)
    if "skipped" in result:
        pytest.skip(result["skipped"])
    assert result["values_planted"] >= 18 and result["kept_missing"] == 0
    assert (result["found"], result["found_where"], result["resurrected"]) == (0, [], 0), result


def test_a_queued_job_cannot_bring_a_purged_user_back(target):
    with _open(target.url) as memory:
        memory.add([Message("user", "我住在wibblewobblefjo")], ANA, background=True)
        memory.purge_scope(ANA)
        assert memory.jobs.list("acme") == []
        memory.jobs.drain()
        assert _everything_in(memory, ANA) == []


def test_a_job_running_when_its_scope_is_purged_writes_nothing(target):
    with _open(target.url) as admin:
        fired = []

        def purge_while_the_job_runs(intent: WriteIntent) -> None:
            if intent.actor == "pipeline" and not fired:
                fired.append(intent)
                admin.purge_scope(ANA)  # lands between the job's extraction and its commit

        with _open(target.url, policies=[purge_while_the_job_runs]) as memory:
            memory.add([Message("user", "I live in Wibblewobblefjo")], ANA, background=True)
            assert memory.jobs.drain() == 1
            assert fired and _everything_in(memory, ANA) == []
            assert memory.jobs.list("acme") == []


def test_a_consolidation_running_when_its_scope_is_purged_writes_nothing(target):
    settings = Settings(auto_worker=False, episodes=True)
    with _open(target.url, settings=settings) as admin:
        fired = []

        def purge_while_consolidating(intent: WriteIntent) -> None:
            if intent.actor == "consolidator" and not fired:
                fired.append(intent)
                admin.purge_scope(ANA)

        with _open(target.url, settings=settings, policies=[purge_while_consolidating]) as memory:
            memory.threads.record([Message("user", "I live in Wibblewobblefjo")], ANA, thread_id="t1")
            report = memory.consolidation.run(tenant="acme")
            assert fired and [s.status for s in report.scopes] == ["cancelled"]
            assert _everything_in(memory, ANA) == []


def test_a_pending_change_cannot_be_approved_into_a_purged_scope(target):
    rules = ApprovalRules((ApprovalRule("gated", categories=("gated",)),))
    with _open(target.url, approvals=rules) as memory:
        with pytest.raises(PendingApprovalError) as held:
            memory.remember("Wibblewobble earns a lot", ANA, category="gated")
        memory.purge_scope(ANA)
        with pytest.raises(Exception):
            memory.approvals.approve(held.value.pending.id, ANA, reviewer="rita")
        assert _everything_in(memory, ANA) == []


def test_a_record_written_while_the_purge_lists_the_scope_is_purged_too(target):
    with _open(target.url) as memory, _open(target.url) as other:
        memory.remember("first", ANA)
        query, raced = memory._store.query, []

        def listing_then_a_write(*args, **kwargs):
            found = query(*args, **kwargs)
            if not raced:
                raced.append(other.remember("written while the purge was listing", ANA))
            return found

        memory._store.query = listing_then_a_write
        report = memory.purge_scope(ANA)
        assert raced and report.records == 2
        assert _everything_in(memory, ANA) == []


def test_a_purge_beside_a_reader_waits_at_most_the_busy_timeout_and_says_so(tmp_path):
    path = str(tmp_path / "reader.db")
    with _open(path, settings=Settings(auto_worker=False, busy_timeout_ms=200)) as memory:
        memory.remember("Wibblewobble keeps 8812731 coins", ANA)
        reader = sqlite3.connect(path)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM memories").fetchone()
        done = threading.Event()
        # on a build that waits for the reader, end it eventually so the test fails instead of hanging
        threading.Timer(60, lambda: done.is_set() or reader.interrupt()).start()
        report = memory.purge_scope(ANA)
        done.set()
        reader_still_open = reader.in_transaction
        reader.rollback()
        reader.close()
        assert reader_still_open, "the purge returned only once the reader had ended"
        assert report.records == 1 and report.residue and "reader" in report.residue
        memory.maintenance.run()  # the reader is gone: maintenance empties the WAL
        assert memory._store.erase_traces() is None
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("reader.db"))
    assert b"8812731" not in data and b"Wibblewobble" not in data


def test_retention_runs_for_a_tenant_with_conversations_but_no_memories(target):
    clock = FakeClock()
    settings = Settings(auto_worker=False, episode_retention="30")
    with _open(target.url, settings=settings, clock=clock) as memory:
        memory.threads.record([Message("user", "the zorblaxian password is on the fridge")], ANA, thread_id="t1")
        clock.advance(days=31)
        assert memory.threads.drop_expired() == 1
        assert memory.threads.list(ANA) == []
    if target.backend == "sqlite":
        data = b"".join(p.read_bytes() for p in target.files())
        assert b"zorblaxian" not in data


def test_purge_reports_what_is_left_on_disk(target):
    with _open(target.url) as memory:
        memory.remember("something", ANA)
        report = memory.purge_scope(ANA)
        assert report.records == 1
        if target.backend == "sqlite":
            assert report.complete and report.residue is None
        else:
            assert not report.complete and "VACUUM FULL" in report.residue
