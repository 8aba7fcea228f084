"""Memory files that stay fresh: Deep Agents' MemoryMiddleware loads AGENTS.md-style
files once per thread and keeps them in state, so a file edited during a
conversation (by this agent, another thread or the application) is not seen
again in that thread. EngramMemoryMiddleware reloads them at the start of every
turn, so the agent sees each edit on its next turn."""

from __future__ import annotations

from typing import Any

from deepagents.middleware.memory import MemoryMiddleware
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime


class EngramMemoryMiddleware(MemoryMiddleware):
    """MemoryMiddleware that re-reads its sources on every turn (one backend read
    per source; engram answers it by primary key)."""

    def before_agent(self, state: Any, runtime: Runtime, config: RunnableConfig) -> Any:  # type: ignore[override]
        return super().before_agent(_without_cache(state), runtime, config)

    async def abefore_agent(self, state: Any, runtime: Runtime, config: RunnableConfig) -> Any:  # type: ignore[override]
        return await super().abefore_agent(_without_cache(state), runtime, config)


def _without_cache(state: Any) -> Any:
    return {key: value for key, value in state.items() if key != "memory_contents"}
