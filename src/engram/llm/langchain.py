"""Adapter: any LangChain chat model (``BaseChatModel``) as an engram LLM.

JSON is asked for in the prompt (the same way for every chat model) and the
caller parses the text with ``parse_json_answer``; ``with_structured_output``
would return parsed objects instead of text and behaves differently per provider.
Temperature is left to the chat model's own configuration: not every model
accepts it as a call-time argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConfigError, LLMError, LLMRateLimitError, LLMTimeoutError
from ..model import Message
from .base import Completion, TokenUsage, with_schema_instruction


class LangChainLLM:
    def __init__(self, chat_model: Any, *, model: str | None = None) -> None:
        self.chat_model = chat_model
        self.model = model or _model_name(chat_model)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        if json_schema is not None:
            messages = with_schema_instruction(messages, json_schema)
        lc_messages = to_langchain_messages(messages)
        try:
            result = self.chat_model.invoke(lc_messages)
        except Exception as exc:  # provider boundary: any client library error becomes an LLMError
            raise _translate(exc) from exc
        return Completion(text=_text_of(result), usage=_usage_of(result), model=self.model)


def _model_name(chat_model: Any) -> str:
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(chat_model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(chat_model).__name__


def to_langchain_messages(messages: Sequence[Message]) -> list[Any]:
    try:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    except ImportError as exc:
        raise ConfigError("LangChainLLM needs langchain-core: pip install langchain-core") from exc
    # Tool turns become human text: a ToolMessage needs a tool_call_id we do not have.
    classes = {"system": SystemMessage, "assistant": AIMessage, "ai": AIMessage}
    converted = []
    for message in messages:
        cls = classes.get(message.role, HumanMessage)
        converted.append(cls(content=message.content, name=message.name))
    return converted


def _text_of(result: Any) -> str:
    content = getattr(result, "content", result)
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: keep the text ones
        parts = [b if isinstance(b, str) else b.get("text", "") for b in content if isinstance(b, (str, dict))]
        return "".join(parts)
    raise LLMError(f"chat model returned {type(result).__name__} without text content")


def _usage_of(result: Any) -> TokenUsage:
    usage = getattr(result, "usage_metadata", None)
    if not isinstance(usage, Mapping):
        return TokenUsage()
    return TokenUsage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))


def _translate(exc: Exception) -> LLMError:
    if isinstance(exc, LLMError):
        return exc
    name = type(exc).__name__.lower()
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, TimeoutError) or "timeout" in name:
        return LLMTimeoutError(message)
    if "ratelimit" in name or "rate_limit" in name:
        return LLMRateLimitError(message)
    return LLMError(message)
