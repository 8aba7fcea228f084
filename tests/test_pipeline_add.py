"""Memory.add(): events, reconciliation, one transaction, dedup, background jobs."""

import functools
import json
import threading

from engram import Kind, Memory, Operation, PermissionDeniedError, Settings, Status, USEEmbedder
from engram.llm.fake import ScriptedLLM
from engram.model import JobStatus
from engram.pipeline.llm_extract import LLMExtractor
from engram.pipeline.run import Pipeline
from engram.store.sqlite import SQLiteStore


@functools.cache
def usem3() -> USEEmbedder:
    return USEEmbedder()


def answer(*memories) -> str:
    """What an extraction LLM returns: (kind, content[, confidence, importance])."""
    items = []
    for kind, content, *scores in memories:
        confidence, importance = (scores + [0.9, 0.8])[:2] if scores else (0.9, 0.8)
        items.append({"kind": kind, "content": content, "confidence": confidence, "importance": importance,
                      "source_ids": ["m1"]})
    return json.dumps({"memories": items}, ensure_ascii=False)


def scripted_memory(db_path, clock, *answers) -> Memory:
    """Real SQLite + real usem3; a scripted (fake) LLM proposes the facts; rules reconcile.
    No worker thread: tests drain the queue themselves."""
    pipeline = Pipeline(LLMExtractor(ScriptedLLM(list(answers))))
    return Memory(SQLiteStore(db_path), embedder=usem3(), clock=clock, pipeline=pipeline,
                  settings=Settings(auto_worker=False))


SAY = [{"role": "user", "content": "记住：我们公司采用三级审批流程，报告要简洁。", "id": "msg-1"}]


def test_add_reports_an_event_per_candidate_with_sources(db_path, clock, alice):
    with scripted_memory(db_path, clock, answer(("rule", "公司采用三级审批流程"), ("preference", "报告要简洁"))) as m:
        result = m.add(SAY, alice, thread_id="t1")
        assert [e.event for e in result.events] == ["ADD", "ADD"]
        record = m.get(result.events[0].record_id, alice)
        assert record.kind is Kind.RULE and record.source.thread_id == "t1"
        assert record.source.message_id == "msg-1"
        assert record.metadata["source_message_ids"] == ["msg-1"]
        assert result.usage.total > 0
        extract = m.audit.list(alice, operation=Operation.EXTRACT)
        assert extract[0].detail["events"] == {"ADD": 2} and extract[0].detail["prompt_tokens"] > 0


def test_duplicate_is_noop_refinement_updates_contradiction_supersedes(db_path, clock, alice):
    with scripted_memory(
        db_path, clock,
        answer(("rule", "公司采用三级审批流程"), ("preference", "Prefers concise reports")),
        answer(("rule", "公司采用三级审批流程")),
        answer(("preference", "Prefers concise reports with bullet points")),
        answer(("rule", "公司采用两级审批流程")),
    ) as m:
        first = m.add(SAY, alice)
        rule_id, pref_id = (e.record_id for e in first.events)
        clock.advance(minutes=10)
        assert [e.event for e in m.add(SAY, alice).events] == ["NOOP"]
        update = m.add(SAY, alice).events[0]
        assert (update.event, update.record_id, update.version) == ("UPDATE", pref_id, 2)
        assert m.get(pref_id, alice).content == "Prefers concise reports with bullet points"
        supersede = m.add(SAY, alice).events[0]
        assert supersede.event == "SUPERSEDE" and supersede.target_id == rule_id
        old, new = m.get(rule_id, alice), m.get(supersede.record_id, alice)
        assert old.status is Status.SUPERSEDED and old.valid_to == clock.now() and old.superseded_by == new.id
        assert new.supersedes == rule_id
        assert [h.record.content for h in m.search("审批流程", alice, kinds=["rule"])] == ["公司采用两级审批流程"]


def test_gate_skips_weak_candidates_with_reasons(db_path, clock, alice):
    weak = answer(("preference", "Might like jazz", 0.4, 0.9), ("fact", "Said hello", 0.95, 0.1))
    with scripted_memory(db_path, clock, weak) as m:
        events = m.add(SAY, alice).events
        assert [e.event for e in events] == ["SKIPPED", "SKIPPED"]
        assert "confidence" in events[0].reason and "importance" in events[1].reason
        assert m.list(alice).items == ()


def test_unparseable_llm_answer_is_an_explicit_skip_never_silent(db_path, clock, alice):
    with scripted_memory(db_path, clock, "Sure! Here are the memories: ...") as m:
        result = m.add(SAY, alice)
        assert result.error and [e.event for e in result.events] == ["SKIPPED"]
        assert "extraction failed" in result.events[0].reason


def test_pii_is_masked_or_refused_before_writing(db_path, clock, alice):
    facts = answer(("fact", "User's phone number is 13812345678"), ("fact", "User's password is hunter2"))
    with scripted_memory(db_path, clock, facts) as m:
        events = m.add(SAY, alice).events
        assert [e.event for e in events] == ["SKIPPED", "ADD"]
        assert "forbids" in events[0].reason
        stored = m.get(events[1].record_id, alice)
        assert "13812345678" not in stored.content and "[PHONE]" in stored.content
        assert stored.sensitivity.value == "personal"


def test_a_refused_candidate_is_skipped_and_the_rest_is_written(db_path, clock, alice):
    def refuse_budgets(intent):
        if intent.record is not None and "budget" in intent.record.content:
            raise PermissionDeniedError("needs approval")

    with scripted_memory(db_path, clock, answer(("fact", "Team is called Apollo"), ("rule", "Travel budget is 500"))) as m:
        m.policies.append(refuse_budgets)
        events = m.add(SAY, alice).events
        assert [(e.event, e.content) for e in events] == [("ADD", "Team is called Apollo"),
                                                          ("SKIPPED", "Travel budget is 500")]
        assert "needs approval" in events[1].reason
        assert [r.content for r in m.list(alice).items] == ["Team is called Apollo"]
        assert [e.operation.value for e in m.audit.list(alice)].count("create") == 1


def test_same_fact_twice_concurrently_yields_one_record(db_path, clock, alice):
    fact = answer(("fact", "Favourite colour is teal"))
    barrier = threading.Barrier(2)

    def script(messages):
        barrier.wait(timeout=10)  # both adds have extracted before either writes
        return fact

    pipeline = Pipeline(LLMExtractor(ScriptedLLM(script)))
    with Memory(SQLiteStore(db_path), embedder=usem3(), clock=clock, pipeline=pipeline) as m:
        results = []
        threads = [threading.Thread(target=lambda: results.append(m.add(SAY, alice))) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(r.events[0].event for r in results) == ["ADD", "NOOP"]
        assert len(m.list(alice).items) == 1
        assert len(m.history(m.list(alice).items[0].id, alice)) == 1


class StoreWithARaceInItsAuditRead(SQLiteStore):
    """Real SQLite; the first audit read about one record first lets a given write run."""

    def __init__(self, path, race):
        super().__init__(path)
        self.race = race

    def audit(self, tenant, query):
        if query.record_id is not None and self.race is not None:
            race, self.race = self.race, None
            race()
        return super().audit(tenant, query)


def test_a_concurrent_add_committing_the_same_fact_mid_check_is_not_mistaken_for_a_purge(db_path, clock, alice):
    """The other add() commits the same id between this add()'s reads of the record and of its audit."""
    holder = {}

    def other_add():
        thread = threading.Thread(target=lambda: holder.setdefault("other", holder["memory"].add(SAY, alice)))
        thread.start()
        thread.join()

    pipeline = Pipeline(LLMExtractor(ScriptedLLM(lambda messages: answer(("fact", "Favourite colour is teal")))))
    store = StoreWithARaceInItsAuditRead(db_path, other_add)
    with Memory(store, embedder=usem3(), clock=clock, pipeline=pipeline, settings=Settings(auto_worker=False)) as m:
        holder["memory"] = m
        first = m.add(SAY, alice)
        assert [e.event for e in holder["other"].events] == ["ADD"]
        assert [e.event for e in first.events] == ["NOOP"]
        assert len(m.list(alice).items) == 1


def test_background_add_returns_a_job_that_survives_a_restart(db_path, clock, alice):
    with scripted_memory(db_path, clock) as m:
        queued = m.add(SAY, alice, background=True)
        assert queued.job_id and queued.events == ()
        assert [j.status for j in m.jobs.list()] == [JobStatus.QUEUED]
    with scripted_memory(db_path, clock, answer(("rule", "公司采用三级审批流程"))) as restarted:
        assert restarted.jobs.drain() == 1
        job = restarted.jobs.list()[0]
        assert job.status is JobStatus.DONE and job.result["events"][0]["event"] == "ADD"
        assert restarted.list(alice).items[0].content == "公司采用三级审批流程"


def test_failing_jobs_retry_with_backoff_then_park(db_path, clock, alice):
    with scripted_memory(db_path, clock, *["not json"] * 5) as m:
        m.add(SAY, alice, background=True)
        for attempt in range(1, 6):
            assert m.jobs.drain() == 1
            job = m.jobs.list()[0]
            assert job.attempts == attempt and "extraction failed" in job.last_error
            if attempt < 5:
                assert job.status is JobStatus.QUEUED and m.jobs.drain() == 0  # not due yet
                clock.advance(seconds=2 ** attempt * 2 + 1)
        assert m.jobs.list()[0].status is JobStatus.PARKED


def test_background_worker_thread_drains_the_queue(db_path, alice):
    import time

    pipeline = Pipeline(LLMExtractor(ScriptedLLM(lambda messages: answer(("fact", "Has a dog named Max")))))
    with Memory(SQLiteStore(db_path), embedder=usem3(), pipeline=pipeline) as m:
        job_id = m.add(SAY, alice, background=True).job_id
        for _ in range(200):
            if m.jobs.list()[0].status is JobStatus.DONE:
                break
            time.sleep(0.05)
        assert m.jobs.list()[0].id == job_id and m.jobs.list()[0].status is JobStatus.DONE


def test_llm_extractor_from_settings_talks_to_an_openai_compatible_server(db_path, clock, alice, monkeypatch):
    from stub_openai import StubOpenAI, chat_reply

    with StubOpenAI([chat_reply(answer(("preference", "Prefers tea over coffee")))]) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("LLM_MODEL", "stub-model")
        settings = Settings(extractor="llm", auto_worker=False)
        with Memory(SQLiteStore(db_path), embedder=usem3(), clock=clock, settings=settings) as m:
            result = m.add([{"role": "user", "content": "I really prefer tea over coffee, remember that."}], alice)
        assert [e.event for e in result.events] == ["ADD"] and result.extractor == "llm:stub-model"
        assert result.usage.prompt_tokens == 11 and stub.requests[0].body["model"] == "stub-model"


def test_llm_reconciler_may_only_touch_records_it_was_shown(db_path, clock, alice):
    from engram.pipeline.llm_reconcile import LLMReconciler

    extractor = ScriptedLLM([answer(("rule", "公司采用三级审批流程")), answer(("rule", "公司采用两级审批流程"))])
    reconciler = ScriptedLLM([json.dumps({"event": "SUPERSEDE", "target": "99", "content": "x", "reason": "r"})])
    pipeline = Pipeline(LLMExtractor(extractor), LLMReconciler(reconciler))
    with Memory(SQLiteStore(db_path), embedder=usem3(), clock=clock, pipeline=pipeline,
                settings=Settings(auto_worker=False)) as m:
        m.add(SAY, alice)
        event = m.add(SAY, alice).events[0]
        # the LLM named a record it was not shown: the guard refuses and the rules decide
        assert event.event == "SUPERSEDE" and "LLM failed" in event.reason
        assert len(m.list(alice).items) == 1


def test_every_invalid_item_from_the_model_is_a_skipped_event(db_path, clock, alice):
    junk = json.dumps({"memories": [{"kind": "gossip", "content": "Ana likes tea", "confidence": 0.9,
                                     "importance": 0.8, "source_ids": ["m1"]},
                                    {"kind": "fact", "content": "", "source_ids": ["m1"]},
                                    "not an object"]})
    with scripted_memory(db_path, clock, junk, junk) as m:
        result = m.add(SAY, alice)
        assert [e.event for e in result.events] == ["SKIPPED"] * 3
        assert "unknown kind 'gossip'" in result.events[0].reason and result.events[0].content == "Ana likes tea"
        assert all(e.reason.startswith("invalid item from the model") for e in result.events)
        job = m.add(SAY, alice, background=True).job_id
        m.jobs.drain()
        done = next(j for j in m.jobs.list() if j.id == job)
        assert done.status.value == "done" and len(done.result["events"]) == 3
