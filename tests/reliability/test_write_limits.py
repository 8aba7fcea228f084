"""Issue 21 item 7: writes that failed or bloated. An LLM reconciler answering ADD for a
fact already stored ends in NOOP (add() and its background job) instead of a conflict
retried forever; a model answering 30,000 items is read up to a limit and its job row
stays small; add() has a size limit with a typed error (422), the HTTP API refuses an
oversized body with 413 before reading it."""

from __future__ import annotations

import json
import time

import _common
import pytest
from fastapi.testclient import TestClient

from engram import FakeHashEmbedder, InvalidContentError, Memory, Scope, Settings
from engram.llm.fake import ScriptedLLM
from engram.pipeline.llm_extract import LLMExtractor
from engram.pipeline.llm_reconcile import LLMReconciler
from engram.pipeline.run import MAX_ITEMS, Pipeline
from engram.server.http import create_app

ANA = Scope.for_user("acme", "ana")
SAY = [{"role": "user", "content": "I live in Porto", "id": "m1"}]


def _items(*contents: str) -> str:
    return json.dumps({"memories": [{"kind": "fact", "content": c, "confidence": 0.9, "importance": 0.8,
                                     "source_ids": ["m1"]} for c in contents]})


def _always_add(messages) -> str:
    return json.dumps({"event": "ADD", "target_id": None, "content": "", "reason": "looks new to me"})


@pytest.fixture
def target(backend_name):
    made = _common.new_target(backend_name)
    yield made
    made.close()


def _memory(url: str, extract, reconcile=None) -> Memory:
    memory = Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False))
    memory._pipeline = Pipeline(LLMExtractor(ScriptedLLM(extract)),
                                LLMReconciler(ScriptedLLM(reconcile)) if reconcile else None)
    return memory


def test_an_add_the_model_calls_new_for_a_stored_fact_ends_in_noop(target):
    with _memory(target.url, lambda m: _items("The user lives in Porto"), _always_add) as memory:
        first = memory.add(SAY, ANA)
        assert [e.event for e in first.events] == ["ADD"]
        again = memory.add(SAY, ANA)
        assert [e.event for e in again.events] == ["NOOP"] and first.events[0].record_id in again.events[0].reason
        job = memory.add(SAY, ANA, background=True).job_id
        assert memory.jobs.drain() == 1
        done = next(j for j in memory.jobs.list("acme") if j.id == job)
        assert done.status.value == "done" and done.attempts == 1 and done.result["counts"] == {"NOOP": 1}
        assert len(memory.list(ANA).items) == 1


def test_a_runaway_answer_is_read_up_to_the_limit_and_its_job_stays_small(target):
    answer = _items(*(f"The user owns item number {i} of the collection" for i in range(30_000)))
    with _memory(target.url, lambda m: answer) as memory:
        job = memory.add(SAY, ANA, background=True).job_id
        memory.jobs.drain()
        done = next(j for j in memory.jobs.list("acme") if j.id == job)
        assert done.status.value == "done"
        events = done.result["events"]
        assert len(events) <= MAX_ITEMS + 1 and any("29900 more item(s)" in e["reason"] for e in events)
        assert len(json.dumps(dict(done.result), default=str)) < 200_000
        assert len(memory.list(ANA, limit=1000).items) <= MAX_ITEMS


def test_add_refuses_an_oversized_conversation_at_once_and_keeps_nothing(target):
    with Memory.open(target.url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False)) as memory:
        started = time.monotonic()
        with pytest.raises(InvalidContentError, match="the limit is 32000"):
            memory.add([{"role": "user", "content": "x" * 1_000_000}], ANA)
        with pytest.raises(InvalidContentError, match="together"):
            memory.add([{"role": "user", "content": "y" * 30_000}] * 10, ANA)
        with pytest.raises(InvalidContentError):
            memory.threads.record([{"role": "user", "content": "x" * 1_000_000}], ANA)
        assert time.monotonic() - started < 60  # refused before any work (a 1 MB turn took 94 s)
        assert memory.threads.list(ANA) == [] and memory.jobs.list("acme") == []


def test_the_http_api_answers_413_and_422_typed(tmp_path):
    settings = Settings(auto_worker=False, max_request_bytes=2_000_000)
    with Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder(), settings=settings) as memory:
        client = TestClient(create_app(memory, api_keys=None))
        turn = {"messages": [{"role": "user", "content": "x" * 1_000_000}], "scope": {"user": "ana"}}
        too_long = client.post("/v1/add", json=turn)
        assert too_long.status_code == 422 and too_long.json()["error"] == "InvalidContentError"
        huge = client.post("/v1/add", content=b'{"messages": "' + b"x" * 3_000_000 + b'"}',
                           headers={"Content-Type": "application/json"})
        assert huge.status_code == 413 and huge.json()["error"] == "RequestEntityTooLarge"

        def chunks():
            yield b'{"messages": "'
            for _ in range(30):
                yield b"x" * 100_000
            yield b'"}'

        streamed = client.post("/v1/add", content=chunks(), headers={"Content-Type": "application/json"})
        assert streamed.status_code == 413 and streamed.json()["error"] == "RequestEntityTooLarge"
