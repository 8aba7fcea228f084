"""Governance over HTTP: a held write answers 202 with its pending change; reviewers
(keys with the review permission) decide it; recalls link answers; reveal needs
its own permission; /metrics speaks the Prometheus text format."""

import pytest
from fastapi.testclient import TestClient

pytest.importorskip("cryptography")
from cryptography.fernet import Fernet

from engram import FakeHashEmbedder, Memory, PIIPolicy, Settings
from engram.approval_rules import ApprovalRule, ApprovalRules
from engram.server.auth import ConfigError, Tenancy
from engram.server.http import create_app
from engram.store.sqlite import SQLiteStore

WRITER, REVIEWER, GLOBEX = "key-writer-0123456789", "key-reviewer-0123456789", "key-globex-0123456789"
W, R, G = ({"Authorization": f"Bearer {k}"} for k in (WRITER, REVIEWER, GLOBEX))
KEYS = {WRITER: "acme", REVIEWER: "acme[review+reveal]", GLOBEX: "globex[review]"}
ORG = {"org": "acme"}


@pytest.fixture
def client(db_path, clock, monkeypatch):
    monkeypatch.setenv("ENGRAM_ENCRYPTION_KEY", Fernet.generate_key().decode())
    rules = ApprovalRules((ApprovalRule("org memory", namespaces=("orgs/*",)),))
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock, approvals=rules,
                pii=PIIPolicy(actions={"phone": "encrypt"}), settings=Settings(auto_worker=False)) as memory:
        yield TestClient(create_app(memory, api_keys=KEYS))


def test_a_held_write_is_202_and_a_reviewer_approves_it(client):
    held = client.post("/v1/memories", json={"content": "Expense reports are due on the 5th", "scope": ORG},
                       headers=W)
    assert held.status_code == 202, held.text
    pending = held.json()["pending"]
    assert held.json()["status"] == "pending" and pending["changes"][0]["operation"] == "create"
    assert client.get("/v1/memories", params=ORG, headers=W).json()["items"] == []
    assert client.get("/v1/approvals", headers=W).status_code == 403  # no review permission
    listed = client.get("/v1/approvals", headers=R).json()["items"]
    assert [p["id"] for p in listed] == [pending["id"]] and listed[0]["rule"].startswith("org memory")
    assert client.get("/v1/approvals", headers=G).json()["items"] == []  # another tenant's reviewer
    assert client.post(f"/v1/approvals/{pending['id']}/approve", headers=G).status_code == 404
    approved = client.post(f"/v1/approvals/{pending['id']}/approve", headers=R,
                           json={"reviewer": "maria", "edit": {"content": "Expense reports are due on the 5th."}})
    assert approved.status_code == 200, approved.text
    [record] = approved.json()["items"]
    assert record["content"] == "Expense reports are due on the 5th."
    history = client.get(f"/v1/memories/{record['id']}/history", params=ORG, headers=W).json()["items"]
    assert history[0]["actor"].startswith("http:") and history[0]["actor"].endswith(":maria")
    again = client.post(f"/v1/approvals/{pending['id']}/approve", headers=R)
    assert again.status_code == 409 and again.json()["error"] == "ConflictError"


def test_add_reports_pending_events_and_a_rejection_keeps_its_reason(client):
    body = {"messages": [{"role": "user", "content": "I live in Lisbon."}], "scope": ORG}
    events = client.post("/v1/add", json=body, headers=W).json()["events"]
    assert [e["event"] for e in events] == ["PENDING"] and events[0]["pending_id"]
    pending_id = events[0]["pending_id"]
    rejected = client.post(f"/v1/approvals/{pending_id}/reject", json={"reason": "not org knowledge"}, headers=R)
    assert rejected.json()["status"] == "rejected" and rejected.json()["decision_reason"] == "not org knowledge"
    assert client.get("/v1/approvals", params={"status": "rejected"}, headers=R).json()["items"][0]["id"] == pending_id


def test_recall_and_context_give_recall_ids_that_answers_link_to(client):
    remembered = client.post("/v1/memories", json={"content": "Prefers green tea", "scope": {"user": "alice"}},
                             headers=W).json()
    context = client.post("/v1/context", json={"query": "green tea", "scope": {"user": "alice"},
                                               "thread_id": "t1"}, headers=W).json()
    assert context["recall_id"]
    linked = client.post(f"/v1/recalls/{context['recall_id']}/answer", headers=W,
                         json={"answer_id": "msg-1", "answer": "You prefer green tea."}).json()
    assert linked["used"] == [remembered["id"]] and linked["thread_id"] == "t1"
    trace = client.get("/v1/recalls/msg-1", headers=W).json()["items"]
    assert trace[0]["memories"][0]["used"] is True and trace[0]["memories"][0]["record"]["content"] == "Prefers green tea"
    recall = client.post("/v1/recall", json={"query": "tea", "scope": {"user": "alice"}}, headers=W).json()
    assert recall["recall_id"] and recall["hits"][0]["record"]["id"] == remembered["id"]
    why = client.get(f"/v1/memories/{remembered['id']}/why", params={"user": "alice"}, headers=W).json()
    assert why["answers"][0]["answer_id"] == "msg-1" and why["versions"][0]["actor"] == "http"
    assert client.get("/v1/recalls/msg-1", headers=G).status_code == 404


def test_reveal_needs_the_permission_and_is_audited(client):
    record = client.post("/v1/memories", json={"content": "Call me on 13812345678", "scope": {"user": "bo"}},
                         headers=W).json()
    assert record["content"] == "Call me on [PHONE#1]"
    path = f"/v1/memories/{record['id']}/reveal"
    assert client.post(path, json={"reason": "support"}, params={"user": "bo"}, headers=W).status_code == 403
    shown = client.post(path, json={"reason": "support ticket 7"}, params={"user": "bo"}, headers=R)
    assert shown.status_code == 200 and shown.json()["content"] == "Call me on 13812345678"
    audit = client.get("/v1/audit", params={"operation": "reveal", "user": "bo"}, headers=W).json()["items"]
    assert audit[0]["detail"]["reason"] == "support ticket 7" and audit[0]["actor"].startswith("http:")


def test_write_samples_are_reviewed_over_http_and_show_in_the_quality_report(client):
    client.post("/v1/memories", json={"content": "Likes hiking", "scope": {"user": "alice"}}, headers=W)
    assert client.post("/v1/quality/sample", json={"n": 5}, headers=W).status_code == 403
    [sample] = client.post("/v1/quality/sample", json={"n": 5}, headers=R).json()["items"]
    queue = client.get("/v1/quality/samples", headers=R).json()["items"]
    assert queue[0]["written"]["content"] == "Likes hiking"
    marked = client.post(f"/v1/quality/samples/{sample['id']}", json={"verdict": "correct"}, headers=R).json()
    assert marked["verdict"] == "correct"
    assert client.post(f"/v1/quality/samples/{sample['id']}", json={"verdict": "maybe"}, headers=R).status_code == 422
    report = client.get("/v1/quality", headers=W).json()
    assert report["write_accuracy"]["rate"] == 1.0 and report["write_accuracy"]["reviewed"] == 1


def test_metrics_are_prometheus_text_for_the_callers_tenant(client):
    client.post("/v1/memories", json={"content": "Rule A", "scope": ORG}, headers=W)
    client.post("/v1/memories", json={"content": "Likes tea", "scope": {"user": "a"}}, headers=W)
    client.post("/v1/context", json={"query": "tea", "scope": {"user": "a"}}, headers=W)
    assert client.get("/metrics").status_code == 401
    response = client.get("/metrics", headers=W)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = response.text
    assert 'engram_pending_approvals{tenant="acme"} 1' in text
    assert 'engram_changes{tenant="acme",operation="create"} 1' in text
    assert 'engram_recall_latency_seconds_count{tenant="acme"} 1' in text
    assert "# TYPE engram_recall_latency_seconds summary" in text
    assert 'tenant="globex"' not in text
    parser = pytest.importorskip("prometheus_client.parser")
    names = {family.name for family in parser.text_string_to_metric_families(text)}
    assert {"engram_pending_approvals", "engram_changes", "engram_recall_latency_seconds"} <= names


def test_me_reports_the_keys_permissions(client):
    assert client.get("/v1/me", headers=R).json()["permissions"] == ["reveal", "review"]
    assert client.get("/v1/me", headers=W).json()["permissions"] == []


def test_key_permissions_are_parsed_and_checked():
    tenancy = Tenancy({"k1": "acme[review]", "k2": "acme", "k3": "we[ird]name"})
    assert tenancy.caller_for("k1").permissions == {"review"} and tenancy.caller_for("k2").permissions == set()
    assert tenancy.caller_for("k3").tenant == "we[ird]name"
    with pytest.raises(ConfigError, match="permission"):
        Tenancy({"k": "acme[admin]"})
    assert Tenancy(None).caller_for(None).permissions == {"review", "reveal"}
