"""The memory graph (recall → agent → extract → save) with a scripted model."""

from __future__ import annotations

import types

import pytest

pytest.importorskip("langgraph.checkpoint.sqlite")

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from engram import FakeHashEmbedder, InvalidValueError, Memory, Scope
from engram.integrations.langgraph import build_memory_graph, default_checkpointer
from engram.integrations.langgraph.checkpoint import checkpoint_target, close_checkpointer
from engram.integrations.langgraph.scripted import ScriptedChatModel


def _add_is_available() -> str | None:
    probe = Memory.open(":memory:", embedder=FakeHashEmbedder())
    try:
        probe.add(["I live in Lisbon."], Scope("probe", ("users", "probe")))
    except ImportError as exc:  # the pipeline is being written in parallel
        return f"Memory.add is not usable yet ({exc})"
    finally:
        probe.close()
    return None


ADD_MISSING = _add_is_available()


def cfg(thread: str, user: str = "ana@example.com") -> dict:
    return {"configurable": {"thread_id": thread, "user_id": user}}


@pytest.fixture
def no_extraction(memory, monkeypatch):
    """For tests about recall and the prompt: extraction answers 'nothing new'."""
    calls = []
    monkeypatch.setattr(memory, "add", lambda *args, **kwargs: calls.append((args, kwargs)) or
                        types.SimpleNamespace(events=()))
    return calls


def test_recalls_memories_grouped_by_kind_and_sends_only_last_n(memory, no_extraction):
    scope = Scope("default", ("users", "ana@example.com"))
    memory.remember("Prefers short answers", scope, kind="preference")
    memory.remember("Lives in Lisbon", scope, kind="fact")
    memory.remember("Lives in Berlin", Scope("default", ("users", "bob")), kind="fact")
    model = ScriptedChatModel(script=[AIMessage(f"reply {i}") for i in range(4)])
    graph = build_memory_graph(model, memory, checkpointer=InMemorySaver(), last_n=3)
    graph.invoke({"messages": [("user", "Where do I live? Lisbon or Berlin?")]}, cfg("t1"))
    system = model.system_prompts()[0]
    assert "### Preferences\n- Prefers short answers" in system and "### Facts\n- Lives in Lisbon" in system
    assert "Berlin" not in system.split("## Relevant memories")[1]
    graph.invoke({"messages": [("user", "second")]}, cfg("t1"))
    graph.invoke({"messages": [("user", "third")]}, cfg("t1"))
    assert [m.type for m in model.prompts[2]] == ["system", "human", "ai", "human"]
    (turns, scope), options = no_extraction[-1]
    assert [t.content for t in turns] == ["third", "reply 2"]
    assert scope == Scope("default", ("users", "ana@example.com"))
    assert options["thread_id"] == "t1" and len(options["message_ids"]) == 2


def test_user_id_comes_from_the_run_config(memory):
    graph = build_memory_graph(ScriptedChatModel(script=[]), memory, checkpointer=InMemorySaver())
    with pytest.raises(InvalidValueError, match="user id"):
        graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "x"}})


@pytest.mark.skipif(ADD_MISSING is not None, reason=ADD_MISSING or "")
def test_recalls_a_fact_stated_in_an_earlier_thread(memory):
    model = ScriptedChatModel(script=[AIMessage("Noted, Lisbon it is."), AIMessage("You live in Lisbon.")])
    graph = build_memory_graph(model, memory, checkpointer=InMemorySaver())
    first = graph.invoke({"messages": [("user", "I live in Lisbon and I work as a nurse.")]}, cfg("t1"))
    assert first["extracted"] == 2
    assert any("Lisbon" in fact for fact in first["remembered"])
    second = graph.invoke({"messages": [("user", "Where do I live?")]}, cfg("t2"))
    assert "Lisbon" in model.system_prompts()[1] and len(second["messages"]) == 2
    other = build_memory_graph(ScriptedChatModel(script=[AIMessage("?")]), memory, checkpointer=InMemorySaver())
    assert "Lisbon" not in other.invoke({"messages": [("user", "Where do I live?")]}, cfg("t3", "bob"))[
        "memory_context"]


def test_default_checkpointer_is_sqlite_beside_the_database(tmp_path, monkeypatch):
    memory = Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder())
    monkeypatch.setattr(memory, "add", lambda *args, **kwargs: types.SimpleNamespace(events=()))
    saver = default_checkpointer(memory)
    try:
        assert type(saver).__name__ == "SqliteSaver" and (tmp_path / "m.threads.sqlite").exists()
        model = ScriptedChatModel(script=[AIMessage("one"), AIMessage("two")])
        build_memory_graph(model, memory, checkpointer=saver).invoke({"messages": [("user", "hello")]}, cfg("t"))
        again = build_memory_graph(model, memory, checkpointer=saver)
        state = again.invoke({"messages": [("user", "hello again")]}, cfg("t"))
        assert [m.content for m in state["messages"]] == ["hello", "one", "hello again", "two"]
    finally:
        close_checkpointer(saver)
        memory.close()


def test_postgres_engram_gets_postgres_threads():
    fake = types.SimpleNamespace(dialect="postgres", location="postgresql://u@h/db")
    assert checkpoint_target(fake) == "postgresql://u@h/db"
    sqlite = types.SimpleNamespace(dialect="sqlite", location="/x/mem.db")
    assert checkpoint_target(sqlite) == "/x/mem.threads.sqlite"


def test_the_graph_keeps_the_conversation_as_a_searchable_thread(memory):
    model = ScriptedChatModel(script=[AIMessage("Clear the DNS cache with ipconfig /flushdns"), AIMessage("Great.")])
    graph = build_memory_graph(model, memory, checkpointer=InMemorySaver())
    graph.invoke({"messages": [("user", "Websites stopped resolving on my laptop")]}, cfg("dns"))
    graph.invoke({"messages": [("user", "Flushing DNS worked")]}, cfg("dns"))
    ana = Scope("default", ("users", "ana@example.com"))
    assert [t.content for t in memory.threads.turns("dns", ana)] == [
         "Websites stopped resolving on my laptop", "Clear the DNS cache with ipconfig /flushdns",
         "Flushing DNS worked", "Great."]
    found = memory.threads.search("DNS resolving", ana)
    assert found[0].thread_id == "dns"
    assert memory.threads.search("DNS resolving", Scope("default", ("users", "bob"))) == []
