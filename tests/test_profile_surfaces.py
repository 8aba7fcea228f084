"""The profile read through every surface: HTTP, MCP, the CLI and a Deep Agents file."""

from __future__ import annotations

import json

import anyio
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from engram import FakeHashEmbedder, Memory, Scope, Settings
from engram.store.sqlite import SQLiteStore


@pytest.fixture
def mem(db_path, clock):
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock,
                settings=Settings(auto_worker=False)) as memory:
        yield memory


def _seed(memory: Memory, scope: Scope) -> tuple[str, str]:
    allergy = memory.remember("Allergic to peanuts", scope)
    memory.remember("Call the bank on Monday", scope, kind="todo")
    home = memory.remember("Lives in Porto", scope)
    return allergy.id, home.id


def test_http_profile_lists_the_profile_best_first_and_pinning_changes_it(mem, alice):
    from engram.server.http import create_app

    allergy, home = _seed(mem, alice)
    client = TestClient(create_app(mem, api_keys={"key-acme-0123456789": "acme"}))
    key = {"Authorization": "Bearer key-acme-0123456789"}
    body = client.get("/v1/profile", params={"user": "alice"}, headers=key).json()
    assert [item["id"] for item in body["items"]] == [allergy, home]
    response = client.patch(f"/v1/memories/{home}", json={"pinned": False}, params={"user": "alice"}, headers=key)
    assert response.status_code == 200, response.text
    assert response.json()["pinned"] is False
    body = client.get("/v1/profile", params={"user": "alice"}, headers=key).json()
    assert [item["id"] for item in body["items"]] == [allergy]
    context = client.post("/v1/context", json={"query": "dinner plans", "scope": {"user": "alice"}},
                          headers=key).json()
    assert context["profile"] == [allergy]


def test_mcp_profile_tool_and_resource(mem, alice):
    from mcp.client.client import Client

    from engram.server.mcp import create_mcp_server

    allergy, home = _seed(mem, alice)

    async def main():
        async with Client(create_mcp_server(mem, alice)) as client:
            tool = await client.call_tool("profile", {})
            resource = await client.read_resource("engram://profile")
            return tool.structured_content, resource.contents[0].text

    found, text = anyio.run(main)
    assert [m["id"] for m in found["memories"]] == [allergy, home]
    assert "Allergic to peanuts" in text and "Call the bank" not in text


def test_cli_profile(tmp_path, clock):
    from engram.cli import app

    path = str(tmp_path / "cli.db")
    with Memory(SQLiteStore(path), embedder=FakeHashEmbedder(), clock=clock) as memory:
        allergy, home = _seed(memory, Scope.for_user("default", "alice"))
    result = CliRunner().invoke(app, ["profile", "--db", path, "--user", "alice", "--json"],
                                env={"ENGRAM_EMBEDDER": "fake-hash"})
    assert result.exit_code == 0, result.output
    assert [item["id"] for item in json.loads(result.output)["items"]] == [allergy, home]


def test_deep_agents_profile_file_is_read_only_and_made_from_memories(mem):
    from engram.integrations.deepagents.setups import user_files

    backend = user_files(mem, tenant="acme").as_application()
    backend.namespace = ("users", "alice", "files")  # as the runtime would name the user
    _seed(mem, Scope.for_user("acme", "alice"))
    text = backend.read("/profile.md").file_data["content"]
    assert "Allergic to peanuts" in text and "Lives in Porto" in text and "Call the bank" not in text
    assert "/profile.md" in [entry["path"] for entry in backend.ls("/").entries]
    refused = backend.write("/profile.md", "# mine now")
    assert refused.error and "read-only" in refused.error
    assert backend.download_files(["/profile.md"])[0].content.decode().startswith("# What I know about the user")
