"""LLM faults from a real local HTTP server (issue 11, items 4 and 5): a server dripping
one byte at a time, 429 with Retry-After: 3600, 500s, junk and wrong-schema answers.
No call outlives its deadline, no add() outlives its budget, and every item dropped
is a SKIPPED event with its reason, in add()'s result and in a background job's."""

from __future__ import annotations

import json

import pytest

from engram import FakeHashEmbedder, Memory, Scope, Settings
from engram.errors import LLMRateLimitError, LLMTimeoutError
from engram.llm import OpenAICompatibleLLM
from engram.llm.deadline import within
from engram.model import Message
from engram.pipeline.llm_extract import LLMExtractor
from engram.pipeline.run import Pipeline, PipelineSettings
from engram.store.sqlite import SQLiteStore
from stub_openai import StubOpenAI, StubReply, chat_reply, error_reply

HELLO = [Message(role="user", content="hello")]
TURN = [Message("user", "I really like green tea, please remember that", id="m1")]
ANA = Scope.for_user("acme", "ana")


def llm(stub: StubOpenAI, **options) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM("stub-model", stub.base_url, "sk-test",
                               **({"timeout": 5.0, "max_retries": 2, "backoff": 0.01} | options))


def memory_over(path, model, **pipeline_settings) -> Memory:
    pipeline = Pipeline(LLMExtractor(model), settings=PipelineSettings(**pipeline_settings))
    return Memory(SQLiteStore(str(path)), embedder=FakeHashEmbedder(), pipeline=pipeline,
                  settings=Settings(auto_worker=False))


def test_a_dripping_server_is_cut_off_at_the_call_deadline(tmp_path):
    """The per-read timeout (5 s) never fires on a byte every 50 ms; the deadline does."""
    body = chat_reply("x" * 2000).body
    with StubOpenAI([StubReply(body=body, drip=0.05)]) as stub:
        with pytest.raises(LLMTimeoutError, match="deadline"):
            llm(stub, deadline_s=0.5, max_retries=0).complete(HELLO)
    (request,) = stub.requests
    assert request.path == "/v1/chat/completions"


def test_a_dripping_server_cannot_hold_add_beyond_its_budget(tmp_path):
    body = chat_reply("x" * 2000).body
    with StubOpenAI([StubReply(body=body, drip=0.05)] * 5) as stub:
        memory = memory_over(tmp_path / "m.db", llm(stub, deadline_s=None), add_deadline_s=0.5)
        result = memory.add(TURN, ANA, force=True)
    (event,) = result.events
    assert event.event == "SKIPPED" and "extraction failed" in event.reason and "deadline" in event.reason
    assert len(stub.requests) == 1  # no time left for a retry
    assert memory.list(ANA).items == ()


def test_retry_after_beyond_the_cap_fails_at_once(tmp_path):
    with StubOpenAI([error_reply(429, "slow down", headers={"Retry-After": "3600"})] * 3) as stub:
        with pytest.raises(LLMRateLimitError, match="3600s, more than the 30s"):
            llm(stub).complete(HELLO)
        assert len(stub.requests) == 1
        memory = memory_over(tmp_path / "m.db", llm(stub))
        result = memory.add(TURN, ANA, force=True)
    (event,) = result.events
    assert event.event == "SKIPPED" and "Retry-After" not in event.reason and "3600s" in event.reason
    assert len(stub.requests) == 2


def test_a_retry_after_inside_the_cap_is_waited_for_when_the_deadline_allows():
    script = [error_reply(429, "slow down", headers={"Retry-After": "0.2"}), chat_reply("ok")]
    with StubOpenAI(script) as stub:
        assert llm(stub, max_retry_after_s=1.0).complete(HELLO).text == "ok"
    with StubOpenAI(script) as stub:
        with pytest.raises(LLMRateLimitError, match="no time left"):
            llm(stub, max_retry_after_s=1.0, deadline_s=0.1).complete(HELLO)
    assert len(stub.requests) == 1


def test_server_errors_stop_retrying_when_the_add_budget_is_spent():
    with StubOpenAI([error_reply(500, "boom")] * 5) as stub:
        with within(0.2), pytest.raises(LLMTimeoutError, match="no time left"):
            llm(stub, backoff=1.0).complete(HELLO)
    assert len(stub.requests) == 1


def test_settings_reach_the_client_and_the_pipeline(tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_MODEL", "stub-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    settings = Settings(extractor="llm", auto_worker=False, llm_timeout_s=4, llm_deadline_s=9,
                        llm_max_retry_after_s=2, add_deadline_s=20)
    with Memory(SQLiteStore(str(tmp_path / "m.db")), embedder=FakeHashEmbedder(), settings=settings) as memory:
        client = memory.pipeline.extractor.llm
        assert (client.timeout, client.deadline_s, client.max_retry_after_s) == (4, 9, 2)
        assert memory.pipeline.settings.add_deadline_s == 20


JUNK = {
    "all items invalid": json.dumps({"memories": [{"kind": "fact", "content": "", "source_ids": ["m1"]},
                                                  {"kind": "opinion", "content": "x", "source_ids": ["m1"]},
                                                  "just a string"]}),
    "no usable JSON": "Sure! Here is what I remember: tea.",
    "wrong schema": json.dumps({"facts": [{"content": "Ana likes tea"}]}),
}


@pytest.mark.parametrize("case", sorted(JUNK))
def test_junk_answers_become_skipped_events_with_reasons_never_silence(tmp_path, case):
    with StubOpenAI(lambda body: chat_reply(JUNK[case])) as stub:
        memory = memory_over(tmp_path / "m.db", llm(stub))
        result = memory.add(TURN, ANA, force=True)
        assert result.events and all(e.event == "SKIPPED" and e.reason for e in result.events)
        memory.add(TURN, ANA, force=True, background=True)
        memory.jobs.drain()
    (job,) = memory.jobs.list("acme")
    if case == "all items invalid":  # the model answered: the job is done, and says what it dropped
        assert job.status.value == "done"
        assert job.result["counts"] == {"SKIPPED": 3}
        assert all(e["reason"].startswith("invalid item from the model") for e in job.result["events"])
    else:  # the answer was unusable: the job keeps the error and is retried later
        assert job.status.value == "queued" and "extraction failed" in job.last_error
    assert memory.list(ANA).items == ()
