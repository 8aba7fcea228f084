"""The memory graph: recall → agent → extract → (save | end).

As in LangGraph's classic memory agent: the user id comes from the run config
(``configurable.user_id``, set by the application, never by the model); recalled
memories go into the system prompt grouped by kind (``Memory.context``); the model
sees only the last N messages of the thread; new turns go through engram's
extraction pipeline (``Memory.add``: trigger → extract → gate → reconcile → write).
Short-term memory (the thread) is a LangGraph checkpointer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AnyMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph

from ...errors import InvalidValueError
from ...memory import Memory
from ...model import Message, Scope
from .checkpoint import default_checkpointer

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant with long-term memory. Use what you remember about the user when it helps; "
    "do not mention memories that are not relevant."
)
WRITTEN = ("ADD", "UPDATE", "SUPERSEDE")


class MemoryGraphState(MessagesState, total=False):
    memory_context: str  # the recalled block for this turn
    extracted: int  # how many messages of the thread have gone through extraction
    pending: list[str]  # memories the last extraction wrote
    remembered: list[str]  # the same, once saved to the state
    extraction_error: str | None  # why the last extraction failed (nothing was stored), else None


def build_memory_graph(
    model: Any,
    memory: Memory,
    *,
    checkpointer: Any = None,
    tenant: str = "default",
    namespace: Callable[[str], Sequence[str]] = lambda user: ("users", user),
    shared_namespaces: Sequence[Sequence[str]] = (),
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    last_n: int = 20,
    budget_tokens: int = 800,
    actor: str = "agent",
    store: Any = None,
) -> Any:
    """Compile the graph. ``checkpointer=None`` picks ``default_checkpointer(memory)``
    (SqliteSaver, or PostgresSaver on PostgreSQL); pass ``False`` for none.
    ``shared_namespaces`` adds scopes every user recalls from (e.g. ("orgs", "acme"))."""
    if isinstance(last_n, bool) or not isinstance(last_n, int) or last_n <= 0:
        raise InvalidValueError(f"last_n must be a positive integer, got {last_n!r}")
    shared = [Scope(tenant, tuple(ns)) for ns in shared_namespaces]

    def user_scope(config: RunnableConfig) -> Scope:
        return Scope(tenant, tuple(namespace(user_id_from_config(config))))

    def recall(state: MemoryGraphState, config: RunnableConfig) -> dict[str, Any]:
        scope = user_scope(config)
        query = _last_user_text(state["messages"])
        if not query:
            return {"memory_context": "", "remembered": []}
        block = memory.context(query, [scope, *shared], budget_tokens=budget_tokens, thread_id=_thread(config),
                               actor=actor)
        return {"memory_context": block.text, "remembered": []}

    def agent(state: MemoryGraphState, config: RunnableConfig) -> dict[str, Any]:
        system = system_prompt
        if state.get("memory_context"):
            system += "\n\n" + state["memory_context"]
        window = list(state["messages"])[-last_n:]
        reply = model.invoke([SystemMessage(system), *window], config)
        return {"messages": [reply]}

    def extract(state: MemoryGraphState, config: RunnableConfig) -> dict[str, Any]:
        messages = list(state["messages"])
        turns, ids = _turns(messages[state.get("extracted", 0) :])
        if not turns:
            return {"extracted": len(messages), "pending": [], "extraction_error": None}
        result = memory.add(turns, user_scope(config), thread_id=_thread(config), message_ids=ids)
        written = [event.content for event in result.events if event.event in WRITTEN]
        return {"extracted": len(messages), "pending": written, "extraction_error": _failure(result, written)}

    def after_extract(state: MemoryGraphState) -> str:
        return "save" if state.get("pending") else END

    def save(state: MemoryGraphState) -> dict[str, Any]:
        """Publish what was remembered (state, and the custom stream for UIs)."""
        saved = list(state.get("pending") or [])
        try:
            from langgraph.config import get_stream_writer

            get_stream_writer()({"remembered": saved})
        except (ImportError, RuntimeError):
            pass
        return {"remembered": saved, "pending": []}

    builder = StateGraph(MemoryGraphState)
    builder.add_node("recall", recall)
    builder.add_node("agent", agent)
    builder.add_node("extract", extract)
    builder.add_node("save", save)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "agent")
    builder.add_edge("agent", "extract")
    builder.add_conditional_edges("extract", after_extract, {"save": "save", END: END})
    builder.add_edge("save", END)
    if checkpointer is None:
        checkpointer = default_checkpointer(memory)
    return builder.compile(checkpointer=checkpointer or None, store=store)


FAILED = ("extraction failed", "invalid item from the model")


def _failure(result: Any, written: Sequence[str]) -> str | None:
    """Why extraction stored nothing, when the extractor failed or every item it gave
    was unusable (a schema mismatch); None when it worked (or found nothing to keep)."""
    error = getattr(result, "error", None)
    if error or written:
        return error
    reasons = [e.reason for e in getattr(result, "events", ()) if e.event == "SKIPPED" and e.reason.startswith(FAILED)]
    return "; ".join(reasons) or None


def user_id_from_config(config: RunnableConfig) -> str:
    user = (config.get("configurable") or {}).get("user_id")
    if not isinstance(user, str) or not user.strip():
        raise InvalidValueError(
            "the memory graph needs the user id in the run config: "
            "graph.invoke(..., config={'configurable': {'user_id': ..., 'thread_id': ...}})"
        )
    return user


def _thread(config: RunnableConfig) -> str | None:
    thread = (config.get("configurable") or {}).get("thread_id")
    return str(thread) if thread is not None else None


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
    return "\n".join(p for p in parts if p)


def _last_user_text(messages: Sequence[AnyMessage]) -> str:
    for message in reversed(messages):
        if message.type == "human":
            return _text(message).strip()
    return ""


def _turns(messages: Sequence[AnyMessage]) -> tuple[list[Message], list[str] | None]:
    roles = {"human": "user", "ai": "assistant"}
    turns = [
        Message(roles[m.type], _text(m), m.id) for m in messages if m.type in roles and _text(m).strip()
    ]
    ids = [t.id for t in turns if t.id]
    return turns, (ids if len(ids) == len(turns) else None)
