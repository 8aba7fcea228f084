"""`engram threads list | show | search` and `engram consolidate` on a real SQLite file."""

import json

import pytest
from typer.testing import CliRunner

from engram.cli import app


@pytest.fixture
def env(tmp_path, monkeypatch):
    values = {"ENGRAM_DB": str(tmp_path / "m.db"), "ENGRAM_EMBEDDER": "fake-hash", "ENGRAM_TENANT": "acme",
              "ENGRAM_EPISODE_IDLE_MINUTES": "0.0001", "COLUMNS": "200"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def cli(*args, code=0):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, result.output
    return result.output


def test_threads_are_kept_listed_shown_searched_and_consolidated(env):
    cli("add", "--user", "alice", "--thread", "vpn", "My VPN drops every ten minutes")
    listed = json.loads(cli("threads", "list", "--user", "alice", "--json"))["items"]
    assert [(t["id"], t["turns"]) for t in listed] == [("vpn", 1)]
    assert "My VPN drops every ten minutes" in cli("threads", "show", "vpn", "--user", "alice")
    found = json.loads(cli("threads", "search", "VPN drops", "--user", "alice", "--json"))["items"]
    assert found[0]["thread_id"] == "vpn"
    assert "no past conversation matches" in cli("threads", "search", "VPN drops", "--user", "bob")
    assert "no thread 'vpn'" in cli("threads", "show", "vpn", "--user", "bob", code=3)  # not found: exit 3
    dry = cli("consolidate", "--dry-run")
    assert "would apply episode" in dry
    assert json.loads(cli("threads", "list", "--user", "alice", "--json"))["items"][0]["episode_id"] is None
    done = json.loads(cli("consolidate", "--json"))
    assert done["turns"] == 1 and done["scopes"][0]["status"] == "done"
    assert json.loads(cli("consolidate", "--json"))["scopes"][0]["status"] == "nothing"


def test_search_and_context_as_of(env):
    cli("remember", "Approval is single-level", "--user", "al")
    assert "single-level" in cli("search", "approval", "--user", "al", "--as-of", "2100-01-01")
    assert "no memories match" in cli("search", "approval", "--user", "al", "--as-of", "2000-01-01")
    assert "no relevant memories" in cli("context", "approval", "--user", "al", "--as-of", "2000-01-01")
    assert "not an ISO date" in cli("search", "approval", "--user", "al", "--as-of", "last week", code=2)
