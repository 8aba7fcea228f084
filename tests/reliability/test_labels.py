"""Tenant and namespace labels have one canonical form on every surface (issue 11,
item 8): NFKC, no leading or trailing whitespace; labels holding invisible or control
characters are refused. Lookalikes are the same scope, never a second tenant or user."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from engram import InvalidScopeError, Scope
from engram.errors import ConfigError
from engram.server.auth import parse_api_keys
from engram.server.http import create_app

SAME_AS_ALICE = ["alice ", " alice", "ａｌｉｃｅ", "alice\u3000"]
REFUSED = ["ali\u200bce", "alice\u200d", "\ufeffalice", "ali\u00adce", "alice\u202e", "a\u2028b", "a\x00b",
           "\ue000alice", "\u200b", "   "]


@pytest.mark.parametrize("label", SAME_AS_ALICE)
def test_lookalike_labels_are_one_scope(memory, label):
    memory.remember("Ana likes green tea", Scope("acme", ("users", "alice")))
    assert Scope(label, ("users", label)) == Scope("alice", ("users", "alice"))
    assert [r.content for r in memory.list(Scope("acme", ("users", label))).items] == ["Ana likes green tea"]
    assert Scope("acme ", ("users",)).tenant == "acme"


@pytest.mark.parametrize("label", REFUSED)
def test_invisible_characters_are_refused(memory, label):
    with pytest.raises(InvalidScopeError):
        Scope("acme", ("users", label))
    with pytest.raises(InvalidScopeError):
        Scope(label)


def test_stats_and_jobs_take_the_canonical_tenant(memory):
    memory.remember("Ana likes green tea", Scope("acme", ("users", "alice")))
    assert memory.stats("ａｃｍｅ ").records == 1
    with pytest.raises(InvalidScopeError):
        memory.stats("ac\u200bme")


def test_http_namespaces_are_canonical_and_invisible_characters_are_422(memory):
    client = TestClient(create_app(memory, api_keys={"key-acme-0123456789": "acme"}))
    auth = {"Authorization": "Bearer key-acme-0123456789"}
    made = client.post("/v1/memories", json={"content": "Ana likes green tea", "scope": {"user": "ａｌｉｃｅ "}},
                       headers=auth)
    assert made.status_code == 201 and made.json()["namespace"] == ["users", "alice"]
    listed = client.get("/v1/memories", params={"user": "alice"}, headers=auth).json()["items"]
    assert [item["id"] for item in listed] == [made.json()["id"]]
    refused = client.post("/v1/memories", json={"content": "x", "scope": {"user": "ali\u200bce"}}, headers=auth)
    assert refused.status_code == 422 and refused.json()["error"] == "InvalidScopeError"


def test_api_key_tenants_are_canonical_and_refused_when_invisible(memory):
    keys = parse_api_keys("key-0123456789abcdef=ａｃｍｅ ")
    client = TestClient(create_app(memory, api_keys=keys))
    me = client.get("/v1/me", headers={"Authorization": "Bearer key-0123456789abcdef"})
    assert me.json()["tenant"] == "acme"
    with pytest.raises(ConfigError):
        create_app(memory, api_keys={"key-0123456789abcdef": "ac\u200bme"})


def test_langgraph_namespaces_are_canonical(memory):
    from engram.integrations.langgraph import EngramStore

    store = EngramStore(memory, tenant="acme")
    store.put(("users", "ａｌｉｃｅ"), "k", {"text": "green tea"})
    item = store.get(("users", "alice"), "k")
    assert item is not None and item.namespace == ("users", "alice")
    from langgraph.store.base import InvalidNamespaceError

    with pytest.raises(InvalidNamespaceError):
        store.put(("users", "ali\u200bce"), "k", {"text": "x"})


def test_tenants_named_in_configuration_files_are_canonical_too():
    from engram import PIIPolicies
    from engram.approval_rules import ApprovalRules

    policies = PIIPolicies.load('{"tenants": {"ａｃｍｅ ": {"actions": {"phone": "forbid"}}}}')
    assert policies.for_tenant(Scope("acme").tenant).action_for("phone") == "forbid"
    with pytest.raises(ConfigError, match="invisible"):
        PIIPolicies.load('{"tenants": {"ac\\u200bme": {"actions": {"phone": "forbid"}}}}')
    rules = ApprovalRules.load('{"tenants": {" acme": [{"name": "all", "kinds": ["rule"]}]}}')
    assert [rule.name for rule in rules.for_tenant("acme")] == ["all"]
