"""One set of public JSON shapes: the CLI's --json, the HTTP API and the MCP server
print the same fields under the same names, and a record is the export's record."""

import io
import json

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from engram import FakeHashEmbedder, Memory, Scope, Settings
from engram.cli import app as cli_app
from engram.server import responses
from engram.server.http import create_app
from engram.shapes import (
    BRIEF_FIELDS,
    add_data,
    audit_data,
    context_data,
    hit_data,
    import_data,
    job_data,
    memory_block,
    record_brief,
    record_data,
    stats_data,
    version_data,
)


@pytest.fixture
def served(tmp_path, monkeypatch):
    db = tmp_path / "shapes.db"
    monkeypatch.setenv("ENGRAM_DB", str(db))
    monkeypatch.setenv("ENGRAM_EMBEDDER", "fake-hash")
    monkeypatch.setenv("ENGRAM_TENANT", "acme")
    memory = Memory.open(str(db), embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False))
    yield memory, TestClient(create_app(memory, api_keys=None, tenant="acme"))
    memory.close()


def timeless(found):
    """Hits without the score and recency, which move with the wall clock between two calls."""
    return [{**hit, "score": None, "signals": {**hit["signals"], "recency": None}} for hit in found["hits"]]


def cli(*args):
    result = CliRunner().invoke(cli_app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_each_response_model_names_exactly_the_fields_of_its_shape(memory, alice):
    record = memory.remember("Prefers tea", alice, kind="preference")
    memory.forget(record.id, alice, reason="changed")
    hit = memory.search("tea", alice, statuses=None)[0]
    block = memory.context("tea", Scope.for_user("acme", "alice"))
    added = memory.add("Remember that I live in Lisbon.", alice)
    job = memory.add("Remember that I like cats.", alice, background=True)
    pairs = [
        (responses.RecordOut, record_data(record)),
        (responses.VersionOut, version_data(memory.history(record.id, alice)[0])),
        (responses.HitOut, hit_data(hit)),
        (responses.SignalsOut, hit_data(hit)["signals"]),
        (responses.ContextOut, context_data(block)),
        (responses.AddOut, add_data(added)),
        (responses.AddEventOut, add_data(added)["events"][0]),
        (responses.JobOut, job_data(memory.jobs.list("acme")[0])),
        (responses.AuditOut, audit_data(memory.audit.list(alice)[0])),
        (responses.StatsOut, stats_data(memory.stats("acme"), server_details=False)),
    ]
    for model, data in pairs:
        assert set(model.model_fields) == set(data), model.__name__
        model.model_validate(data)
    assert job.job_id and add_data(job)["job_id"] == job.job_id


def test_a_record_is_the_export_record_line(memory, alice):
    record = memory.remember("Lives in Porto", alice, tags=["city"], metadata={"a": 1})
    out = io.StringIO()
    memory.transfer.export_to(out, alice)
    exported = json.loads(out.getvalue().splitlines()[1])
    assert exported["record"] == record_data(record)
    assert record_brief(record) == {name: record_data(record)[name] for name in BRIEF_FIELDS}


def test_cli_json_prints_what_the_http_api_answers(served):
    _memory, client = served
    created = cli("remember", "Prefers concise reports", "--user", "alice", "--kind", "preference", "--json")
    assert client.get(f"/v1/memories/{created['id']}").json() == created
    assert cli("list", "--user", "alice", "--json") == client.get("/v1/memories", params={"user": "alice"}).json()
    assert cli("show", created["id"], "--json") == created
    found = cli("search", "concise reports", "--user", "alice", "--json")
    over_http = client.post("/v1/search", json={"query": "concise reports", "scope": {"user": "alice"}}).json()
    assert timeless(found) == timeless(over_http)
    assert set(found) == {"hits"} and found["hits"][0]["signals"]["lexical"] == 1.0
    assert cli("history", created["id"], "--json") == client.get(f"/v1/memories/{created['id']}/history").json()
    over_http = client.get("/v1/stats").json()
    on_cli = cli("stats", "--tenant", "acme", "--json")
    assert set(on_cli) == set(over_http) and on_cli["records"] == over_http["records"] == 1
    assert set(over_http["extra"]) == {"jobs", "llm_tokens", "episodes"} and "path" in on_cli["extra"]  # the server keeps its own
    added = cli("add", "Remember that I live in Lisbon.", "--user", "alice", "--json")
    assert set(added) == set(responses.AddOut.model_fields) and "trigger_reason" in added
    context = cli("context", "reports", "--user", "alice", "--json")
    assert set(context) == set(responses.ContextOut.model_fields)


def test_import_and_maintenance_shapes(memory, alice, tmp_path):
    memory.remember("one", alice)
    path = tmp_path / "dump.jsonl"
    memory.transfer.export_to(path, alice)
    with Memory.open(str(tmp_path / "other.db"), embedder=FakeHashEmbedder()) as other:
        assert import_data(other.transfer.import_from(path)) == {"imported": 1, "skipped": 0, "tenant": "acme"}
        assert set(import_data(other.transfer.import_from(path, on_conflict="skip"))) == set(responses.ImportOut.model_fields)


def test_the_memory_block_uses_the_context_headings(memory, alice):
    memory.remember("Prefers tea", alice, kind="preference")
    memory.remember("Lives in Porto", alice)
    records = list(memory.list(alice).items)
    assert memory_block(records) == "## Memories\n### Preferences\n- Prefers tea\n### Facts\n- Lives in Porto"
    assert memory_block(records, "zh").startswith("## 记忆\n### 偏好")
    assert memory_block([]) == "(no memories yet)"


def test_surfaces_never_import_the_store_codec():
    import pathlib

    root = pathlib.Path(__file__).parent.parent / "src" / "engram"
    for folder in ("cli", "server", "compat", "integrations/langchain"):
        for path in (root / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "store.codec" not in text and "memory._store" not in text, path


def test_the_memory_block_says_whose_fact_as_the_context_block_does(memory, alice):
    """One renderer: the resource without a query reads like the block a prompt gets."""
    memory.remember("Works as a nurse", alice, subject="other:wife sarah", slot="job_title")
    records = list(memory.list(alice).items)
    assert memory_block(records) == "## Memories\n### Facts\n- Sarah (wife): Works as a nurse"
    assert memory.context("what does sarah do", alice).text.endswith("- Sarah (wife): Works as a nurse")
