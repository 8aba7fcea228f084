"""The CLI is thin: each command calls one public method; errors map to exit codes."""

import json

import pytest
from typer.testing import CliRunner

from engram.cli import app

runner = CliRunner()


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_DB", str(tmp_path / "cli.db"))
    monkeypatch.setenv("ENGRAM_EMBEDDER", "fake-hash")
    monkeypatch.setenv("ENGRAM_TENANT", "acme")
    return tmp_path


def invoke(*args: str):
    result = runner.invoke(app, list(args))
    return result


def test_remember_search_show_history_forget(env):
    created = invoke("remember", "Prefers concise reports", "--user", "alice", "--kind", "preference", "--json")
    assert created.exit_code == 0, created.output
    record_id = json.loads(created.stdout)["id"]
    found = invoke("search", "concise reports", "--user", "alice", "--json")
    hits = json.loads(found.stdout)["hits"]
    assert [h["record"]["id"] for h in hits] == [record_id] and hits[0]["signals"]["lexical"] == 1.0
    assert json.loads(invoke("search", "concise", "--user", "bob", "--json").stdout) == {"hits": []}
    assert json.loads(invoke("show", record_id, "--json").stdout)["content"] == "Prefers concise reports"
    assert invoke("forget", record_id, "--reason", "asked").exit_code == 0
    versions = json.loads(invoke("history", record_id, "--json").stdout)["items"]
    assert [v["operation"] for v in versions] == ["create", "forget"]
    assert versions[1]["reason"] == "asked"


def test_export_import_list_stats(env):
    invoke("remember", "fact one", "--user", "alice")
    invoke("remember", "fact two", "--user", "alice")
    dump = env / "dump.jsonl"
    assert invoke("export", str(dump)).exit_code == 0
    other = env / "other.db"
    imported = runner.invoke(app, ["import", str(dump), "--db", str(other)])
    assert imported.exit_code == 0 and "imported 2" in imported.stdout
    listing = json.loads(runner.invoke(app, ["list", "--user", "alice", "--json", "--db", str(other)]).stdout)
    assert sorted(r["content"] for r in listing["items"]) == ["fact one", "fact two"]
    stats = json.loads(invoke("stats", "--json").stdout)
    assert stats["records"] == 2 and stats["versions"] == 2 and "path" in stats["extra"]


@pytest.mark.parametrize(
    "args, code",
    [
        (("remember", "", "--user", "alice"), 2),
        (("remember", "x", "--kind", "opinion"), 2),
        (("remember", "x", "--importance", "7"), 2),
        (("remember", "x", "--ns", ""), 2),
        (("show", "no-such-id"), 3),
        (("purge", "--yes"), 2),
    ],
)
def test_errors_have_clear_messages_and_exit_codes(env, args, code):
    result = invoke(*args)
    assert result.exit_code == code, result.output
    if code != 2 or args[0] != "purge":
        assert "error" in result.output.lower()


def test_import_of_a_malformed_file_names_the_line(env):
    bad = env / "bad.jsonl"
    bad.write_text('{"format": "engram.export", "version": 1, "tenant": "acme"}\nnot json\n')
    result = invoke("import", str(bad))
    assert result.exit_code == 2 and "line 2" in result.output


def test_a_foreign_database_is_refused(env, tmp_path):
    foreign = tmp_path / "foreign.db"
    foreign.write_text("hello")
    result = runner.invoke(app, ["stats", "--db", str(foreign)])
    assert result.exit_code == 6 and "NotAnEngramDatabaseError" in result.output


def test_demo_plays_the_whole_scenario_offline(tmp_path, monkeypatch):
    monkeypatch.delenv("ENGRAM_EMBEDDER", raising=False)
    result = runner.invoke(app, ["demo", "--db", str(tmp_path / "demo.db")])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "用户名叫张三" in out and "用户喜欢简洁的报告" in out and "三级审批流程" in out
    assert "李四看不到张三的记忆" in out
    for heading in ("对话 1（会话 t1）", "之后的另一段对话", "同一租户的另一位用户", "公司更改了审批流程", "要求忘记"):
        assert heading in out  # the Chinese demo speaks Chinese
    assert not any(english in out for english in ("conversation 1", "another user", "context after forget"))
    assert "SUPERSEDE" in out  # the two-level flow ends the three-level one (the reason names what it ends)
    after_change = out.split("公司更改了审批流程")[1].split("要求忘记")[0]
    assert "两级审批流程" in after_change and "三级审批流程" not in after_change.split("context()")[1]
    assert "forget" in out and "deleted" in out
