"""The governance commands on a real SQLite file: approvals, audit why/answer, review,
metrics (table and JSON), keys and reveal; exit codes as documented."""

import json

import pytest
from typer.testing import CliRunner

from engram import FakeHashEmbedder, Memory, Scope
from engram.cli import app

pytest.importorskip("cryptography")
from cryptography.fernet import Fernet

ORG = Scope("acme", ("orgs", "acme"))
ALICE = Scope("acme", ("users", "alice"))


@pytest.fixture
def env(tmp_path, monkeypatch):
    key = Fernet.generate_key().decode()
    values = {"ENGRAM_DB": str(tmp_path / "m.db"), "ENGRAM_EMBEDDER": "fake-hash", "ENGRAM_TENANT": "acme",
              "ENGRAM_APPROVALS": '{"rules": [{"name": "org", "namespaces": ["orgs/*"]}]}',
              "ENGRAM_PII_POLICY": '{"default": {"actions": {"phone": "encrypt"}}}', "ENGRAM_ENCRYPTION_KEY": key,
              "ENGRAM_REVIEWER": "maria", "COLUMNS": "200"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def cli(*args, code=0):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.output


def _memory(env):
    from engram.approval_rules import ApprovalRules

    return Memory.open(env["ENGRAM_DB"], embedder=FakeHashEmbedder(),
                       approvals=ApprovalRules.load(env["ENGRAM_APPROVALS"]))


def test_a_held_remember_exits_7_and_is_approved_or_rejected_from_the_cli(env):
    out = cli("remember", "Offices close at 6pm", "--ns", "orgs", "--ns", "acme", code=7)
    assert "awaits approval" in out
    listed = json.loads(cli("approvals", "list", "--json"))["items"]
    assert [p["changes"][0]["record"]["content"] for p in listed] == ["Offices close at 6pm"]
    assert "Offices close at 6pm" in cli("approvals", "list")
    pending_id = listed[0]["id"]
    assert json.loads(cli("approvals", "show", pending_id))["rule"].startswith("org")
    written = json.loads(cli("approvals", "approve", pending_id, "--content", "Offices close at 18:00", "--json"))
    assert written["items"][0]["content"] == "Offices close at 18:00"
    cli("approvals", "approve", pending_id, code=4)  # decided already: a conflict
    cli("remember", "Fridays off", "--ns", "orgs", "--ns", "acme", code=7)
    other = json.loads(cli("approvals", "list", "--json"))["items"][0]["id"]
    assert "rejected" in cli("approvals", "reject", other[:16], "--reason", "not true")  # the prefix tables show
    rejected = json.loads(cli("approvals", "list", "--status", "rejected", "--json"))["items"]
    assert rejected[0]["decided_by"] == "maria" and rejected[0]["decision_reason"] == "not true"
    cli("approvals", "reject", "nope", "--reason", "x", code=3)


def test_audit_why_and_answer(env):
    with _memory(env) as memory:
        record = memory.remember("Prefers green tea", ALICE, kind="preference")
        block = memory.context("tea", ALICE, thread_id="t1")
        memory.audit.link_answer(block.recall_id, ALICE, answer_id="msg-9", answer="You like green tea.")
    why = json.loads(cli("audit", "why", record.id, "--json"))
    assert why["answers"][0]["answer_id"] == "msg-9" and why["versions"][0]["operation"] == "create"
    assert "Prefers green tea" in cli("audit", "why", record.id)
    trace = json.loads(cli("audit", "answer", "msg-9", "--json"))
    assert trace[0]["memories"][0]["used"] is True and trace[0]["recall"]["thread_id"] == "t1"
    assert "yes" in cli("audit", "answer", block.recall_id)
    cli("audit", "why", "nope", code=3)


def test_quality_keys_and_reveal(env, monkeypatch):
    cli("remember", "Call me on 13812345678", "--user", "alice")
    assert "queued 1" in cli("quality", "sample", "--n", "5")
    [sample] = json.loads(cli("quality", "list", "--json"))["items"]
    assert sample["written"]["content"] == "Call me on [PHONE#1]"
    cli("quality", "mark", sample["id"], "correct", "--note", "fine")
    cli("quality", "mark", sample["id"], "perhaps", code=2)
    report = json.loads(cli("quality", "report", "--json"))  # ENGRAM_TENANT: one tenant, as GET /v1/quality
    assert report["write_accuracy"]["rate"] == 1.0 and report["pii_actions"] == {"phone": {"encrypt": 1}}
    monkeypatch.delenv("ENGRAM_TENANT")
    assert [r["tenant"] for r in json.loads(cli("quality", "report", "--json"))["items"]] == ["acme"]
    monkeypatch.setenv("ENGRAM_TENANT", "acme")
    table = cli("quality", "report")
    assert "write accuracy" in table and "100.0%" in table
    record_id = sample["record_id"]
    assert cli("keys", "reveal", record_id[:10], "--reason", "ticket 4").strip() == "Call me on 13812345678"
    assert "values it decrypts" in cli("keys", "status")
    status = json.loads(cli("keys", "status", "--json"))
    assert status["records"] == 1 and sum(status["values"].values()) == 1
    new = cli("keys", "generate").strip()
    monkeypatch.setenv("ENGRAM_ENCRYPTION_KEY", f"{new},{env['ENGRAM_ENCRYPTION_KEY']}")
    [rotation] = json.loads(cli("keys", "rotate", "--json"))
    assert rotation["records"] == 1 and rotation["unreadable"] == 0
    monkeypatch.setenv("ENGRAM_ENCRYPTION_KEY", new)
    assert cli("keys", "reveal", record_id, "--reason", "after rotation").strip() == "Call me on 13812345678"


def test_approvals_list_shows_short_ids_on_one_line_and_audit_why_reads_as_lines(env, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    cli("remember", "Offices close at 6pm", "--ns", "orgs", "--ns", "acme", code=7)
    pending_id = json.loads(cli("approvals", "list", "--json"))["items"][0]["id"]
    listed = cli("approvals", "list")
    row = next(line for line in listed.splitlines() if line.strip().startswith(pending_id[:16]))
    assert pending_id not in listed and "create" in row and "orgs/acme" in row  # 16 characters on one line
    record_id = json.loads(cli("approvals", "approve", pending_id[:16], "--json"))["items"][0]["id"]
    why = cli("audit", "why", record_id)
    assert "{'" not in why and "'}" not in why  # no Python dict
    lines = [line.strip() for line in why.splitlines()]
    assert any(line.endswith(f"pending id: {pending_id[:16]}") for line in lines) and "rule: org" in why
