"""Integrations with agent frameworks.

- ``engram.integrations.langgraph``: ``EngramStore`` (a LangGraph ``BaseStore``),
  ``build_memory_graph`` (recall → agent → extract → save) and checkpointer helpers.
- ``engram.integrations.deepagents``: ``EngramBackend`` (Deep Agents' backend
  protocol: memory as files), setup helpers, skills and memory-file middleware.

Each subpackage imports its framework lazily, so ``import engram`` never needs
LangGraph or Deep Agents installed (extras ``engram-agentmem[langgraph]``, ``engram-agentmem[deepagents]``).
"""
