"""OpenAICompatibleLLM and post_json against a real local HTTP server."""

from __future__ import annotations

import socket
import urllib.error

import pytest

from engram.errors import ConfigError, LLMError, LLMRateLimitError, LLMResponseError, LLMTimeoutError
from engram.llm import HTTPStatusError, OpenAICompatibleLLM, TokenUsage, post_json
from engram.llm.http import parse_retry_after
from engram.model import Message
from stub_openai import StubOpenAI, StubReply, chat_reply, error_reply

SCHEMA = {"title": "answer", "type": "object", "properties": {"x": {"type": "integer"}},
          "required": ["x"], "additionalProperties": False}
HELLO = [Message(role="user", content="hello")]


def client(stub: StubOpenAI, **options) -> OpenAICompatibleLLM:
    options = {"timeout": 2.0, "max_retries": 3, "backoff": 0.01} | options
    return OpenAICompatibleLLM("stub-model", stub.base_url, "sk-test", **options)


def test_good_answer_returns_text_usage_and_model():
    with StubOpenAI([chat_reply("hi there", prompt_tokens=12, completion_tokens=3, model="stub-2024")]) as stub:
        completion = client(stub).complete(HELLO, temperature=0.3)
    assert completion.text == "hi there"
    assert completion.usage == TokenUsage(12, 3)
    assert completion.usage.total == 15
    assert completion.model == "stub-2024"
    (request,) = stub.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.body == {"model": "stub-model", "temperature": 0.3,
                            "messages": [{"role": "user", "content": "hello"}]}


def test_no_authorization_header_without_key():
    with StubOpenAI([chat_reply("ok")]) as stub:
        OpenAICompatibleLLM("m", stub.base_url, None, backoff=0.01).complete(HELLO)
    assert "Authorization" not in stub.requests[0].headers


def test_json_schema_is_sent_as_strict_response_format():
    with StubOpenAI([chat_reply('{"x": 1}')]) as stub:
        llm = client(stub)
        assert llm.complete(HELLO, json_schema=SCHEMA).text == '{"x": 1}'
    response_format = stub.requests[0].body["response_format"]
    assert response_format == {"type": "json_schema",
                               "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True}}
    assert llm.structured_mode == "json_schema"


def _rejects(kinds: set[str]):
    def script(body):
        kind = (body.get("response_format") or {}).get("type")
        if kind in kinds:
            return error_reply(400, f"response_format type '{kind}' is not supported by this server")
        return chat_reply('{"x": 2}')
    return script


def test_json_schema_rejected_falls_back_to_json_object_and_remembers():
    with StubOpenAI(_rejects({"json_schema"})) as stub:
        llm = client(stub)
        assert llm.complete(HELLO, json_schema=SCHEMA).text == '{"x": 2}'
        assert llm.complete(HELLO, json_schema=SCHEMA).text == '{"x": 2}'
    kinds = [(r.body.get("response_format") or {}).get("type") for r in stub.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]  # the rejected mode is not retried
    assert llm.structured_mode == "json_object"
    last_message = stub.requests[1].body["messages"][-1]
    assert last_message["role"] == "system" and '"required":["x"]' in last_message["content"]


def test_json_object_rejected_too_falls_back_to_prompting():
    with StubOpenAI(_rejects({"json_schema", "json_object"})) as stub:
        llm = client(stub)
        llm.complete(HELLO, json_schema=SCHEMA)
    assert [("response_format" in r.body) for r in stub.requests] == [True, True, False]
    assert "JSON Schema" in stub.requests[2].body["messages"][-1]["content"]
    assert llm.structured_mode == "prompt"


def test_temperature_rejected_is_dropped_and_remembered():
    def script(body):
        if "temperature" in body:
            return error_reply(400, "Unsupported value: 'temperature' does not support 0.0 with this model.")
        return chat_reply("ok")

    with StubOpenAI(script) as stub:
        llm = client(stub)
        assert llm.complete(HELLO).text == "ok"
        assert llm.complete(HELLO, json_schema=SCHEMA).text == "ok"
    assert ["temperature" in r.body for r in stub.requests] == [True, False, False]
    assert llm.structured_mode == "json_schema"  # a temperature refusal says nothing about formats


def test_unrelated_400_is_raised_without_fallback():
    with StubOpenAI([error_reply(400, "model 'stub-model' does not exist")]) as stub:
        llm = client(stub)
        with pytest.raises(HTTPStatusError) as caught:
            llm.complete(HELLO, json_schema=SCHEMA)
    assert caught.value.status == 400 and "does not exist" in caught.value.body
    assert llm.structured_mode == "json_schema"
    assert len(stub.requests) == 1


def test_401_is_not_retried():
    with StubOpenAI([error_reply(401, "bad key"), chat_reply("never")]) as stub:
        with pytest.raises(HTTPStatusError, match="401"):
            client(stub).complete(HELLO)
    assert len(stub.requests) == 1


def test_500s_then_success():
    script = [error_reply(500, "boom"), error_reply(502, "bad gateway"), chat_reply("finally")]
    with StubOpenAI(script) as stub:
        assert client(stub).complete(HELLO).text == "finally"
    assert len(stub.requests) == 3


def test_500s_beyond_retries_raise_llm_error_with_cause():
    with StubOpenAI([error_reply(500, "boom")] * 3) as stub:
        with pytest.raises(LLMError, match="3 attempt") as caught:
            client(stub, max_retries=2).complete(HELLO)
    assert isinstance(caught.value.__cause__, urllib.error.HTTPError)
    assert not isinstance(caught.value, (LLMTimeoutError, LLMRateLimitError))


def test_429_waits_for_retry_after_then_succeeds():
    script = [error_reply(429, "slow down", headers={"Retry-After": "1"}), chat_reply("ok")]
    with StubOpenAI(script) as stub:
        assert client(stub, backoff=0.01).complete(HELLO).text == "ok"
    first, second = stub.requests
    assert second.at - first.at >= 1.0


def test_503_retry_after_is_honoured_too():
    script = [error_reply(503, "overloaded", headers={"Retry-After": "0.5"}), chat_reply("ok")]
    with StubOpenAI(script) as stub:
        client(stub, backoff=0.01).complete(HELLO)
    assert stub.requests[1].at - stub.requests[0].at >= 0.5


def test_429_beyond_retries_is_a_rate_limit_error():
    with StubOpenAI([error_reply(429, "quota")] * 2) as stub:
        with pytest.raises(LLMRateLimitError):
            client(stub, max_retries=1).complete(HELLO)
    assert len(stub.requests) == 2


def test_backoff_grows_between_attempts():
    with StubOpenAI([error_reply(500, "x"), error_reply(500, "x"), chat_reply("ok")]) as stub:
        client(stub, backoff=0.2).complete(HELLO)
    first, second, third = (r.at for r in stub.requests)
    assert second - first >= 0.2
    assert third - second >= 0.4


def test_slow_server_times_out_after_retries():
    with StubOpenAI([StubReply(delay=0.8, body={})] * 2) as stub:
        with pytest.raises(LLMTimeoutError) as caught:
            client(stub, timeout=0.2, max_retries=1).complete(HELLO)
    assert len(stub.requests) == 2
    assert caught.value.__cause__ is not None


def test_connection_refused_is_an_llm_error_after_retries():
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = OpenAICompatibleLLM("m", f"http://127.0.0.1:{port}/v1", None, max_retries=1, backoff=0.01)
    with pytest.raises(LLMError) as caught:
        llm.complete(HELLO)
    assert type(caught.value) is LLMError
    assert isinstance(caught.value.__cause__, urllib.error.URLError)


def test_non_json_body_is_a_response_error():
    with StubOpenAI([StubReply(body="<html>gateway</html>")]) as stub:
        with pytest.raises(LLMResponseError) as caught:
            client(stub).complete(HELLO)
    assert caught.value.raw == "<html>gateway</html>"


def test_answer_without_content_is_a_response_error():
    refusal = {"choices": [{"message": {"role": "assistant", "content": None, "refusal": "I can't"}}]}
    with StubOpenAI([StubReply(body=refusal)]) as stub:
        with pytest.raises(LLMResponseError, match="refused: I can't"):
            client(stub).complete(HELLO)


def test_missing_usage_counts_zero():
    body = {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}
    with StubOpenAI([StubReply(body=body)]) as stub:
        completion = client(stub).complete(HELLO)
    assert completion.usage == TokenUsage(0, 0)
    assert completion.model == "stub-model"


def test_post_json_is_reusable_for_other_endpoints():
    with StubOpenAI([StubReply(body={"data": [{"embedding": [0.5, 0.25]}]})]) as stub:
        data = post_json(f"{stub.base_url}/embeddings", {"input": ["a"]}, api_key="k", backoff=0.01)
    assert data == {"data": [{"embedding": [0.5, 0.25]}]}
    assert stub.requests[0].path == "/v1/embeddings"
    assert stub.requests[0].body == {"input": ["a"]}


@pytest.mark.parametrize(("header", "seconds"), [("3", 3.0), ("0.5", 0.5), ("-2", 0.0), ("99999", 99999.0),
                                                   ("", None), (None, None), ("soon", None)])
def test_parse_retry_after(header, seconds):
    assert parse_retry_after(header) == seconds


def test_parse_retry_after_http_date_in_the_past_is_zero():
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_from_env_reads_settings():
    env = {"LLM_MODEL": "qwen2.5", "OPENAI_BASE_URL": "http://localhost:11434/v1/", "OPENAI_API_KEY": ""}
    llm = OpenAICompatibleLLM.from_env(env, timeout=5)
    assert (llm.model, llm.base_url, llm.timeout) == ("qwen2.5", "http://localhost:11434/v1", 5)


def test_from_env_requires_model():
    with pytest.raises(ConfigError, match="LLM_MODEL"):
        OpenAICompatibleLLM.from_env({"OPENAI_API_KEY": "sk"})


def test_from_env_requires_key_for_openai_itself():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAICompatibleLLM.from_env({"LLM_MODEL": "gpt-4o-mini"})
    llm = OpenAICompatibleLLM.from_env({"LLM_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "sk-secret"})
    assert llm.base_url == "https://api.openai.com/v1"
    assert "sk-secret" not in repr(llm)
