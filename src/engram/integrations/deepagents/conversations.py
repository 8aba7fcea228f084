"""Deep Agents conversations kept as engram threads: ``ConversationMiddleware`` records
each run's exchange (the user's message and the agent's answer; tool chatter left out)
in the calling user's thread, so ``search_past_conversations`` and consolidation see
Deep Agents conversations like any other. The user comes from the runtime (LangGraph
Platform auth, the run context or ``configurable.user_id``), the thread from
``configurable.thread_id``; never from the model."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.runnables import ensure_config

from ...memory import Memory
from ...model import Message, Scope
from .setups import assistant_id_from_runtime, user_id_from_runtime

_ROLES = {"human": "user", "ai": "assistant"}


class ConversationMiddleware(AgentMiddleware):
    """Record the run's turns as ``("users", uid)`` threads of ``tenant``, shared by the
    deployment's agents like every other memory of the user; ``per_agent=True`` records
    them as ``("agents", aid, "users", uid)`` (``assistant_id``, else the runtime's)."""

    def __init__(self, memory: Memory, *, tenant: str = "default", assistant_id: str | None = None,
                 per_agent: bool = False) -> None:
        super().__init__()
        self.memory, self.tenant, self.assistant_id, self.per_agent = memory, tenant, assistant_id, per_agent

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        turns = _this_run(state.get("messages") or [])
        if turns:
            user = user_id_from_runtime(runtime)
            namespace = ("users", user) if not self.per_agent else (
                "agents", assistant_id_from_runtime(runtime, self.assistant_id), "users", user)
            thread = (ensure_config().get("configurable") or {}).get("thread_id")
            self.memory.threads.record(turns, Scope(self.tenant, namespace),
                                       thread_id=str(thread) if thread else None, metadata={"surface": "deepagents"})
        return None

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return await asyncio.to_thread(self.after_agent, state, runtime)


def _this_run(messages: Sequence[Any]) -> list[Message]:
    """From the last user message on: the user's message and the agent's text answers."""
    start = max((i for i, m in enumerate(messages) if getattr(m, "type", None) == "human"), default=None)
    if start is None:
        return []
    out = []
    for message in messages[start:]:
        role = _ROLES.get(getattr(message, "type", ""))
        text = _text(message.content) if role else ""
        if role and text.strip() and not getattr(message, "tool_calls", None):
            out.append(Message(role, text, getattr(message, "id", None)))
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return str(content)
