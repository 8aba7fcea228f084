"""manage_memory and search_memory driven by real agents (LangGraph's prebuilt ReAct
agent, Deep Agents, LangMem's tools for comparison) with a scripted tool-calling model:
the scope always comes from the run, never from the model."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("langgraph.prebuilt")

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.prebuilt import create_react_agent

from engram import Scope
from engram.integrations.langchain import (
    create_manage_memory_tool,
    create_search_memory_tool,
    memory_tools,
    scope_from_run,
)
from engram.integrations.langgraph.scripted import ScriptedChatModel
from engram.integrations.langgraph.scripted import calls_tools as tools
from engram.integrations.langgraph.scripted import tool_call as call

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
ANA = Scope("acme", ("users", "ana"))
BOB = Scope("acme", ("users", "bob"))


def run_config(user: str | None = "ana", thread: str = "t1") -> dict:
    configurable = {"thread_id": thread}
    if user:
        configurable["user_id"] = user
    return {"configurable": configurable}


def tool_results(state) -> list[dict | str]:
    out = []
    for message in state["messages"]:
        if isinstance(message, ToolMessage):
            try:
                out.append(json.loads(message.content))
            except (TypeError, ValueError):
                out.append(message.content)
    return out


def test_the_tools_offer_no_scope_argument(memory):
    for tool in memory_tools(memory, tenant="acme"):
        assert not {"tenant", "user", "user_id", "namespace", "scope", "config"} & set(tool.args), tool.name
        assert tool.description
    assert [t.name for t in memory_tools(memory)] == ["manage_memory", "search_memory", "search_past_conversations"]


def test_a_react_agent_creates_searches_updates_and_deletes_in_the_users_scope(memory):
    memory.remember("Lives in Berlin", BOB)
    model = ScriptedChatModel(script=[
        tools(call("manage_memory", action="create", content="Prefers green tea", kind="preference",
                   user_id="bob", namespace=["users", "bob"])),  # scope arguments a model invents are dropped
        tools(call("search_memory", query="what does she drink?")),
        lambda messages: tools(call("manage_memory", action="update", id=_last_id(messages),
                                    content="Prefers jasmine tea", reason="she said so")),
        tools(call("search_memory", query="Berlin")),
        lambda messages: tools(call("manage_memory", action="delete", id=_last_id(messages, 2))),
        AIMessage("Done."),
    ])
    agent = create_react_agent(model, memory_tools(memory, tenant="acme"))
    state = agent.invoke({"messages": [("user", "I like green tea")]}, run_config("ana"))
    created, found, updated, berlin, deleted = tool_results(state)
    assert created["memory"]["content"] == "Prefers green tea" and created["memory"]["kind"] == "preference"
    record = memory.get(created["memory"]["id"], ANA)  # in ana's scope, not bob's
    assert record.source.thread_id == "t1" and record.source.actor == "agent"
    assert [m["id"] for m in found["memories"]] == [record.id] and found["memories"][0]["score"] > 0
    assert updated["memory"]["version"] == 2 and memory.get(record.id, ANA).content == "Prefers jasmine tea"
    bobs = memory.list(BOB).items[0]
    assert bobs.id not in {m["id"] for m in berlin["memories"]}  # bob's memory is out of reach
    assert deleted["memory"]["status"] == "deleted"
    assert [v.reason for v in memory.history(record.id, ANA)] == [None, "she said so", None]


def _last_id(messages, back: int = 1) -> str:
    results = [json.loads(m.content) for m in messages if isinstance(m, ToolMessage)]
    found = results[-back]
    return found["memories"][0]["id"] if "memories" in found else found["memory"]["id"]


def test_an_id_from_another_user_is_not_found_and_errors_reach_the_model(memory):
    bobs = memory.remember("Bob's secret plan", BOB)
    model = ScriptedChatModel(script=[
        tools(call("manage_memory", action="delete", id=bobs.id)),
        tools(call("manage_memory", action="create")),
        AIMessage("Sorry."),
    ])
    state = create_react_agent(model, memory_tools(memory, tenant="acme")).invoke(
        {"messages": [("user", "forget bob")]}, run_config("ana"))
    not_found, missing = tool_results(state)
    assert "NotFoundError" in not_found and "create needs content" in missing
    assert memory.get(bobs.id, BOB).status.value == "active"


def test_without_a_user_in_the_run_nothing_is_read_or_written(memory):
    model = ScriptedChatModel(script=[tools(call("manage_memory", content="x")), AIMessage("ok")])
    state = create_react_agent(model, memory_tools(memory)).invoke({"messages": [("user", "hi")]},
                                                                   run_config(user=None))
    assert "no user_id in the run" in tool_results(state)[0]
    assert memory.stats().records == 0


def test_the_run_context_and_custom_templates(memory):
    org_tools = [create_manage_memory_tool(memory, tenant="acme", namespace=("orgs", "{org_id}", "users", "{user_id}")),
                 create_search_memory_tool(memory, tenant="acme", namespace=("orgs", "{org_id}"),
                                           include_descendants=True)]
    model = ScriptedChatModel(script=[tools(call("manage_memory", content="Uses the blue template")),
                                      tools(call("search_memory", query="template")), AIMessage("ok")])
    agent = create_react_agent(model, org_tools)
    state = agent.invoke({"messages": [("user", "remember")]}, {"configurable": {"org_id": "core"}},
                         context={"user_id": "carol"})
    created, found = tool_results(state)
    assert memory.get(created["memory"]["id"], Scope("acme", ("orgs", "core", "users", "carol")))
    assert [m["id"] for m in found["memories"]] == [created["memory"]["id"]]
    assert scope_from_run("acme", ("users", "{user_id}"), {"configurable": {"user_id": "dan"}}) == \
        Scope("acme", ("users", "dan"))


def test_the_async_tools(memory):
    manage, search, _past = memory_tools(memory, tenant="acme")

    async def main():
        created = await manage.ainvoke({"content": "Likes jazz"}, run_config("ana"))
        return created, await search.ainvoke({"query": "jazz"}, run_config("ana"))

    created, found = asyncio.run(main())
    assert found["memories"][0]["id"] == created["memory"]["id"]


def test_a_deep_agent_uses_the_tools_with_the_user_from_its_context(memory):
    deepagents = pytest.importorskip("deepagents")
    from langgraph.checkpoint.memory import InMemorySaver

    model = ScriptedChatModel(script=[tools(call("manage_memory", content="Allergic to peanuts")),
                                      tools(call("search_memory", query="allergies")), AIMessage("Noted.")])
    agent = deepagents.create_deep_agent(model=model, tools=memory_tools(memory, tenant="acme"),
                                         checkpointer=InMemorySaver())
    state = agent.invoke({"messages": [("user", "I am allergic to peanuts")]}, {"configurable": {"thread_id": "d"}},
                         context={"user_id": "ana"})
    created, found = [r for r in tool_results(state) if isinstance(r, dict)]
    assert memory.get(created["memory"]["id"], ANA).content == "Allergic to peanuts"
    assert found["memories"][0]["id"] == created["memory"]["id"]


def test_langmems_own_tools_already_work_on_engram_store(memory):
    langmem = pytest.importorskip("langmem")
    from engram.integrations.langgraph import EngramStore

    store = EngramStore(memory, tenant="acme")
    lm_tools = [langmem.create_manage_memory_tool(namespace=("memories", "{langgraph_user_id}")),
                langmem.create_search_memory_tool(namespace=("memories", "{langgraph_user_id}"))]
    model = ScriptedChatModel(script=[tools(call("manage_memory", content="Prefers window seats", action="create")),
                                      tools(call("search_memory", query="seats")), AIMessage("ok")])
    agent = create_react_agent(model, lm_tools, store=store)
    state = agent.invoke({"messages": [("user", "I like window seats")]},
                         {"configurable": {"langgraph_user_id": "ana"}})
    assert "Prefers window seats" in str(tool_results(state)[1])
    hits = memory.search("window seats", Scope("acme", ("memories", "ana")))
    assert hits and hits[0].record.content == "Prefers window seats"  # the text, not {"content": …} JSON


def test_langchains_create_agent_with_the_user_in_its_context(memory):
    agents = pytest.importorskip("langchain.agents")
    model = ScriptedChatModel(script=[tools(call("manage_memory", content="Works night shifts")),
                                      tools(call("search_memory", query="shifts")), AIMessage("ok")])
    agent = agents.create_agent(model, tools=memory_tools(memory, tenant="acme"))
    state = agent.invoke({"messages": [("user", "I work nights")]}, context={"user_id": "ana"})
    created, found = tool_results(state)
    assert memory.get(created["memory"]["id"], ANA).content == "Works night shifts"
    assert found["memories"][0]["id"] == created["memory"]["id"]


def test_an_agent_searches_only_its_users_past_conversations(memory):
    memory.add([{"role": "user", "content": "My laptop fan is loud after the BIOS update"},
                {"role": "assistant", "content": "Roll the BIOS back to version 1.2"}], ANA, thread_id="fan")
    memory.add([{"role": "user", "content": "The BIOS update bricked my board"}], BOB, thread_id="bob-bios")
    model = ScriptedChatModel(script=[
        tools(call("search_past_conversations", query="BIOS update", user_id="bob", namespace=["users", "bob"])),
        AIMessage("Last time we rolled the BIOS back."),
    ])
    state = create_react_agent(model, memory_tools(memory, tenant="acme")).invoke(
        {"messages": [("user", "what did we do about the fan?")]}, run_config("ana"))
    (found,) = tool_results(state)
    assert [c["thread_id"] for c in found["conversations"]] == ["fan"]  # bob's thread is out of reach
    assert [t["content"] for t in found["conversations"][0]["turns"]][1] == "Roll the BIOS back to version 1.2"
    refused = memory_tools(memory, tenant="acme")[2].invoke({"query": "BIOS"}, {"configurable": {}})
    assert "no user_id in the run" in refused  # no user in the run: nothing is searched
