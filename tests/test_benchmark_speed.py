"""Smoke tests of the speed benchmark on tiny corpora (fake embedder, no timing asserts)."""

from __future__ import annotations

import json
import sys

import pytest
import typer
from typer.testing import CliRunner

from engram.benchmark import corpus
from engram.benchmark.command import parse_size, register
from engram.benchmark.report import speed_markdown, speed_table
from engram.benchmark.speed import SpeedConfig, ratios, run_speed, verdict
from engram.benchmark.stats import percentile
from engram.benchmark.systems import Mem0System, PeerUnavailable, build


def test_corpus_is_deterministic_distinct_and_bilingual():
    first = corpus.user_facts(7, 300, seed=3)
    again = corpus.user_facts(7, 300, seed=3)
    assert first == again
    assert len({fact.text for fact in first}) == 300
    assert any(corpus.ZH_NAMES[0][0] <= ch <= "\u9fff" for fact in first for ch in fact.text)
    assert any(fact.text.isascii() for fact in first)
    asked = corpus.queries(3, 50, 20, seed=3)
    texts = {u: {f.text for f in corpus.user_facts(u, 50, seed=3)} for u in range(3)}
    assert all(q.target in texts[int(q.user[4:])] for q in asked)


def test_percentile_interpolates():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 99) == 5
    assert percentile(list(range(101)), 95) == 95


def test_parse_size_accepts_suffixes():
    assert parse_size("10k") == 10_000
    assert parse_size("1M") == 1_000_000
    assert parse_size("2,500") == 2_500
    with pytest.raises(typer.BadParameter):
        parse_size("lots")


def test_engram_alone_on_a_tiny_corpus():
    config = SpeedConfig(sizes=(60,), per_user=20, batch=10, queries=6, systems=("engram",), embedder="fake-hash")
    results = run_speed(config)
    (run,) = results["runs"]
    engram = run["systems"]["engram"]
    assert engram["status"] == "ok"
    assert engram["write"]["memories"] == 60
    assert engram["search"]["count"] == 6
    assert 0.0 <= engram["search"]["hit_at_k"] <= 1.0
    assert engram["disk_bytes"] > 0
    assert {"baseline", "after_load", "after_search"} <= set(engram["rss_mb"])
    assert "write_per_s" in results["verdict"]
    assert "60 memories" in speed_markdown(results)
    json.dumps(results)  # JSON-ready


def test_langgraph_peer_runs_side_by_side():
    pytest.importorskip("langgraph.store.memory")
    config = SpeedConfig(sizes=(40,), per_user=20, batch=10, queries=4, systems=("engram", "langgraph-memory"),
                         embedder="fake-hash")
    (run,) = run_speed(config)["runs"]
    assert run["systems"]["langgraph-memory"]["status"] == "ok", run["systems"]["langgraph-memory"]
    assert set(ratios(run)) == {"langgraph-memory"}
    speed_table(run)


def test_a_missing_peer_is_reported_not_fatal(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "mem0", None)  # import mem0 now fails as if not installed
    with pytest.raises(PeerUnavailable, match="pip install mem0ai"):
        Mem0System(tmp_path, None)
    with pytest.raises(ValueError, match="unknown system"):
        build("nope", tmp_path, None)


def test_verdict_reads_the_100k_run():
    run = {"size": 100_000, "systems": {"engram": {"search": {"p50_ms": 8.0, "p95_ms": 30.0},
                                                   "write": {"per_s": 1200.0}}}}
    found = verdict([run])
    assert found["search_met"] is False and found["write_met"] is True


def test_cli_bench_writes_json(tmp_path):
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # a second command keeps `bench` a subcommand
    out = tmp_path / "speed.json"
    result = CliRunner().invoke(app, ["bench", "--sizes", "40", "--per-user", "20", "--batch", "10", "--queries", "3",
                                      "--systems", "engram", "--embedder", "fake-hash", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["runs"][0]["systems"]["engram"]["status"] == "ok"


def test_many_users_workload_times_cold_scopes_beside_the_numpy_floor():
    long = corpus.long_facts(2, 200, seed=1)
    assert len({fact.text for fact in long}) == 200 and all(fact.text.isascii() for fact in long)
    assert 80 <= sum(len(fact.text) for fact in long) / len(long) <= 120
    config = SpeedConfig(sizes=(60,), per_user=20, batch=10, queries=8, systems=("engram", "numpy-exact"),
                         embedder="fake-hash", workload=corpus.MANY_USERS)
    results = run_speed(config)
    (run,) = results["runs"]
    for name in ("engram", "numpy-exact"):
        system = run["systems"][name]
        assert system["status"] == "ok", system
        assert system["search"]["count"] == 8
        # no warm-up: the first query of each user asked is timed apart as cold
        users_asked = {q.user for q in corpus.workload_queries(corpus.MANY_USERS, 3, 20, 8, seed=0)}
        assert system["cold_search"]["count"] == len(users_asked)
        # each search's CPU time beside its wall time, cold and warm apart too
        assert system["search_cpu"]["count"] == 8
        assert system["cold_search_cpu"]["count"] + system["warm_search_cpu"]["count"] == 8
        assert 0.0 <= system["search_cpu"]["p50_ms"] < float("inf")
    markdown = speed_markdown(results)
    assert "cold p50 / p95 ms" in markdown and "CPU p50 / p95 ms" in markdown
