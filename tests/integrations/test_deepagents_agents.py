"""Real Deep Agents (create_deep_agent) over engram, driven by a scripted chat model
that emits tool calls: the documented memory setups, end to end."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("deepagents")

from deepagents import create_deep_agent
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from engram.integrations.deepagents import (
    EngramMemoryMiddleware,
    memory_backend,
    memory_routes,
    seed_files,
    seed_skill,
)
from engram.integrations.langgraph.scripted import ScriptedChatModel
from engram.integrations.langgraph.scripted import calls_tools as tools
from engram.integrations.langgraph.scripted import tool_call as call


def config(thread: str, user: str) -> dict:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def tool_results(state) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


def agent_for(backend, script, **kwargs):
    model = ScriptedChatModel(script=script)
    return create_deep_agent(model=model, backend=backend, checkpointer=InMemorySaver(), **kwargs), model


def test_thread_one_writes_thread_two_reads(memory):
    backend = memory_backend(memory, assistant_id="helper")
    agent, _ = agent_for(backend, [
        tools(call("write_file", file_path="/memories/prefs.md", content="Prefers green tea.\n")),
        AIMessage("Saved."),
        tools(call("read_file", file_path="/memories/prefs.md")),
        AIMessage("You prefer green tea."),
    ])
    agent.invoke({"messages": [("user", "I prefer green tea")]}, config("t1", "ana@example.com"))
    state = agent.invoke({"messages": [("user", "What do I drink?")]}, config("t2", "ana@example.com"))
    assert "Prefers green tea." in tool_results(state)[-1].content
    created = memory.audit.list(_user_scope(memory, "ana@example.com"), operation="create")
    assert [e.actor for e in created] == ["agent:helper"]


def _user_scope(memory, user):
    from engram import Scope

    return Scope("default", ("users", user, "files"))


def test_user_a_never_sees_user_b_files(memory):
    backend = memory_backend(memory, assistant_id="helper")
    writer, _ = agent_for(backend, [
        tools(call("write_file", file_path="/memories/secret.md", content="B's diary")),
        AIMessage("ok"),
    ])
    writer.invoke({"messages": [("user", "note this")]}, config("b1", "bob"))
    reader, _ = agent_for(backend, [
        tools(call("read_file", file_path="/memories/secret.md"), call("ls", path="/memories/"),
              call("grep", pattern="diary"), call("glob", pattern="**/*.md")),
        AIMessage("nothing"),
    ])
    state = reader.invoke({"messages": [("user", "read bob's notes")]}, config("a1", "alice"))
    results = tool_results(state)
    assert "not found" in results[0].content
    assert [r.content for r in results[1:]] == ["No files found", "No matches found", "No files found"]


def test_missing_user_identity_is_an_error_for_the_model(memory):
    backend = memory_backend(memory, assistant_id="helper")
    agent, _ = agent_for(backend, [
        tools(call("write_file", file_path="/memories/x.md", content="x")),
        AIMessage("ok"),
    ])
    state = agent.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "anon"}})
    assert "no user identity" in tool_results(state)[0].content


def test_user_identity_from_the_run_context(memory):
    backend = memory_backend(memory, assistant_id="helper")
    agent, _ = agent_for(backend, [
        tools(call("write_file", file_path="/memories/ctx.md", content="from context")),
        AIMessage("ok"),
    ])
    agent.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "c"}}, context={"user_id": "carol"})
    assert backend.routes["/memories/"].memory.list(_user_scope(memory, "carol")).items[0].content == "from context"


def test_writes_to_policies_are_refused(memory):
    backend = memory_backend(memory, assistant_id="helper", org_id="acme")
    seed_files(backend.routes["/policies/"], {"/conduct.md": "Never share customer data.\n"})
    agent, _ = agent_for(backend, [
        tools(call("read_file", file_path="/policies/conduct.md")),
        tools(call("edit_file", file_path="/policies/conduct.md", old_string="Never", new_string="Always")),
        tools(call("write_file", file_path="/policies/new.md", content="my rules")),
        AIMessage("I cannot change policies."),
    ])
    state = agent.invoke({"messages": [("user", "relax the policy")]}, config("p1", "ana"))
    results = tool_results(state)
    assert "Never share customer data." in results[0].content
    assert "permission denied" in results[1].content and "permission denied" in results[2].content
    assert backend.routes["/policies/"].files() == {"/conduct.md": "Never share customer data.\n"}


def test_two_concurrent_edits_of_one_file_lose_nothing(memory):
    routes = memory_routes(memory, assistant_id="team", user_scoped=False)
    backend = memory_backend(memory, assistant_id="team", user_scoped=False)
    seed_files(routes["/memories/"], {"/plan.md": "A: todo\nB: todo\n"})
    both_read = threading.Barrier(2, timeout=30)

    def script(letter: str) -> list:
        def edit_after_both_read(messages):
            both_read.wait()
            return tools(call("edit_file", file_path="/memories/plan.md", old_string=f"{letter}: todo",
                              new_string=f"{letter}: done"))

        def retry_if_refused(messages):
            if messages[-1].status == "error":
                return tools(call("read_file", file_path="/memories/plan.md"))
            return AIMessage("done")

        return [
            tools(call("read_file", file_path="/memories/plan.md")),
            edit_after_both_read,
            retry_if_refused,
            tools(call("edit_file", file_path="/memories/plan.md", old_string=f"{letter}: todo",
                       new_string=f"{letter}: done")),
            AIMessage("done after retry"),
        ]

    agents = {letter: agent_for(backend, script(letter))[0] for letter in "AB"}
    states: dict[str, dict] = {}

    def run(letter: str) -> None:
        states[letter] = agents[letter].invoke({"messages": [("user", "mark yours done")]}, config(letter, "x"))

    threads = [threading.Thread(target=run, args=(letter,)) for letter in "AB"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert routes["/memories/"].read_text("/plan.md") == "A: done\nB: done\n"
    refused = [r.content for s in states.values() for r in tool_results(s) if r.status == "error"]
    assert len(refused) == 1 and "changed by another writer" in refused[0]


def test_edit_is_visible_on_the_next_turn(memory):
    backend = memory_backend(memory, assistant_id="helper", user_scoped=False)
    seed_files(backend.routes["/memories/"], {"/AGENTS.md": "# Notes\n- The user is called Ana.\n"})
    middleware = EngramMemoryMiddleware(backend=backend, sources=["/memories/AGENTS.md"])
    agent, model = agent_for(backend, [
        tools(call("edit_file", file_path="/memories/AGENTS.md", old_string="- The user is called Ana.\n",
                   new_string="- The user is called Ana.\n- Ana prefers short answers.\n")),
        AIMessage("Noted."),
        AIMessage("Short answer."),
        AIMessage("Hello."),
    ], middleware=[middleware])
    agent.invoke({"messages": [("user", "keep answers short")]}, config("t", "ana"))
    assert "prefers short answers" not in model.system_prompts()[0]
    agent.invoke({"messages": [("user", "and now?")]}, config("t", "ana"))
    assert "Ana prefers short answers." in model.system_prompts()[2]
    seed_files(backend.routes["/memories/"], {"/AGENTS.md": "# Notes\n- Ana moved to Porto.\n"})
    agent.invoke({"messages": [("user", "news?")]}, config("t", "ana"))
    assert "Ana moved to Porto." in model.system_prompts()[3]


def test_skills_load_progressively(memory):
    backend = memory_backend(memory, assistant_id="helper")
    seed_skill(backend.routes["/skills/"], "web-research", "Research a topic on the web and cite sources.",
               "# Web research\n1. Search.\n2. Read.\n3. Cite. SECRET-STEP-42")
    agent, model = agent_for(backend, [
        tools(call("read_file", file_path="/skills/web-research/SKILL.md")),
        AIMessage("Following the skill."),
    ], skills=["/skills/"])
    state = agent.invoke({"messages": [("user", "research tea")]}, config("s", "ana"))
    first = model.system_prompts()[0]
    assert "web-research" in first and "Research a topic on the web and cite sources." in first
    assert "SECRET-STEP-42" not in first
    assert "SECRET-STEP-42" in tool_results(state)[0].content


def test_conversations_are_kept_as_threads_of_the_runtime_user(memory):
    from engram import Scope
    from engram.integrations.deepagents import ConversationMiddleware

    backend = memory_backend(memory, assistant_id="helper")
    agent, _ = agent_for(backend, [
        tools(call("write_file", file_path="/memories/printer.md", content="E42: reset the fuser.\n")),
        AIMessage("Reset the fuser unit; that clears E42."),
        AIMessage("Glad it works."),
    ], middleware=[ConversationMiddleware(memory)])
    agent.invoke({"messages": [("user", "My printer shows E42")]}, config("t1", "ana"))
    agent.invoke({"messages": [("user", "That fixed it")]}, config("t1", "ana"))
    ana = Scope("default", ("users", "ana"))
    turns = memory.threads.turns("t1", ana)
    assert [(t.role, t.content) for t in turns] == [
        ("user", "My printer shows E42"), ("assistant", "Reset the fuser unit; that clears E42."),
        ("user", "That fixed it"), ("assistant", "Glad it works.")]
    assert memory.threads.search("printer E42", ana)[0].thread_id == "t1"
    assert memory.threads.list(Scope("default", ("users", "bob"))) == []


def test_the_documented_setup_shows_what_memory_add_wrote(memory):
    """Issue 28 item 1: the user's memories are shared by the deployment's agents, so the
    profile file of memory_backend(assistant_id=...) is the one Memory.add wrote to."""
    from engram import Scope

    memory.add("我叫张三，我对花生过敏。", Scope.for_user("default", "zhang"))
    backend = memory_backend(memory, assistant_id="helper")
    agent, _ = agent_for(backend, [
        tools(call("ls", path="/memories/"), call("read_file", file_path="/memories/profile.md")),
        tools(call("read_file", file_path="/memories/profile.md")),
        tools(call("edit_file", file_path="/memories/profile.md", old_string="花生", new_string="芒果")),
        tools(call("write_file", file_path="/memories/profile.md", content="# mine")),
        AIMessage("你对花生过敏。"),
    ])
    state = agent.invoke({"messages": [("user", "我对什么过敏？")]}, config("z1", "zhang"))
    listing, read, _, edit, write = tool_results(state)
    assert "/memories/profile.md" in listing.content
    assert "花生过敏" in read.content and "关于用户" in read.content
    for refused in (edit, write):
        assert refused.status == "error" and "read-only" in refused.content and "not found" not in refused.content


def test_per_agent_memories_are_an_explicit_option(memory):
    from engram import Scope

    memory.add("I am allergic to peanuts.", Scope.for_user("default", "ana"))
    memory.add("I prefer short answers.", Scope.for_user("default", "ana", agent="helper"))
    shared = memory_backend(memory, assistant_id="helper").routes["/memories/"].as_application()
    apart = memory_backend(memory, assistant_id="helper", per_agent=True).routes["/memories/"].as_application()
    shared.namespace = ("users", "ana", "files")
    apart.namespace = ("agents", "helper", "users", "ana", "files")
    assert "peanuts" in shared.read("/profile.md").file_data["content"]
    only_this_agent = apart.read("/profile.md").file_data["content"]
    assert "short answers" in only_this_agent and "peanuts" not in only_this_agent
    agent, _ = agent_for(memory_backend(memory, assistant_id="helper", per_agent=True), [
        tools(call("write_file", file_path="/memories/n.md", content="x")), AIMessage("ok")])
    agent.invoke({"messages": [("user", "hi")]}, config("p", "ana"))
    assert memory.list(Scope("default", ("agents", "helper", "users", "ana", "files"))).items


def test_errors_are_not_prefixed_twice(memory):
    backend = memory_backend(memory, assistant_id="helper")
    agent, _ = agent_for(backend, [
        tools(call("read_file", file_path="/memories/x.md"), call("ls", path="/memories/"),
              call("glob", pattern="**/*.md", path="/memories/"), call("write_file", file_path="/memories/x.md",
                                                                       content="x")),
        AIMessage("ok"),
    ])
    state = agent.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "anon"}})
    for result in tool_results(state):
        assert "no user identity" in result.content, result.content
        assert "Error: Error" not in result.content and result.content.count("Error:") == 1, result.content


@pytest.mark.parametrize("user", ["ａｌｉｃｅ", "\u24d0lice", "alice ", " alice"])
def test_lookalike_user_ids_never_read_alices_files(memory, user):
    """Issue 28 item 4: a lookalike sign-up name is refused, not mapped onto alice."""
    from engram import Scope

    memory.add("I am allergic to peanuts.", Scope.for_user("default", "alice"))
    backend = memory_backend(memory, assistant_id="helper")
    seed = backend.routes["/memories/"].as_application()
    seed.namespace = ("users", "alice", "files")
    seed.seed({"/diary.md": "alice's diary"})
    agent, _ = agent_for(backend, [
        tools(call("read_file", file_path="/memories/diary.md"), call("read_file", file_path="/memories/profile.md"),
              call("ls", path="/memories/")),
        AIMessage("ok"),
    ])
    state = agent.invoke({"messages": [("user", "hi")]}, config("l", user))
    for result in tool_results(state):
        assert result.status == "error" and "canonical form" in result.content
        assert "diary" not in result.content and "peanuts" not in result.content
