"""The CLI's surface (issue 23): option names that never collide, `-` for standard
input and output, `search -k`, a command that edits a memory, id prefixes wherever an
id is taken, `--json` in the HTTP API's shapes, and an import whose progress follows
the writing."""

import io
import json

import pytest
import typer
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from engram import FakeHashEmbedder, Memory, Scope
from engram.approval_rules import ApprovalRules
from engram.cli import app
from engram.server.http import create_app

runner = CliRunner()
ORG = Scope("acme", ("orgs", "acme"))
APPROVALS = '{"rules": [{"name": "org", "namespaces": ["orgs/*"]}]}'


@pytest.fixture
def env(tmp_path, monkeypatch):
    for name, value in {"ENGRAM_DB": str(tmp_path / "m.db"), "ENGRAM_EMBEDDER": "fake-hash", "ENGRAM_TENANT": "acme",
                        "ENGRAM_APPROVALS": APPROVALS, "ENGRAM_REVIEWER": "maria", "COLUMNS": "200"}.items():
        monkeypatch.setenv(name, value)
    return tmp_path


def cli(*args, code=0, stdin=None):
    result = runner.invoke(app, list(args), input=stdin)
    assert result.exit_code == code, (args, result.output)
    return result.stdout


def _commands(group, path=()):
    for name, command in group.commands.items():  # typer's groups keep their commands in .commands
        if getattr(command, "commands", None) is not None:
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


def test_no_command_has_two_options_of_one_name():
    clashes, seen_commands = {}, []
    for path, command in _commands(typer.main.get_command(app)):
        seen_commands.append(" ".join(path))
        seen: dict[str, str] = {}
        for param in command.params:
            for flag in [*param.opts, *param.secondary_opts]:
                if flag in seen and seen[flag] != param.name:
                    clashes[" ".join(path)] = flag
                seen[flag] = param.name
    assert clashes == {}
    assert {"consolidate", "quality report", "approvals show", "threads search", "keys reveal"} <= set(seen_commands)


def test_consolidate_agent_names_a_scope_and_llm_agent_the_mode(env):
    cli("remember", "seed", "--user", "ana")
    with Memory.open(str(env / "m.db"), embedder=FakeHashEmbedder()) as memory:
        memory.threads.record(["I moved to Porto last spring"], Scope.for_agent("acme", "helper"), thread_id="t1")
    dry = json.loads(cli("consolidate", "--agent", "helper", "--dry-run", "--json"))
    assert [s["namespace"] for s in dry["scopes"]] == [["agents", "helper"]]  # not agents/--dry-run
    with Memory.open(str(env / "m.db"), embedder=FakeHashEmbedder()) as memory:
        assert memory.list(Scope.for_agent("acme", "helper")).items == ()  # a dry run wrote nothing
    assert "--llm-agent" in cli("consolidate", "--help")


def test_dash_is_standard_input_and_output(env):
    created = json.loads(cli("remember", "-", "--user", "ana", "--json", stdin="Prefers tea over coffee\n"))
    assert created["content"] == "Prefers tea over coffee"
    dump = cli("export", "-", "--user", "ana")
    assert not (env / "-").exists() and json.loads(dump.splitlines()[1])["record"]["content"] == created["content"]
    other = env / "other.db"
    imported = json.loads(cli("import", "-", "--db", str(other), "--json", stdin=dump))
    assert imported == {"imported": 1, "skipped": 0, "tenant": "acme"}
    assert json.loads(cli("show", created["id"], "--db", str(other), "--json"))["content"] == created["content"]


def test_search_takes_k_short_and_long(env):
    for text in ("tea at nine", "tea at ten", "tea at noon"):
        cli("remember", text, "--user", "ana")
    assert len(json.loads(cli("search", "tea", "--user", "ana", "-k", "2", "--json"))["hits"]) == 2
    assert len(json.loads(cli("search", "tea", "--user", "ana", "--k", "1", "--json"))["hits"]) == 1


def test_update_edits_a_memory_by_prefix(env):
    record = json.loads(cli("remember", "Likes tea", "--user", "ana", "--json"))
    updated = json.loads(cli("update", record["id"][:10], "--content", "Likes green tea", "--importance", "0.9",
                             "--tag", "drinks", "--pin", "--reason", "said so", "--json"))
    assert (updated["content"], updated["importance"], updated["tags"], updated["pinned"], updated["version"]) == (
        "Likes green tea", 0.9, ["drinks"], True, 2)
    history = json.loads(cli("history", record["id"], "--json"))["items"]
    assert [v["operation"] for v in history] == ["create", "update"] and history[1]["reason"] == "said so"
    cli("update", record["id"], "--content", "x", "--expected-version", "1", code=4)  # it is at version 2
    cli("update", record["id"], code=2)  # nothing to change
    assert json.loads(cli("update", record["id"], "--content", "-", "--json", stdin="Likes oolong\n"))["content"] \
        == "Likes oolong"


def test_audit_why_and_approvals_take_prefixes(env):
    record = json.loads(cli("remember", "Likes tea", "--user", "ana", "--json"))
    assert json.loads(cli("audit", "why", record["id"][:9], "--json"))["record"]["id"] == record["id"]
    cli("remember", "Offices close at 6pm", "--ns", "orgs", "--ns", "acme", code=7)
    cli("remember", "Fridays off", "--ns", "orgs", "--ns", "acme", code=7)
    first, second = (p["id"] for p in json.loads(cli("approvals", "list", "--json"))["items"])
    assert json.loads(cli("approvals", "show", first[:12]))["id"] == first
    written = json.loads(cli("approvals", "approve", first[:12], "--json"))["items"]
    assert written[0]["content"] == "Offices close at 6pm"
    assert json.loads(cli("approvals", "reject", second[:12], "--reason", "no", "--json"))["status"] == "rejected"
    cli("approvals", "show", "0000", code=3)  # shorter than a prefix may be


def test_json_is_the_http_shape(env, monkeypatch):
    monkeypatch.setenv("ENGRAM_ENCRYPTION_KEY", Fernet.generate_key().decode())
    cli("remember", "Offices close at 6pm", "--ns", "orgs", "--ns", "acme", code=7)
    with Memory.open(str(env / "m.db"), embedder=FakeHashEmbedder(), approvals=ApprovalRules.load(APPROVALS)) as mem:
        client = TestClient(create_app(mem, api_keys=None, tenant="acme", ui=False))
        over_http = {"approvals": client.get("/v1/approvals").json(), "quality": client.get("/v1/quality").json()}
    assert json.loads(cli("approvals", "list", "--json")) == over_http["approvals"]
    report = json.loads(cli("quality", "report", "--json"))
    assert _shape(report) == _shape(over_http["quality"])
    assert report["approvals"]["pending"] == over_http["quality"]["approvals"]["pending"] == 1
    status = json.loads(cli("keys", "status", "--json"))
    assert set(status) == {"tenant", "keys", "records", "values", "unreadable"}
    assert "{" not in cli("keys", "status")  # a table, not a Python dict


def _shape(value):
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    return type(value).__name__ if value is not None else None


def test_import_progress_follows_the_writing(tmp_path):
    with Memory.open(str(tmp_path / "a.db"), embedder=FakeHashEmbedder()) as source:
        source.remember_many([f"fact {i}" for i in range(600)], Scope("acme"))
        dump = io.StringIO()
        source.transfer.export_to(dump, Scope("acme"))
    seen: list[tuple[int, int]] = []
    with Memory.open(str(tmp_path / "b.db"), embedder=FakeHashEmbedder()) as target:
        result = target.transfer.import_from(io.StringIO(dump.getvalue()),
                                             progress=lambda done, total: seen.append((done, total)))
        assert result.imported == 600 and target.stats().records == 600
    assert seen == [(256, 600), (512, 600), (600, 600), (600, 600)]  # three batches embedded, then written
