"""The MCP server: tools bound to one user fixed at start, driven in-process by the
MCP client and once over stdio as `engram mcp` in a subprocess."""

import json
import os
import sys

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from engram import FakeHashEmbedder, Memory, Scope, Settings, Status
from engram.llm.fake import ScriptedLLM
from engram.pipeline.llm_extract import LLMExtractor
from engram.pipeline.run import Pipeline
from engram.server.mcp import create_mcp_server
from engram.store.sqlite import SQLiteStore

TOOLS = {"remember", "search", "context", "add", "search_past_conversations", "forget", "history", "answered", "profile"}
SCOPE_WORDS = {"tenant", "user", "namespace", "scope", "agent", "org"}


def extraction(*memories):
    return json.dumps({"memories": [{"kind": kind, "content": content, "confidence": 0.9, "importance": 0.8,
                                     "source_ids": ["m1"]} for kind, content in memories]})


@pytest.fixture
def mem(db_path, clock):
    pipeline = Pipeline(LLMExtractor(ScriptedLLM([extraction(("preference", "Prefers green tea"))])))
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock, pipeline=pipeline,
                settings=Settings(auto_worker=False)) as memory:
        yield memory


def session(memory, scope, script):
    """Run ``script(client)`` against an in-process server for ``scope``."""
    async def main():
        async with Client(create_mcp_server(memory, scope)) as client:
            return await script(client)

    return anyio.run(main)


async def call(client, tool, **arguments):
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


def test_tools_are_listed_and_none_takes_a_scope(mem, alice):
    async def script(client):
        return (await client.list_tools()).tools, (await client.list_resources()).resources

    tools, resources = session(mem, alice, script)
    assert {t.name for t in tools} == TOOLS
    for tool in tools:
        assert tool.description and not SCOPE_WORDS & set(tool.input_schema["properties"]), tool.name
    assert sorted(str(r.uri) for r in resources) == ["engram://memory", "engram://profile"]


def test_remember_search_context_forget_history_round_trip(mem, alice):
    async def script(client):
        tea = await call(client, "remember", content="Prefers green tea in the afternoon", kind="preference",
                         tags=["drinks"])
        await call(client, "remember", content="Works as a baker in Lyon")
        hits = (await call(client, "search", query="green tea", k=5))["hits"]
        block = await client.call_tool("context", {"query": "what should I offer to drink?"})
        forgotten = await call(client, "forget", memory_id=tea["id"], reason="changed taste")
        versions = (await call(client, "history", memory_id=tea["id"]))["versions"]
        after = (await call(client, "search", query="green tea"))["hits"]
        return tea, hits, block, forgotten, versions, after

    tea, hits, block, forgotten, versions, after = session(mem, alice, script)
    assert hits[0]["id"] == tea["id"] and hits[0]["score"] > 0
    assert "Prefers green tea in the afternoon" in block.content[0].text
    assert forgotten["status"] == "deleted"
    assert [(v["operation"], v["reason"]) for v in versions] == [("create", None), ("forget", "changed taste")]
    assert tea["id"] not in {h["id"] for h in after}
    stored = mem.get(tea["id"], alice)
    assert stored.scope == alice and stored.tags == ("drinks",) and stored.source.actor == "mcp"


def test_add_extracts_and_the_resource_shows_the_block(mem, alice):
    async def script(client):
        added = await call(client, "add", messages=[{"role": "user", "content": "I always drink green tea."}],
                           thread_id="t1")
        resource = await client.read_resource("engram://memory")
        return added, resource.contents[0].text

    added, block = session(mem, alice, script)
    assert [(e["event"], e["content"]) for e in added["events"]] == [("ADD", "Prefers green tea")]
    assert block == "## Memories\n### Preferences\n- Prefers green tea"
    assert mem.get(added["events"][0]["record_id"], alice).source.thread_id == "t1"


def test_a_tool_call_cannot_escape_the_configured_scope(mem, alice, bob):
    bobs = mem.remember("Bob's bank PIN hint: his cat", bob)
    other_tenant = mem.remember("Globex secret", Scope.for_user("globex", "alice"))

    async def script(client):
        placed = await call(client, "remember", content="Alice likes jazz", user="bob", tenant="globex",
                            scope={"namespace": ["users", "bob"]}, namespace=["users", "bob"])
        searched = (await call(client, "search", query="bank PIN cat secret", user="bob", k=10))["hits"]
        refused = [await client.call_tool(tool, {"memory_id": record.id})
                   for tool in ("forget", "history") for record in (bobs, other_tenant)]
        return placed, searched, refused

    placed, searched, refused = session(mem, alice, script)
    assert mem.get(placed["id"], alice).scope == alice  # the extra arguments were ignored
    assert searched == [] or all(h["id"] not in (bobs.id, other_tenant.id) for h in searched)
    for result in refused:
        assert result.is_error and "NotFoundError" in result.content[0].text
    assert mem.get(bobs.id, bob).status is Status.ACTIVE and len(mem.history(bobs.id, bob)) == 1


def test_engram_errors_reach_the_model_as_tool_errors(mem, alice):
    async def script(client):
        return [await client.call_tool("remember", {"content": "   "}),
                await client.call_tool("remember", {"content": "x", "importance": 3}),
                await client.call_tool("search", {"query": "x", "kinds": ["gossip"]})]

    empty, out_of_range, bad_kind = session(mem, alice, script)
    assert empty.is_error and "InvalidContentError" in empty.content[0].text
    assert out_of_range.is_error and "importance" in out_of_range.content[0].text
    assert bad_kind.is_error


def test_create_mcp_server_needs_a_scope(mem):
    with pytest.raises(TypeError):
        create_mcp_server(mem, "users/alice")


def test_engram_mcp_over_stdio(tmp_path):
    db = str(tmp_path / "stdio.db")
    env = {**os.environ, "ENGRAM_EMBEDDER": "fake-hash", "ENGRAM_CACHE_DIR": str(tmp_path)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from engram.cli import main; main()", "mcp", "--user", "alice", "--tenant", "acme",
              "--db", db],
        env=env,
    )

    async def main():
        async with Client(params, read_timeout_seconds=60) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            created = await call(client, "remember", content="Prefers window seats", kind="preference")
            hits = (await call(client, "search", query="window seats"))["hits"]
            return names, created, hits

    names, created, hits = anyio.run(main)
    assert names == TOOLS and [h["id"] for h in hits] == [created["id"]]
    with Memory(SQLiteStore(db), embedder=FakeHashEmbedder()) as memory:
        assert memory.get(created["id"], Scope.for_user("acme", "alice")).content == "Prefers window seats"


def test_context_and_search_give_recall_ids_the_model_reports_answers_with(mem, alice):
    async def script(client):
        tea = await call(client, "remember", content="Prefers green tea", kind="preference")
        block = await client.call_tool("context", {"query": "green tea"})
        found = await call(client, "search", query="green tea")
        recall_id = block.content[0].text.split("(recall id: ")[1].split(" ")[0]
        linked = await call(client, "answered", recall_id=recall_id, answer_id="msg-1",
                            answer="You like green tea.")
        return tea, found, linked

    tea, found, linked = session(mem, alice, script)
    assert found["recall_id"] and linked == {"recall_id": linked["recall_id"], "answer_id": "msg-1",
                                             "used": [tea["id"]]}
    assert mem.audit.answer("msg-1", alice)[0].memories[0].used is True


def test_a_reviewers_server_decides_pending_changes(db_path, clock):
    from engram.approval_rules import ApprovalRule, ApprovalRules
    from engram.server.mcp import create_mcp_server

    org = Scope("acme", ("orgs", "acme"))
    rules = ApprovalRules((ApprovalRule("org", namespaces=("orgs/*",)),))
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock, approvals=rules,
                settings=Settings(auto_worker=False)) as memory:
        async def agent(client):
            names = {t.name for t in (await client.list_tools()).tools}
            held = await client.call_tool("remember", {"content": "Offices close at 6pm"})
            return names, held

        async def review(client):
            pending = (await call(client, "pending_approvals"))["items"]
            written = await call(client, "approve", pending_id=pending[0]["id"], reason="correct")
            return pending, written

        async def run(script, **options):
            async with Client(create_mcp_server(memory, org, **options)) as client:
                return await script(client)

        names, held = anyio.run(lambda: run(agent))
        pending, written = anyio.run(lambda: run(review, reviewer="maria"))
    assert "approve" not in names and held.is_error and "awaits approval" in held.content[0].text
    assert pending[0]["changes"][0]["content"] == "Offices close at 6pm" and pending[0]["rule"].startswith("org")
    assert written["written"][0]["content"] == "Offices close at 6pm"


def test_past_conversations_are_searched_in_the_servers_scope_only(mem, alice, bob):
    mem.threads.record(["The staging deploy fails on the migration step", "Run the migration by hand first"],
                       alice, thread_id="deploy")
    mem.threads.record(["The staging deploy is slow"], bob, thread_id="bob-deploy")

    async def script(client):
        return await call(client, "search_past_conversations", query="staging deploy migration")

    found = session(mem, alice, script)["conversations"]
    assert [c["thread_id"] for c in found] == ["deploy"]
    assert [t["content"] for t in found[0]["turns"]] == ["The staging deploy fails on the migration step",
                                                          "Run the migration by hand first"]
