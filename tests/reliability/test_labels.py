"""Tenant and namespace labels have one canonical form on every surface (issue 11,
item 8; issue 28, item 4): NFKC, no leading or trailing whitespace. A label not already
in that form is refused with a typed error, never mapped silently onto another user:
"ａｌｉｃｅ", "ⓐlice", "alice " and " alice" are refused, not read as "alice"."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from engram import InvalidScopeError, Scope
from engram.errors import ConfigError
from engram.server.auth import parse_api_keys
from engram.server.http import create_app

LOOKALIKES_OF_ALICE = ["alice ", " alice", "ａｌｉｃｅ", "\u24d0lice", "alice\u3000", "ａｌｉｃｅ "]
REFUSED = ["ali\u200bce", "alice\u200d", "\ufeffalice", "ali\u00adce", "alice\u202e", "a\u2028b", "a\x00b",
           "\ue000alice", "\u200b", "   "]
CANONICAL = ["alice", "Alice", "张三", "a@b.c", "u.x", "ünïcödé", "o'brien", "a b"]


@pytest.mark.parametrize("label", LOOKALIKES_OF_ALICE)
def test_lookalike_labels_are_refused_never_merged(memory, label):
    memory.remember("Ana likes green tea", Scope("acme", ("users", "alice")))
    with pytest.raises(InvalidScopeError, match="canonical form"):
        Scope("acme", ("users", label))
    with pytest.raises(InvalidScopeError, match="canonical form"):
        Scope(label)
    with pytest.raises(InvalidScopeError):
        Scope.for_user("acme", label)
    assert [r.content for r in memory.list(Scope("acme", ("users", "alice"))).items] == ["Ana likes green tea"]


@pytest.mark.parametrize("label", CANONICAL)
def test_canonical_labels_are_kept_as_given(label):
    assert Scope(label, ("users", label)).namespace == ("users", label)


@pytest.mark.parametrize("label", REFUSED)
def test_invisible_characters_are_refused(memory, label):
    with pytest.raises(InvalidScopeError):
        Scope("acme", ("users", label))
    with pytest.raises(InvalidScopeError):
        Scope(label)


def test_stats_and_jobs_refuse_a_lookalike_tenant(memory):
    memory.remember("Ana likes green tea", Scope("acme", ("users", "alice")))
    assert memory.stats("acme").records == 1
    with pytest.raises(InvalidScopeError):
        memory.stats("ａｃｍｅ ")
    with pytest.raises(InvalidScopeError):
        memory.stats("ac\u200bme")


def test_http_refuses_lookalike_and_invisible_labels_with_422(memory):
    client = TestClient(create_app(memory, api_keys={"key-acme-0123456789": "acme"}))
    auth = {"Authorization": "Bearer key-acme-0123456789"}
    made = client.post("/v1/memories", json={"content": "Ana likes green tea", "scope": {"user": "alice"}},
                       headers=auth)
    assert made.status_code == 201 and made.json()["namespace"] == ["users", "alice"]
    for lookalike in LOOKALIKES_OF_ALICE:
        written = client.post("/v1/memories", json={"content": "x", "scope": {"user": lookalike}}, headers=auth)
        assert written.status_code == 422 and written.json()["error"] == "InvalidScopeError"
        read = client.get("/v1/memories", params={"user": lookalike}, headers=auth)
        assert read.status_code == 422 and read.json()["error"] == "InvalidScopeError"
    listed = client.get("/v1/memories", params={"user": "alice"}, headers=auth).json()["items"]
    assert [item["id"] for item in listed] == [made.json()["id"]]
    refused = client.post("/v1/memories", json={"content": "x", "scope": {"user": "ali\u200bce"}}, headers=auth)
    assert refused.status_code == 422 and refused.json()["error"] == "InvalidScopeError"


def test_api_key_tenants_must_be_canonical(memory):
    keys = parse_api_keys("key-0123456789abcdef=acme")
    client = TestClient(create_app(memory, api_keys=keys))
    me = client.get("/v1/me", headers={"Authorization": "Bearer key-0123456789abcdef"})
    assert me.json()["tenant"] == "acme"
    for tenant in ("ac\u200bme", "ａｃｍｅ"):
        with pytest.raises(ConfigError):
            create_app(memory, api_keys={"key-0123456789abcdef": tenant})


def test_langgraph_refuses_lookalike_namespaces(memory):
    from langgraph.store.base import InvalidNamespaceError

    from engram.integrations.langgraph import EngramStore

    store = EngramStore(memory, tenant="acme")
    store.put(("users", "alice"), "k", {"text": "green tea"})
    for label in ("ａｌｉｃｅ", "alice ", "ali\u200bce"):
        with pytest.raises(InvalidNamespaceError):
            store.put(("users", label), "k", {"text": "x"})
        with pytest.raises(InvalidNamespaceError):
            store.get(("users", label), "k")
    item = store.get(("users", "alice"), "k")
    assert item is not None and item.value == {"text": "green tea"}


def test_tenants_named_in_configuration_files_must_be_canonical_too():
    from engram import PIIPolicies
    from engram.approval_rules import ApprovalRules

    policies = PIIPolicies.load('{"tenants": {"acme": {"actions": {"phone": "forbid"}}}}')
    assert policies.for_tenant(Scope("acme").tenant).action_for("phone") == "forbid"
    with pytest.raises(ConfigError, match="invisible"):
        PIIPolicies.load('{"tenants": {"ac\\u200bme": {"actions": {"phone": "forbid"}}}}')
    with pytest.raises(ConfigError, match="canonical form"):
        PIIPolicies.load('{"tenants": {"ａｃｍｅ ": {"actions": {"phone": "forbid"}}}}')
    with pytest.raises(ConfigError, match="canonical form"):
        ApprovalRules.load('{"tenants": {" acme": [{"name": "all", "kinds": ["rule"]}]}}')


@pytest.mark.parametrize("command", [["remember", "likes tea"], ["list"], ["mcp"]])
def test_cli_and_mcp_refuse_lookalike_users(tmp_path, command):
    from typer.testing import CliRunner

    from engram.cli import app

    for user in ("ａｌｉｃｅ", "alice "):
        result = CliRunner().invoke(app, [*command, "--db", str(tmp_path / "m.db"), "--user", user],
                                    env={"ENGRAM_EMBEDDER": "fake-hash"})
        assert result.exit_code == 2 and "canonical form" in result.output, result.output
