"""With a chat model, consolidation's extraction step is a LangGraph agent with tools
(read the run's conversations, search memory, save / update / supersede / forget);
its changes go through the write core and are committed with the watermark."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage, ToolMessage

from engram import Scope
from engram.integrations.langgraph.scripted import ScriptedChatModel
from engram.integrations.langgraph.scripted import calls_tools as tools
from engram.integrations.langgraph.scripted import tool_call as call

ALICE = Scope.for_user("acme", "alice")


def _found_id(messages) -> str:
    results = [json.loads(m.content) for m in messages if isinstance(m, ToolMessage) and m.name == "search_memory"]
    return results[-1][0]["id"]


def test_the_agent_reads_searches_supersedes_and_saves_through_the_write_core(memory, clock):
    berlin = memory.remember("Lives in Berlin", ALICE)
    memory.threads.record(["I moved to Lisbon last week", "Also, I prefer window seats"], ALICE, thread_id="t")
    model = ScriptedChatModel(script=[
        tools(call("read_conversations")),
        tools(call("search_memory", query="where does the user live")),
        lambda messages: tools(call("supersede_memory", id=_found_id(messages), content="Lives in Lisbon",
                                    turns=[1], reason="moved")),
        tools(call("save_memory", content="Prefers window seats", kind="preference", turns=[2]),
              call("save_memory", content="Invented", turns=[99])),
        AIMessage("Done."),
    ])
    report = memory.consolidation.run(agent=model)
    scope = report.scopes[0]
    assert (scope.status, scope.turns, scope.upto_seq) == ("done", 2, 2)
    assert sorted(d.operation for d in scope.diff) == ["add", "supersede"]
    read = next(m for m in model.prompts[1] if isinstance(m, ToolMessage))
    assert [t["text"] for t in json.loads(read.content)] == ["I moved to Lisbon last week", "Also, I prefer window seats"]
    refused = [m.content for m in model.prompts[-1] if isinstance(m, ToolMessage) and "refused" in m.content]
    assert refused and "unknown: [99]" in refused[0]
    assert memory.get(berlin.id, ALICE).status.value == "superseded"
    active = sorted(r.content for r in memory.list(ALICE).items)
    assert active == ["Lives in Lisbon", "Prefers window seats"]
    created = [e for e in memory.audit.list(ALICE, operation="create") if e.actor == "consolidator"]
    assert sorted(tuple(e.detail["source_message_ids"]) for e in created) == [("turn:1",), ("turn:2",)]
    assert memory._store.watermark("acme", ALICE.namespace) == 2
    assert memory.consolidation.run(agent=ScriptedChatModel(script=[])).scopes[0].status == "nothing"
