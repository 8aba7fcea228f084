"""bench/cv_joint.py: one setting for every dataset, chosen leaving one unit out."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cv_joint", ROOT / "bench" / "cv_joint.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def write(path: Path, dataset: str, rows: list[tuple[str, str, dict[str, float]]], **extra) -> str:
    """rows: (query id, category, {candidate: recall@5})."""
    per_query = [{"id": qid, "category": cat, "retrievers": {c: {"metrics": {"recall@5": v}} for c, v in got.items()}}
                 for qid, cat, got in rows]
    path.write_text(json.dumps({"dataset": dataset, "per_query": per_query, **extra}), encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path):
    # "sharp" is best on MADial and poor on LoCoMo; "even" is good enough on both
    madial = write(tmp_path / "madial.json", "madial", [
        ("u1-a", "user 1", {"sharp": 1.0, "even": 0.7, "base": 0.5}),
        ("u1-b", "user 1", {"sharp": 1.0, "even": 0.7, "base": 0.5}),
        ("u2-a", "user 2", {"sharp": 1.0, "even": 0.7, "base": 0.5}),
    ], language="zh")
    locomo = write(tmp_path / "locomo.json", "locomo", [
        ("conv-1/q1", "single-hop", {"sharp": 0.5, "even": 0.7, "base": 0.6}),
        ("conv-2/q1", "single-hop", {"sharp": 0.5, "even": 0.7, "base": 0.6}),
    ])
    return [madial, locomo]


def test_the_mean_rule_takes_the_best_mean_over_datasets(files):
    tool = load_tool()
    scores, units = tool.load(files)
    report = tool.cross_validate(scores, units, tool.Chooser(scores, units, "mean", None, {}))
    assert report["chosen_on_all_data"] == "sharp"  # (1.0 + 0.5) / 2 > (0.7 + 0.7) / 2
    assert report["objective_all_data"]["sharp"] == pytest.approx(0.75)
    assert report["targets"]["madial zh recall@5"]["candidates"]["base"]["all"] == pytest.approx(0.5)


def test_the_targets_rule_refuses_a_setting_below_the_baseline_anywhere(files):
    tool = load_tool()
    scores, units = tool.load(files)
    chooser = tool.Chooser(scores, units, "targets", "base", {"madial": 0.65})
    report = tool.cross_validate(scores, units, chooser)
    assert report["chosen_on_all_data"] == "even"  # sharp is below base on LoCoMo
    assert report["shortfall_all_data"]["sharp"] == pytest.approx(0.1)
    assert report["shortfall_all_data"]["base"] == pytest.approx(0.15)  # under the MADial floor
    assert {fold["chosen"] for fold in report["folds"]} == {"even"}
    assert report["targets"]["locomo recall@5"]["cv"] == {"mean": 0.7, "min": 0.7, "max": 0.7}


def test_a_held_out_unit_leaves_every_target_of_its_dataset(tmp_path):
    tool = load_tool()
    rows = [{"id": f"q{i}", "category": "x", "retrievers": {"a": {"metrics": {
        "session": {"recall_all@5": 1.0}, "turn": {"recall_all@5": float(i % 2)}}}}} for i in range(10)]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps({"dataset": "longmemeval", "per_query": rows}), encoding="utf-8")
    scores, units = tool.load([str(path)])
    assert set(scores) == {"longmemeval session.recall_all@5", "longmemeval turn.recall_all@5"}
    session, turn = (units[t] for t in sorted(units))
    assert session == turn and len(set(session.values())) == 5
    held = session["q0"]
    chooser = tool.Chooser(scores, units, "mean", None, {})
    trained = chooser.train_means("a", held)
    assert trained["longmemeval turn.recall_all@5"] == pytest.approx(4 / 8)  # q0 and q5 left out of both


def test_prefixed_files_join_as_candidates_of_their_own(files, tmp_path):
    tool = load_tool()
    scores, _ = tool.load([*files, *(f"other::{f}" for f in files)])
    assert {"sharp", "other sharp", "base", "other base"} <= set(scores["locomo recall@5"])
