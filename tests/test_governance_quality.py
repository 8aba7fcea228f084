"""Memory quality on the live store: write accuracy from reviewed samples (with a
Wilson interval), recall hit rate, repeat rate, skips, PII actions, latency."""

import math
from datetime import timedelta

import pytest

from engram import FakeHashEmbedder, InvalidValueError, Memory, NotFoundError, PIIPolicy, Scope
from engram.approval_rules import ApprovalRule, ApprovalRules
from engram.governance.events import extract_detail, forbidden_kinds, skip_class
from engram.governance.quality import accuracy, wilson
from engram.llm.fake import ScriptedLLM
from engram.pipeline.llm_extract import LLMExtractor
from engram.pipeline.run import AddEvent, Pipeline
from engram.store.sqlite import SQLiteStore
from engram.values.governance import Verdict, WriteSample


def test_wilson_interval_matches_the_textbook_values():
    low, high = wilson(8, 10)
    assert math.isclose(low, 0.4902, abs_tol=1e-4) and math.isclose(high, 0.9433, abs_tol=1e-4)
    assert wilson(0, 0) is None
    low, high = wilson(0, 5)
    assert low == 0.0 and 0.43 < high < 0.44
    assert wilson(5, 5)[1] == 1.0


def test_accuracy_counts_verdicts_and_leaves_unreviewed_out(clock):
    now = clock.now()
    samples = [WriteSample(str(i), "acme", str(i), 1, (), "pipeline", now, now, verdict)
               for i, verdict in enumerate([Verdict.CORRECT] * 3 + [Verdict.WRONG, Verdict.SHOULD_NOT_STORE, None])]
    result = accuracy(samples)
    assert (result.reviewed, result.correct, result.wrong, result.should_not_store, result.awaiting_review) == (
        5, 3, 1, 1, 1)
    assert result.rate == 0.6 and result.low < 0.6 < result.high


def test_recent_writes_are_sampled_once_and_judged(memory, alice, bob, clock):
    for i in range(6):
        memory.remember(f"Fact number {i} about alice", alice, actor="pipeline" if i % 2 else "app")
    memory.remember("Bob fact", bob)
    first = memory.quality.sample(alice, n=2, seed=1)
    assert len(first) == 2 and all(s.namespace == alice.namespace for s in first)
    rest = memory.quality.sample(alice, n=10, seed=1)
    assert len(rest) == 4 and not {s.id for s in rest} & {s.id for s in first}
    assert memory.quality.sample(alice, n=10) == []
    assert [s.actor for s in memory.quality.sample(bob, n=5, actor="app")] == ["app"]
    queue = memory.quality.list(alice)
    assert len(queue) == 6 and all(item.written and item.written.content.startswith("Fact") for item in queue)
    marked = memory.quality.mark(queue[0].sample.id, alice, "wrong", reviewer="qa", note="not alice's")
    assert (marked.verdict, marked.reviewer) == (Verdict.WRONG, "qa")
    assert len(memory.quality.list(alice)) == 5 and len(memory.quality.list(alice, reviewed=True)) == 1
    review = memory.audit.list(alice, operation="review")[0]
    assert review.detail == {"sample_id": marked.id, "verdict": "wrong", "note": "not alice's"}
    with pytest.raises(InvalidValueError, match="verdict"):
        memory.quality.mark(queue[1].sample.id, alice, "meh", reviewer="qa")
    with pytest.raises(NotFoundError):
        memory.quality.mark(queue[1].sample.id, bob, "correct", reviewer="qa")
    with pytest.raises(InvalidValueError):
        memory.quality.sample(alice, n=0)


def test_skip_reasons_are_classified_from_the_pipelines_messages():
    assert skip_class("confidence 0.50 < 0.70") == "gate"
    assert skip_class("PII policy forbids storing secret (found in content)") == "pii"
    assert skip_class("refused: PII policy forbids storing card, phone (found in content)") == "pii"
    assert skip_class("refused: no writes on Sundays") == "policy"
    assert skip_class("invalid item from the model: no content") == "invalid"
    assert forbidden_kinds("refused: PII policy forbids storing card, phone (found in content)") == ["card", "phone"]
    events = [AddEvent("NOOP", "x", None, "already known", "r1"), AddEvent("NOOP", "x", None,
              "repeated within this conversation", "r2"), AddEvent("SKIPPED", "x", None, "importance 0.1 < 0.3")]
    assert extract_detail(events) == {"skipped": {"gate": 1}, "forbidden": {}, "known": ["r1"]}


def _memory(path, clock, answers) -> Memory:
    return Memory(SQLiteStore(path), embedder=FakeHashEmbedder(), clock=clock,
                  pipeline=Pipeline(LLMExtractor(ScriptedLLM(answers))), pii=PIIPolicy(),
                  approvals=ApprovalRules((ApprovalRule("org", namespaces=("orgs/*",)),)))


def _extraction(*items):
    import json

    return json.dumps({"memories": [{"kind": k, "content": c, "confidence": 0.9, "importance": i,
                                     "source_ids": ["m1"]} for k, c, i in items]})


def test_a_scripted_run_yields_the_articles_metrics(tmp_path, clock, alice):
    answers = [
        _extraction(("fact", "Lives in Lisbon", 0.8), ("fact", "Phone 13812345678", 0.8),
                    ("fact", "Password is hunter2secret", 0.9), ("fact", "Said hello", 0.1)),
        _extraction(("fact", "Lives in Lisbon", 0.8)),  # another thread, recall had not shown it: a repeat
        _extraction(("fact", "Lives in Lisbon", 0.8)),  # a thread where recall showed it: no repeat
    ]
    with _memory(str(tmp_path / "m.db"), clock, answers) as memory:
        memory.add(["I live in Lisbon, call me on 13812345678, my password is hunter2secret. Hello!"], alice,
                   thread_id="t1")
        clock.advance(hours=2)
        memory.add(["As I said, I live in Lisbon."], alice, thread_id="t2")
        block = memory.context("where do I live", alice, thread_id="t3")
        memory.audit.link_answer(block.recall_id, alice, answer_id="a1", answer="You live in Lisbon.")
        memory.add(["Yes, Lisbon."], alice, thread_id="t3")
        empty = memory.context("favourite colour", alice, thread_id="t3")
        memory.audit.link_answer(empty.recall_id, alice, answer_id="a2", answer="I don't know yet.")
        with pytest.raises(Exception):
            memory.remember("Org holiday on May 1", Scope("acme", ("orgs", "acme")))
        samples = memory.quality.sample(alice, n=5, seed=3)
        memory.quality.mark(samples[0].id, alice, "correct", reviewer="qa")
        report = memory.quality.report("acme", window=timedelta(days=1))
    assert report.add_events == {"ADD": 2, "NOOP": 2, "SKIPPED": 2}
    assert report.skipped == {"gate": 1, "pii": 1}
    assert report.pii_actions == {"phone": {"mask": 1}, "secret": {"forbid": 1}}
    assert report.changes["create"] == 2 and report.changes["extract"] == 3 and report.changes["propose"] == 1
    assert report.pending == 1 and report.recalls == 2 and report.latency.count == 2
    # both memories are recalled each time (a tiny store); only "Lives in Lisbon" is used, once
    assert (report.answered, report.recalled_for_answers, report.used) == (2, 4, 1)
    assert report.hit_rate == 0.25
    assert (report.turns, report.repeats) == (3, 1) and report.repeat_rate == pytest.approx(1 / 3)
    assert (report.accuracy.reviewed, report.accuracy.rate) == (1, 1.0)
