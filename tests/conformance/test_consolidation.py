"""Consolidation exactly once, proven on a FakeClock: whatever the cron interval
(shorter or longer than the activity), after downtime, after a crash between read
and commit, with two workers at once, every turn is consolidated by exactly one
committed run, and the memories it yields are written once."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta

import pytest

from engram import Scope, Settings
from engram.consolidation.run import Consolidator
from engram.consolidation.schedule import Schedule, ScheduleClock
from engram.errors import StorageError
from engram.model import Operation

pytestmark = [pytest.mark.episodes, pytest.mark.store_admin]  # the store roles it checks (conftest.py, ROLE_MARKERS)

ALICE = Scope.for_user("acme", "alice")


def _ranges(memory, scope=ALICE):
    """The turn ranges (after, upto] of every committed consolidation run."""
    events = memory.audit.list(scope, operation="extract", limit=10_000)
    return sorted((e.detail["consolidated_turns"]["after_seq"], e.detail["consolidated_turns"]["upto_seq"])
                  for e in events if e.actor == "consolidator" and "consolidated_turns" in e.detail)


def _assert_exactly_once(memory, turns: int, scope=ALICE):
    ranges = _ranges(memory, scope)
    covered = [seq for after, upto in ranges for seq in range(after + 1, upto + 1)]
    assert sorted(covered) == list(range(1, turns + 1)), ranges  # no gap, no overlap
    assert memory._store.watermark(scope.tenant, scope.namespace) == turns
    writes = Counter(
        source for e in memory.audit.list(scope, limit=10_000)
        if e.actor == "consolidator" and e.operation in (Operation.CREATE, Operation.UPDATE)
        for source in e.detail.get("source_message_ids", []) if source.startswith("turn:"))
    assert all(count == 1 for count in writes.values()), writes


def _simulate(memory, clock, cron: str, *, every_min: int, hours: int, down: tuple[int, int] | None = None):
    """Turns every ``every_min`` minutes for ``hours``; the worker ticks every minute
    except during ``down`` (minutes); a last run after the end flushes the rest."""
    schedules = ScheduleClock([Schedule(cron)], clock.now())
    said = 0
    for minute in range(1, hours * 60 + 1):
        clock.advance(minutes=1)
        if minute % every_min == 0:
            memory.threads.record([f"I have a pet named Pet{said}"], ALICE, thread_id=f"t{said // 4}")
            said += 1
        if down is None or not down[0] <= minute < down[1]:
            memory.consolidation.run_due(schedules)
    clock.advance(days=1)
    for _ in range(200):  # the budget leaves a backlog to later runs (and merges to the next one): drain it
        report = memory.consolidation.run()
        if not report.turns and not any(s.diff for s in report.scopes):
            break
    return said


@pytest.mark.parametrize(("cron", "every_min", "down"), [
    ("*/5 * * * *", 17, None),  # runs more often than turns arrive
    ("0 * * * *", 3, None),  # runs far less often than turns arrive
    ("*/10 * * * *", 7, (60, 200)),  # a long downtime in the middle
    ("0 3 * * *", 11, None),  # daily: never fires inside the window, the last run takes all
])
def test_every_turn_is_consolidated_exactly_once(backend, clock, cron, every_min, down):
    memory = backend.memory(clock=clock, settings=Settings(embedder="fake-hash", consolidation_budget_tokens=60))
    said = _simulate(memory, clock, cron, every_min=every_min, hours=5, down=down)
    _assert_exactly_once(memory, said)
    assert memory.consolidation.run().scopes[0].status == "nothing"
    assert all(upto - after <= 6 for after, upto in _ranges(memory))  # 60 tokens: six short turns a run


def test_a_crash_between_read_and_commit_loses_and_repeats_nothing(backend, clock):
    memory = backend.memory(clock=clock)
    for i in range(6):
        memory.threads.record([f"I have a pet named Pet{i}"], ALICE, thread_id="t")
    store, real_apply, crashed = memory._store, memory._store.apply, []

    def crash_once(batch):
        if batch.episodes.watermarks and not crashed:
            crashed.append(batch)
            raise StorageError("the process died before COMMIT")
        return real_apply(batch)

    store.apply = crash_once
    with pytest.raises(StorageError):
        memory.consolidation.run()
    assert store.watermark("acme", ALICE.namespace) == 0 and _ranges(memory) == []
    assert memory.list(ALICE).items == ()  # nothing of the crashed run was written
    memory.threads.record(["I have a pet named Pet6"], ALICE, thread_id="t")
    memory.consolidation.run()
    _assert_exactly_once(memory, 7)


def test_two_workers_at_once_consolidate_a_scope_once(backend, clock):
    first, second = backend.memory(clock=clock), backend.memory(clock=clock)
    for i in range(8):
        first.threads.record([f"I have a pet named Pet{i}"], ALICE, thread_id=f"t{i // 3}")
    start = threading.Barrier(2)
    reports = []

    def work(memory, holder):
        start.wait()
        reports.append(memory.consolidation.consolidator(holder=holder).run("acme"))

    threads = [threading.Thread(target=work, args=(m, h)) for m, h in ((first, "w1"), (second, "w2"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(s.status for r in reports for s in r.scopes)
    assert statuses in (["done", "locked"], ["done", "nothing"]), statuses
    _assert_exactly_once(first, 8)


def test_two_runs_that_read_the_same_turns_cannot_both_commit(backend, clock):
    """Even past the leader lock and the lease check of every write (a lease that ran
    out mid-run), the watermark's compare-and-swap lets one of two runs that read the
    same turns commit."""
    first, second = backend.memory(clock=clock), backend.memory(clock=clock)
    for i in range(5):
        first.threads.record([f"I have a pet named Pet{i}"], ALICE, thread_id="t")
    both_read = threading.Barrier(2)

    class NoLock:
        def __init__(self, store):
            self.store = store

        def __getattr__(self, name):
            return getattr(self.store, name)

        def scope_lease(self, *args):
            from contextlib import nullcontext
            return nullcontext(True)

        def turns(self, tenant, query):
            found = self.store.turns(tenant, query)
            if query.after_seq == 0 and query.thread_id is None:
                both_read.wait(timeout=30)  # both runs have read the same turns
            return found

    reports = []

    def work(memory):
        from contextlib import nullcontext

        memory._core.store = NoLock(memory._store)
        memory._core.holding = lambda holding: nullcontext()  # and no lease row to check: as if both held it
        consolidator = Consolidator(memory._core, lambda: memory.pipeline, embed_turns=False)
        reports.append(consolidator.run_scope(ALICE))

    threads = [threading.Thread(target=work, args=(m,)) for m in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.status for r in reports) == ["conflict", "done"]
    first._core.store = first._store
    _assert_exactly_once(first, 5)


def test_dry_run_reports_the_diff_and_writes_nothing(memory, clock):
    memory.threads.record(["I have a pet named Rex", "Thanks, that was all"], ALICE, thread_id="t")
    clock.advance(hours=1)
    report = memory.consolidation.run(dry_run=True)
    ops = sorted(d.operation for d in report.scopes[0].diff)
    assert report.dry_run and ops == ["add", "episode"]
    assert memory.list(ALICE).items == () and memory._store.watermark("acme", ALICE.namespace) == 0
    done = memory.consolidation.run()
    assert sorted(d.operation for d in done.scopes[0].diff) == ops
    kinds = sorted(r.kind.value for r in memory.list(ALICE).items)
    assert kinds == ["episode", "fact"]


def test_consolidated_changes_are_audited_with_their_source_messages(memory, clock):
    memory.threads.record([{"role": "user", "content": "I have a pet named Rex", "id": "m-17"}], ALICE, thread_id="t")
    memory.consolidation.run()
    created = [e for e in memory.audit.list(ALICE, operation="create") if e.actor == "consolidator"]
    assert created and created[0].detail["source_message_ids"] == ["m-17"]


def test_an_idle_thread_becomes_an_episode_linked_to_it_and_is_superseded_when_it_goes_on(memory, clock):
    memory.threads.record(["My build fails with error LNK2019", "Link against the missing library",
                           "Adding the library fixed the build"], ALICE, thread_id="build")
    clock.advance(minutes=10)
    assert memory.consolidation.run().scopes[0].episodes == 0  # not idle yet
    clock.advance(hours=1)
    memory.consolidation.run()
    episode = memory.threads.episode("build", ALICE)
    assert episode.kind.value == "episode" and episode.source.thread_id == "build"
    assert "LNK2019" in episode.content and "fixed the build" in episode.content
    block = memory.context("how did we fix the LNK2019 build error?", ALICE)
    assert episode.id in {hit.record.id for hit in block.hits}
    memory.threads.record(["It broke again after the update"], ALICE, thread_id="build")
    clock.advance(hours=1)
    memory.consolidation.run()
    newer = memory.threads.episode("build", ALICE)
    assert newer.id != episode.id and newer.supersedes == episode.id
    assert memory.get(episode.id, ALICE).status.value == "superseded"


def test_schedules_fire_in_utc_and_missed_fires_collapse(clock):
    schedules = ScheduleClock([Schedule("0 3 * * *"), Schedule("*/30 * * * *", tenant="acme")], clock.now())
    clock.advance(minutes=30)
    assert [s.cron for s in schedules.due(clock.now())] == ["*/30 * * * *"]
    clock.advance(days=2)  # many missed fires of both
    assert sorted(s.cron for s in schedules.due(clock.now())) == ["*/30 * * * *", "0 3 * * *"]
    assert schedules.due(clock.now()) == []
    assert Schedule("0 3 * * *").next_after(clock.now() - timedelta(hours=1)).hour == 3


def test_the_worker_runs_the_configured_schedules(backend, clock):
    import time

    settings = Settings(embedder="fake-hash", consolidation_schedules='[{"cron": "*/5 * * * *", "tenant": "acme"}]')
    memory = backend.memory(clock=clock, settings=settings)
    memory.threads.record(["I have a pet named Rex"], ALICE, thread_id="t")
    memory.jobs.start_worker()
    try:
        clock.advance(minutes=6)  # the schedule is due on the worker's next loop
        for _ in range(400):
            if memory._store.watermark("acme", ALICE.namespace) == 1:
                break
            time.sleep(0.05)
    finally:
        memory.jobs.stop_worker()
    _assert_exactly_once(memory, 1)


def test_with_an_llm_the_episode_is_written_by_the_model(memory, clock):
    from engram.llm.fake import ScriptedLLM
    from engram.pipeline.run import Pipeline

    memory.threads.record(["My build fails with LNK2019", "Add the missing library", "That fixed it"], ALICE,
                          thread_id="build")
    clock.advance(hours=1)
    llm = ScriptedLLM(["The user's build failed with LNK2019; adding the missing library fixed it."])
    Consolidator(memory._core, Pipeline.default, llm=llm, idle_gap=timedelta(minutes=30)).run("acme")
    episode = memory.threads.episode("build", ALICE)
    assert episode.content == "The user's build failed with LNK2019; adding the missing library fixed it."
    assert episode.metadata["summarizer"] == llm.model
    assert "LNK2019" in llm.calls[0].messages[-1].content  # the model read the thread


def test_a_run_merges_near_identical_memories_of_the_scope(memory, clock):
    first = memory.remember("Prefers green tea", ALICE, kind="preference", importance=0.8)
    second = memory.remember("prefers green tea", ALICE, kind="preference", importance=0.4)
    memory.threads.record(["I have a pet named Rex"], ALICE, thread_id="t")
    report = memory.consolidation.run()
    merges = [d for d in report.scopes[0].diff if d.operation == "merge"]
    assert [(d.record_id, d.target_id) for d in merges] == [(second.id, first.id)]
    assert memory.get(second.id, ALICE).superseded_by == first.id
    assert [e.actor for e in memory.audit.list(ALICE, record_id=second.id, operation="supersede")] == ["consolidator"]
