"""Chat models for engram's graphs from OPENAI_API_KEY / OPENAI_BASE_URL / LLM_MODEL.

langchain-openai's ChatOpenAI when it is installed; otherwise ``LLMChatModel``, a
small LangChain chat model over engram's own OpenAI-compatible client (text in,
text out; enough for the memory graph, which calls no tools)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from ...llm.base import LLM
from ...llm.openai import OpenAICompatibleLLM
from ...model import Message

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


class LLMChatModel(BaseChatModel):
    """Any engram ``LLM`` (e.g. OpenAICompatibleLLM) as a LangChain chat model."""

    llm: Any
    temperature: float = 0.3

    @property
    def _llm_type(self) -> str:
        return "engram-llm"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        turns = [Message(_ROLES.get(m.type, "user"), _text(m)) for m in messages if _text(m)]
        completion = self.llm.complete(turns, temperature=self.temperature)
        usage = {"input_tokens": completion.usage.prompt_tokens, "output_tokens": completion.usage.completion_tokens,
                 "total_tokens": completion.usage.total}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(completion.text, usage_metadata=usage))])


def chat_model_from_env(env: Mapping[str, str] | None = None, *, prefer_langchain_openai: bool = True) -> BaseChatModel:
    """ConfigError (saying what to set) when no model is configured."""
    env = os.environ if env is None else env
    llm = OpenAICompatibleLLM.from_env(env)  # validates LLM_MODEL / OPENAI_API_KEY / OPENAI_BASE_URL
    if prefer_langchain_openai:
        try:
            from langchain_openai import ChatOpenAI
        except ImportError:
            pass
        else:
            return ChatOpenAI(model=llm.model, base_url=llm.base_url, api_key=env.get("OPENAI_API_KEY") or "none",
                              temperature=0.3)
    return LLMChatModel(llm=llm)


def llm_from_env(env: Mapping[str, str] | None = None) -> LLM:
    return OpenAICompatibleLLM.from_env(os.environ if env is None else env)


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
