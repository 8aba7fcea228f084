"""Memory tools for LangChain agents (``pip install 'engram-agentmem[langgraph]'``).

- ``create_manage_memory_tool``: create, update or delete (forget) a memory.
- ``create_search_memory_tool``: hybrid search with scores.
- ``create_search_past_conversations_tool``: past conversations (threads of turns).
- ``memory_tools``: all three, bound to one namespace template.

The scope of every call comes from the run (LangGraph ``configurable``, the run
context, LangGraph Platform auth), never from the model's arguments. They work in
``create_react_agent``, ``create_agent``, Deep Agents (``tools=[...]``) and any
LangChain runnable that passes its config on.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "NamespaceTemplate",
    "create_manage_memory_tool",
    "create_search_memory_tool",
    "create_search_past_conversations_tool",
    "memory_tools",
    "scope_from_run",
]

_WHERE = dict.fromkeys(__all__, ".tools")


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(_WHERE[name], __name__), name)
