"""LangGraph integration (``pip install 'engram-agentmem[langgraph]'``).

- ``EngramStore``: LangGraph's ``BaseStore`` over engram.
- ``build_memory_graph``: recall → agent → extract → save, with engram as long-term
  memory and a LangGraph checkpointer as short-term memory.
- ``default_checkpointer``: SqliteSaver, or PostgresSaver when engram runs on PostgreSQL.
- ``ScriptedChatModel``: a FAKE chat model playing a script (with ``tool_call`` /
  ``calls_tools``), to try the graphs offline.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "EngramInvalidNamespaceError",
    "EngramItem",
    "EngramSearchItem",
    "EngramStore",
    "ScriptedChatModel",
    "build_memory_graph",
    "calls_tools",
    "default_checkpointer",
    "tool_call",
]

_WHERE = {
    "EngramStore": ".store",
    "EngramItem": ".store",
    "EngramSearchItem": ".store",
    "EngramInvalidNamespaceError": "._filters",
    "build_memory_graph": ".graph",
    "default_checkpointer": ".checkpoint",
    "ScriptedChatModel": ".scripted",
    "calls_tools": ".scripted",
    "tool_call": ".scripted",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(_WHERE[name], __name__), name)
