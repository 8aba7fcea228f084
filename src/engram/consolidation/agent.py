"""The LLM variant of a consolidation run's extraction step: a LangGraph agent (model
→ tools → model …) with tools to read the run's conversations and to search and
change memory, as in the seed design.

The agent never writes: each change it asks for is built as a ``Change`` and admitted
by the write core at once (PII policy, policy hooks; a refusal is the tool's answer),
then collected; the run commits all of them with the watermark in ONE transaction,
exactly as the offline (rule extractor) step does. The turns it reads are the run's
(after the scope's watermark, within the token budget), fixed before it starts; the
scope is the run's, never an argument.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..changes import Change
from ..core import Admitted, WriteCore, superseding
from ..errors import EngramError, InvalidValueError
from ..llm.base import TokenUsage
from ..model import Kind, MemoryRecord, Operation, Scope, Source, Status
from ..search.retrieve import RetrievalSettings, retrieve
from ..store.base import RecordFilter
from ..values.episodes import Turn
from ..writes import MemoryDraft, build_record, retire, revise

MAX_STEPS = 24
SYSTEM = (
    "You consolidate long-term memory between conversations. Call read_conversations to read the new turns. "
    "For each durable fact, preference, rule or to-do about the user: search_memory first; if nothing says it, "
    "save_memory; if a memory says it differently and the new turn corrects it, supersede_memory (the old one "
    "stays in history); if a memory only needs more detail, update_memory; forget_memory only when the user "
    "asked to forget. Cite the turn numbers each change comes from. Ignore small talk. Stop when done."
)
KindName = Literal["fact", "preference", "rule", "conclusion", "todo"]


@dataclass
class AgentPlan:
    admitted: list[Admitted] = field(default_factory=list)
    diff: list[tuple[str, str, str | None, str | None, str]] = field(default_factory=list)  # op, content, id, target
    touched: set[str] = field(default_factory=set)
    usage: TokenUsage = field(default_factory=TokenUsage)


class ConsolidationAgent:
    """One scope's agent step over ``turns``; ``run()`` returns the admitted changes."""

    def __init__(self, core: WriteCore, scope: Scope, chat_model: Any, turns: Sequence[Turn], actor: str) -> None:
        self.core, self.scope, self.model, self.turns, self.actor = core, scope, chat_model, list(turns), actor
        self.by_seq = {t.seq: t for t in turns}
        self.plan = AgentPlan()

    def run(self) -> AgentPlan:
        from langchain_core.messages import HumanMessage, SystemMessage

        graph = self._graph()
        state = graph.invoke({"messages": [SystemMessage(SYSTEM), HumanMessage(
            f"{len(self.turns)} new turns in scope {'/'.join(self.scope.namespace) or '(root)'}.")]},
            {"recursion_limit": 2 * MAX_STEPS + 1})
        for message in state["messages"]:
            usage = getattr(message, "usage_metadata", None) or {}
            self.plan.usage = self.plan.usage + TokenUsage(int(usage.get("input_tokens", 0)),
                                                           int(usage.get("output_tokens", 0)))
        return self.plan

    def _graph(self) -> Any:
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph.prebuilt import ToolNode, tools_condition

        tools = self._tools()
        model = self.model.bind_tools(tools)

        def agent(state: MessagesState) -> dict[str, Any]:
            return {"messages": [model.invoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("agent", agent)
        graph.add_node("tools", ToolNode(tools, handle_tool_errors=True))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
        graph.add_edge("tools", "agent")
        return graph.compile()

    # -- tools ----------------------------------------------------------------------------

    def _tools(self) -> list[Any]:
        from langchain_core.tools import StructuredTool

        def read_conversations() -> str:
            """The new conversation turns of this run, oldest first: turn number, thread, time, role, text."""
            return json.dumps([{"turn": t.seq, "thread": t.thread_id, "at": t.at.isoformat(), "role": t.role,
                                "text": t.content} for t in self.turns], ensure_ascii=False)

        def search_memory(query: str, k: int = 5) -> str:
            """Memories about the user that match the query (id, kind, content), best first."""
            found = self._search(query, k)
            return json.dumps([{"id": r.id, "kind": r.kind.value, "content": r.content} for r in found],
                              ensure_ascii=False)

        def save_memory(content: str, turns: list[int], kind: KindName = "fact") -> str:
            """Save a new memory stated in the given turns."""
            return self._guard(lambda: self._save(content, kind, turns))

        def update_memory(id: str, content: str, turns: list[int], reason: str = "") -> str:
            """Rewrite a memory with more detail (a new version of it)."""
            return self._guard(lambda: self._update(id, content, turns, reason))

        def supersede_memory(id: str, content: str, turns: list[int], reason: str = "") -> str:
            """Replace a memory that is no longer true by a new one (the old one stays in history)."""
            return self._guard(lambda: self._supersede(id, content, turns, reason))

        def forget_memory(id: str, reason: str) -> str:
            """Forget a memory the user asked to forget."""
            return self._guard(lambda: self._forget(id, reason))

        return [StructuredTool.from_function(f) for f in (read_conversations, search_memory, save_memory,
                                                          update_memory, supersede_memory, forget_memory)]

    def _guard(self, action: Any) -> str:
        try:
            return str(action())
        except EngramError as exc:  # the model reads why and may correct itself
            return f"refused: {type(exc).__name__}: {exc}"

    def _search(self, query: str, k: int) -> list[MemoryRecord]:
        now = self.core.clock.now()
        where = RecordFilter(namespace=self.scope.namespace, statuses=(Status.ACTIVE,), valid_at=now)
        hits = retrieve(self.core.reads.store, self.core.embedder, self.scope.tenant, where, query,
                        k=max(1, min(k, 20)), settings=RetrievalSettings(), now=now)
        return [h.record for h in hits]

    def _sources(self, turns: Sequence[int]) -> list[str]:
        unknown = [t for t in turns if t not in self.by_seq]
        if unknown or not turns:
            raise InvalidValueError(f"cite turns of this run (read_conversations); unknown: {unknown or 'none given'}")
        return [self.by_seq[t].message_id or f"turn:{t}" for t in turns]

    def _target(self, record_id: str) -> MemoryRecord:
        if record_id in self.plan.touched:
            raise InvalidValueError(f"memory {record_id} was already changed in this run")
        found = self.core.reads.store.get(self.scope.tenant, [record_id])
        if not found or found[0].scope != self.scope or found[0].status is not Status.ACTIVE:
            raise InvalidValueError(f"no active memory {record_id} in this scope (use search_memory)")
        return found[0]

    def _admit(self, changes: list[Change], op: str, content: str, target: str | None, reason: str) -> str:
        admitted = [self.core.admit(change) for change in changes]
        if any(a.approval is not None for a in admitted):
            raise InvalidValueError("an approval rule holds this change; the consolidator leaves it to a person")
        self.plan.admitted += admitted
        record = admitted[0].record
        assert record is not None
        self.plan.touched.update({record.id, *(c.previous.id for c in changes if c.previous is not None)})
        self.plan.diff.append((op, record.content, record.id, target, reason))
        return f"{op}: {record.id}"

    def _detail(self, sources: list[str]) -> dict[str, Any]:
        return {"source_message_ids": sources, "extractor": f"agent:{getattr(self.model, 'model_name', None) or 'llm'}"}

    def _save(self, content: str, kind: str, turns: list[int]) -> str:
        sources, now = self._sources(turns), self.core.clock.now()
        draft = MemoryDraft(content, Kind(kind), metadata={"source_message_ids": sources, "extractor": "agent"},
                            source=Source(actor=self.actor, thread_id=self.by_seq[turns[0]].thread_id,
                                          message_id=sources[0]))
        record = build_record(draft, self.scope, now, self.core.limits, self.core.embedder.name)
        return self._admit([Change(Operation.CREATE, record, None, self.actor, "consolidation agent: new",
                                   self._detail(sources))], "add", content, None, "new")

    def _update(self, record_id: str, content: str, turns: list[int], reason: str) -> str:
        sources, old = self._sources(turns), self._target(record_id)
        new = revise(old, {"content": content}, self.core.clock.now(), self.core.limits)
        return self._admit([Change(Operation.UPDATE, new, old, self.actor, reason or "consolidation agent: update",
                                   self._detail(sources))], "update", content, old.id, reason)

    def _supersede(self, record_id: str, content: str, turns: list[int], reason: str) -> str:
        sources, old, now = self._sources(turns), self._target(record_id), self.core.clock.now()
        draft = MemoryDraft(content, old.kind, importance=old.importance, category=old.category, tags=old.tags,
                            metadata={"source_message_ids": sources, "extractor": "agent"},
                            source=Source(actor=self.actor, thread_id=self.by_seq[turns[0]].thread_id,
                                          message_id=sources[0]))
        record = build_record(draft, old.scope, now, self.core.limits, self.core.embedder.name)
        changes = superseding(old, record, actor=self.actor, reason=reason or "consolidation agent: superseded",
                              at=now, detail=self._detail(sources))
        return self._admit(changes, "supersede", content, old.id, reason)

    def _forget(self, record_id: str, reason: str) -> str:
        old = self._target(record_id)
        new = retire(old, Status.DELETED, self.core.clock.now())
        return self._admit([Change(Operation.FORGET, new, old, self.actor, reason or "consolidation agent: forget")],
                           "forget", old.content, old.id, reason)
