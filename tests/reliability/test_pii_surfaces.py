"""The per-tenant PII policy from configuration reaches every long-running surface
(issue 11, item 9): `engram serve` (HTTP), `engram mcp`, `engram worker` and `engram
stats` all read ENGRAM_PII_POLICY (JSON text or a .json/.toml file), per tenant."""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest
import uvicorn
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from engram import FakeHashEmbedder, Memory, Scope
from engram.cli import app
from engram.store.sqlite import SQLiteStore

runner = CliRunner()
PHONE = "Ana's number is 13812345678"
POLICY_TOML = ('[default]\ndefault = "mask"\n'
               '[tenants.acme.actions]\nphone = "forbid"\nemail = "forbid"\n'
               '[tenants.globex.actions]\nphone = "mask"\n')


@pytest.fixture
def configured(tmp_path, monkeypatch):
    policy = tmp_path / "pii.toml"
    policy.write_text(POLICY_TOML, encoding="utf-8")
    db = str(tmp_path / "surfaces.db")
    monkeypatch.setenv("ENGRAM_DB", db)
    monkeypatch.setenv("ENGRAM_EMBEDDER", "fake-hash")
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("ENGRAM_PII_POLICY", str(policy))
    return db


def test_engram_serve_applies_each_tenants_policy(configured, monkeypatch):
    answers = {}

    def serve_requests(app, **options):  # instead of listening: the requests a client would send
        client = TestClient(app)
        body = {"content": PHONE, "scope": {"user": "ana"}}
        for tenant in ("acme", "globex"):
            answers[tenant] = client.post("/v1/memories", json=body,
                                          headers={"Authorization": f"Bearer key-{tenant}-0123456789"})

    monkeypatch.setenv("ENGRAM_API_KEYS", "key-acme-0123456789=acme,key-globex-0123456789=globex")
    monkeypatch.setattr(uvicorn, "run", serve_requests)
    result = runner.invoke(app, ["serve"])
    assert result.exit_code == 0, result.output
    assert answers["acme"].status_code == 403 and answers["acme"].json()["error"] == "PIIForbiddenError"
    assert answers["globex"].status_code == 201 and "13812345678" not in answers["globex"].json()["content"]


def test_engram_mcp_applies_the_policy(configured, tmp_path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from engram.cli import main; main()", "mcp", "--user", "ana", "--tenant", "acme"],
        env={**os.environ},
    )

    async def main():
        async with Client(params, read_timeout_seconds=60) as client:
            return await client.call_tool("remember", {"content": PHONE})

    result = anyio.run(main)
    assert result.is_error and "forbids storing phone" in str(result.content)
    with Memory(SQLiteStore(configured), embedder=FakeHashEmbedder()) as memory:
        assert memory.list(Scope.for_user("acme", "ana")).items == ()


def test_engram_worker_applies_the_policy_to_queued_adds(configured):
    queued = runner.invoke(app, ["add", "Remember that my email is ana@example.com", "--background", "--force",
                                 "--tenant", "globex", "--user", "ana"])
    assert queued.exit_code == 0, queued.output
    worked = runner.invoke(app, ["worker", "--once"])
    assert worked.exit_code == 0 and "ran 1 job\n" in worked.output
    with Memory(SQLiteStore(configured), embedder=FakeHashEmbedder()) as memory:
        stored = memory.list(Scope.for_user("globex", "ana")).items
    assert stored and all("ana@example.com" not in r.content for r in stored)


def test_engram_stats_reports_the_policy_per_tenant(configured):
    assert runner.invoke(app, ["remember", "Prefers tea", "--tenant", "globex", "--user", "ana"]).exit_code == 0
    for tenant, action in (("acme", "forbid"), ("globex", "mask")):
        stats = runner.invoke(app, ["stats", "--json", "--tenant", tenant])
        assert stats.exit_code == 0, stats.output
        policy = json.loads(stats.stdout)["extra"]["pii_policy"]
        assert json.dumps(policy).count(action) >= 1, policy


def test_an_email_user_id_never_reaches_the_file_or_the_answers_under_a_strict_policy(tmp_path):
    """Issue 28 item 5: the label is screened like every other field — refused where the
    tenant's policy does not allow e-mails, so nothing new is kept under it."""
    from engram import PIIPolicies, PIIPolicy, pseudonym
    from engram.server.http import create_app

    db = tmp_path / "strict.db"
    strict = PIIPolicies(PIIPolicy(default="mask", actions={"email": "mask"}))
    with Memory(SQLiteStore(str(db)), embedder=FakeHashEmbedder(), pii=strict) as memory:
        client = TestClient(create_app(memory, api_keys=None))
        for path, body in (("/v1/memories", {"content": "Likes tea", "scope": {"user": "ana@example.com"}}),
                           ("/v1/add", {"messages": [{"role": "user", "content": "I like green tea a lot"}],
                                        "scope": {"user": "ana@example.com"}, "force": True})):
            refused = client.post(path, json=body)
            assert refused.status_code == 403 and refused.json()["error"] == "PIIForbiddenError", refused.text
            assert "ana@example.com" not in refused.text
        alias = pseudonym("ana@example.com", "an-application-secret-key")
        made = client.post("/v1/memories", json={"content": "Likes tea", "scope": {"user": alias}})
        assert made.status_code == 201 and made.json()["namespace"] == ["users", alias]
        assert "ana@example.com" not in client.get("/v1/export").text
    assert b"ana@example.com" not in b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
