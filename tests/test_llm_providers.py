"""The protocol values, the scripted fake, the LangChain adapter and the llama.cpp guard."""

from __future__ import annotations

import sys
from typing import Any, ClassVar

import pytest

from engram.errors import ConfigError, LLMError, LLMRateLimitError, LLMResponseError, LLMTimeoutError
from engram.llm import LLM, Completion, LangChainLLM, LlamaCppLLM, ScriptedLLM, ScriptExhaustedError, TokenUsage
from engram.model import Message

HELLO = [Message(role="user", content="hello")]


# -- TokenUsage ---------------------------------------------------------------

def test_token_usage_adds_and_totals():
    total = TokenUsage(10, 3) + TokenUsage(5, 2)
    assert total == TokenUsage(15, 5)
    assert total.total == 20
    assert sum([TokenUsage(1, 1), TokenUsage(2, 2)], TokenUsage()) == TokenUsage(3, 3)


def test_token_usage_is_frozen():
    with pytest.raises(AttributeError):
        TokenUsage(1, 1).prompt_tokens = 5  # type: ignore[misc]


# -- ScriptedLLM --------------------------------------------------------------

def test_scripted_llm_answers_in_order_and_records_calls():
    llm = ScriptedLLM(["one", "two"], model="fake-1")
    assert isinstance(llm, LLM)
    first = llm.complete(HELLO, json_schema={"type": "object"}, temperature=0.5)
    assert first == Completion("one", TokenUsage(2, 1), "fake-1")
    assert llm.complete(HELLO).text == "two"
    assert [c.json_schema for c in llm.calls] == [{"type": "object"}, None]
    assert llm.calls[0].temperature == 0.5 and llm.calls[0].messages == tuple(HELLO)
    assert llm.remaining == 0


def test_scripted_llm_raises_scripted_exceptions_in_turn():
    llm = ScriptedLLM([LLMTimeoutError("slow"), "ok"])
    with pytest.raises(LLMTimeoutError):
        llm.complete(HELLO)
    assert llm.complete(HELLO).text == "ok"


def test_scripted_llm_complains_when_the_script_runs_out():
    llm = ScriptedLLM(["only"])
    llm.complete(HELLO)
    with pytest.raises(ScriptExhaustedError, match="only 1 answers"):
        llm.complete(HELLO)
    assert not issubclass(ScriptExhaustedError, LLMError)  # a broken test is not a provider error


def test_scripted_llm_accepts_a_function_of_the_messages():
    llm = ScriptedLLM(lambda messages: messages[-1].content.upper())
    assert llm.complete(HELLO).text == "HELLO"
    assert llm.model == "scripted-fake"


# -- LangChainLLM -------------------------------------------------------------

def _fake_chat_model(*answers: Any):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    class RecordingChatModel(GenericFakeChatModel):
        seen: ClassVar[list] = []

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            self.seen.append(messages)
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    return RecordingChatModel(messages=iter(answers), seen=[])


def test_langchain_adapter_converts_messages_and_reads_usage():
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    chat = _fake_chat_model(AIMessage(content="bonjour", usage_metadata={
        "input_tokens": 9, "output_tokens": 4, "total_tokens": 13}))
    llm = LangChainLLM(chat, model="fake-chat")
    conversation = [Message("system", "be brief"), Message("user", "hi", name="alice"), Message("assistant", "hey")]
    completion = llm.complete(conversation)
    assert completion == Completion("bonjour", TokenUsage(9, 4), "fake-chat")
    (sent,) = chat.seen
    assert [type(m) for m in sent] == [SystemMessage, HumanMessage, AIMessage]
    assert [m.content for m in sent] == ["be brief", "hi", "hey"]
    assert sent[1].name == "alice"


def test_langchain_adapter_asks_for_the_schema_in_the_prompt():
    from langchain_core.messages import AIMessage

    chat = _fake_chat_model(AIMessage(content='{"x": 1}'))
    completion = LangChainLLM(chat).complete(HELLO, json_schema={"type": "object", "required": ["x"]})
    assert completion.text == '{"x": 1}'
    assert completion.usage == TokenUsage(0, 0)
    assert '"required":["x"]' in chat.seen[0][-1].content
    assert LangChainLLM(chat).model == "RecordingChatModel"


def test_langchain_adapter_joins_text_content_blocks():
    from langchain_core.messages import AIMessage

    chat = _fake_chat_model(AIMessage(content=[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]))
    assert LangChainLLM(chat).complete(HELLO).text == "ab"


class _Raising:
    model_name = "raising"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def invoke(self, messages):
        raise self.exc


class RateLimitError(Exception):  # named like the openai / anthropic SDK errors
    pass


@pytest.mark.parametrize(("raised", "expected"), [
    (TimeoutError("t"), LLMTimeoutError),
    (RateLimitError("429"), LLMRateLimitError),
    (RuntimeError("boom"), LLMError),
    (LLMResponseError("bad", raw="x"), LLMResponseError),
])
def test_langchain_adapter_translates_provider_errors(raised, expected):
    llm = LangChainLLM(_Raising(raised))
    assert llm.model == "raising"
    with pytest.raises(expected) as caught:
        llm.complete(HELLO)
    assert type(caught.value) is expected
    assert caught.value.__cause__ is raised or caught.value is raised


# -- LlamaCppLLM --------------------------------------------------------------

def test_llama_without_the_package_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes the import fail
    with pytest.raises(ConfigError, match="pip install 'engram-agentmem\\[llama\\]'"):
        LlamaCppLLM("/models/tiny.gguf")


class _FakeLlama:
    def __init__(self, answer: dict) -> None:
        self.answer = answer
        self.calls: list[dict] = []

    def create_chat_completion(self, **kwargs):
        self.calls.append(kwargs)
        return self.answer


def test_llama_sends_the_schema_as_a_grammar_and_reads_usage():
    fake = _FakeLlama({"choices": [{"message": {"content": '{"x": 1}'}}],
                       "usage": {"prompt_tokens": 20, "completion_tokens": 5}})
    llm = LlamaCppLLM.wrap(fake, "tiny.gguf")
    completion = llm.complete(HELLO, json_schema={"type": "object"}, temperature=0.1)
    assert completion == Completion('{"x": 1}', TokenUsage(20, 5), "tiny.gguf")
    assert fake.calls == [{"messages": [{"role": "user", "content": "hello"}], "temperature": 0.1,
                           "response_format": {"type": "json_object", "schema": {"type": "object"}}}]


def test_llama_answer_without_text_is_a_response_error():
    with pytest.raises(LLMResponseError):
        LlamaCppLLM.wrap(_FakeLlama({"choices": []}), "m").complete(HELLO)
