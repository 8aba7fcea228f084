"""FAKE chat model for trying engram's LangGraph / Deep Agents integrations offline,
in tests and in the docs: each call returns the next scripted AIMessage (or the
result of a callable given the messages), so real graphs run their real tools
without a network. Use a real chat model (``chat_model_from_env()``, ChatOpenAI …)
for anything else."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from ...errors import LLMResponseError

__all__ = ["ScriptedChatModel", "calls_tools", "tool_call"]

Step = AIMessage | Callable[[list[BaseMessage]], AIMessage]
_ids = itertools.count(1)


def tool_call(name: str, **args: Any) -> dict[str, Any]:
    """One tool call, as a model's answer carries it."""
    return {"name": name, "args": args, "id": f"call_{next(_ids)}", "type": "tool_call"}


def calls_tools(*calls: dict[str, Any]) -> AIMessage:
    """A model answer that calls these tools (``tool_call(...)`` each)."""
    return AIMessage(content="", tool_calls=list(calls))


class ScriptedChatModel(BaseChatModel):
    """FAKE: returns the scripted steps in order; records every prompt it was given."""

    script: list[Any]
    _cursor: int = PrivateAttr(default=0)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _prompts: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def prompts(self) -> list[list[BaseMessage]]:
        return self._prompts

    def system_prompts(self) -> list[str]:
        return [str(p[0].content) for p in self._prompts if p and p[0].type == "system"]

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        with self._lock:
            if self._cursor >= len(self.script):
                raise LLMResponseError(f"the scripted chat model's script ran out after {self._cursor} calls")
            step = self.script[self._cursor]
            self._cursor += 1
            self._prompts.append(list(messages))
        message = step(list(messages)) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=message.model_copy())])
