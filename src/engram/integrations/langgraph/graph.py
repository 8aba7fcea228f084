"""The memory graph: recall → agent → extract → (review →) (save | end).

As in LangGraph's classic memory agent: the user id comes from the run config
(``configurable.user_id``, set by the application, never by the model); recalled
memories go into the system prompt grouped by kind (``Memory.context``); the model
sees only the last N messages of the thread; new turns go through engram's
extraction pipeline (``Memory.add``: trigger → extract → gate → reconcile → write).
Short-term memory (the thread) is a LangGraph checkpointer.

Governance: the recall id of the block is linked to the answer's message id once the
model has answered (``memory.audit.link_answer``: which memories the answer used). A fact an
approval rule holds (a PENDING event) makes the graph stop in ``review`` with
``interrupt()``; it continues on ``Command(resume=...)`` (approve / edit / reject, see
integrations/_approval.py), from any process that has the same checkpointer — the
thread waits for a person, not a blocking callback. ``approvals="queue"`` leaves such
changes to reviewers elsewhere (CLI, HTTP, MCP) and ends the turn.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.messages import AnyMessage, BaseMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

from ...errors import EngramError, InvalidValueError
from ...memory import Memory
from ...model import Message, Scope
from .. import _approval
from .checkpoint import default_checkpointer

log = logging.getLogger("engram.graph")

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant with long-term memory. Use what you remember about the user when it helps; "
    "do not mention memories that are not relevant."
)
WRITTEN = ("ADD", "UPDATE", "SUPERSEDE")


class MemoryGraphState(MessagesState, total=False):
    memory_context: str  # the recalled block for this turn
    recall_id: str | None  # its recall, linked to the answer (memory.audit.link_answer)
    extracted: int  # how many messages of the thread have gone through extraction
    pending: list[str]  # memories the last extraction wrote
    remembered: list[str]  # the same, once saved to the state
    awaiting: list[dict[str, Any]]  # changes an approval rule holds for a person (interrupt payload)
    reviewed: list[dict[str, Any]]  # what the person decided, per pending change
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
    approvals: Literal["interrupt", "queue"] = "interrupt",
    reviewer: str = "langgraph:reviewer",
) -> Any:
    """Compile the graph. ``checkpointer=None`` picks ``default_checkpointer(memory)``
    (SqliteSaver, or PostgresSaver on PostgreSQL); pass ``False`` for none.
    ``shared_namespaces`` adds scopes every user recalls from (e.g. ("orgs", "acme")).
    ``approvals``: "interrupt" waits for a person when an approval rule holds a fact
    (needs a checkpointer), "queue" leaves it to reviewers elsewhere; ``reviewer`` is
    who decides when the resume value does not say."""
    if approvals not in ("interrupt", "queue"):
        raise InvalidValueError(f"approvals must be 'interrupt' or 'queue', got {approvals!r}")
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
        return {"memory_context": block.text, "recall_id": block.recall_id, "remembered": []}

    def agent(state: MemoryGraphState, config: RunnableConfig) -> dict[str, Any]:
        system = system_prompt
        if state.get("memory_context"):
            system += "\n\n" + state["memory_context"]
        window = list(state["messages"])[-last_n:]
        reply = model.invoke([SystemMessage(system), *window], config)
        if not getattr(reply, "id", None):
            reply = reply.model_copy(update={"id": f"msg-{uuid.uuid4().hex}"})
        _link_answer(memory, user_scope(config), state.get("recall_id"), reply)
        return {"messages": [reply]}

    def extract(state: MemoryGraphState, config: RunnableConfig) -> dict[str, Any]:
        messages = list(state["messages"])
        turns, ids = _turns(messages[state.get("extracted", 0) :])
        if not turns:
            return {"extracted": len(messages), "pending": [], "extraction_error": None}
        scope = user_scope(config)
        result = memory.add(turns, scope, thread_id=_thread(config), message_ids=ids)
        written = [event.content for event in result.events if event.event in WRITTEN]
        held = [_approval.summary(memory.approvals.get(e.pending_id, scope))
               for e in result.events if e.event == "PENDING" and e.pending_id]
        return {"extracted": len(messages), "pending": written, "awaiting": held,
                "extraction_error": _failure(result, written)}

    def after_extract(state: MemoryGraphState) -> str:
        if state.get("awaiting") and approvals == "interrupt" and checkpointer is not False:
            return "review"
        return "save" if state.get("pending") else END

    def review(state: MemoryGraphState, config: RunnableConfig) -> dict[str, Any]:
        """Wait for a person (interrupt), then carry out what they decided."""
        awaiting = list(state.get("awaiting") or [])
        answer = interrupt(_approval.payload(awaiting))
        chosen = _approval.decisions(answer, [p["id"] for p in awaiting], reviewer)
        outcomes = _approval.apply(memory, Scope(tenant), chosen)
        written = [content for outcome in outcomes for content in outcome["written"]]
        return {"awaiting": [], "reviewed": outcomes, "pending": [*(state.get("pending") or []), *written]}

    def after_review(state: MemoryGraphState) -> str:
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
    builder.add_node("review", review)
    builder.add_node("save", save)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "agent")
    builder.add_edge("agent", "extract")
    builder.add_conditional_edges("extract", after_extract, {"review": "review", "save": "save", END: END})
    builder.add_conditional_edges("review", after_review, {"save": "save", END: END})
    builder.add_edge("save", END)
    if checkpointer is None:
        checkpointer = default_checkpointer(memory)
    return builder.compile(checkpointer=checkpointer or None, store=store)


def _link_answer(memory: Memory, scope: Scope, recall_id: str | None, reply: BaseMessage) -> None:
    """Which recalled memories the answer used; a failure here must not lose the answer."""
    if not recall_id:
        return
    try:
        memory.audit.link_answer(recall_id, scope, answer_id=str(reply.id), answer=_text(reply))
    except EngramError as exc:
        log.warning("could not link answer %s to recall %s: %s", reply.id, recall_id, exc)


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
