"""``engram eval outcome``: the scenarios and fresh utterances through the product, summarised.

Every scenario runs in a SQLite file of its own (a fresh store, the product's
default settings unless ``settings`` overrides them) with a ``FakeClock`` at the
scenario's days; the embedder is loaded once. Results per probe and per item are
written with the summaries, so every miss can be read back.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...clock import FakeClock
from ...config import Settings
from ...embed import Embedder, make_embedder
from ...memory import Memory
from .play import DEFAULT_BUDGET, MODES, START, Mode, ProbeResult, play
from .scenarios import DATA, LANGUAGES, PROBE_KINDS, SPLITS, Scenario, load_scenarios
from .utterances import ItemResult, load_everyday, load_utterances, run_everyday, run_set

Progress = Callable[[str, int], Callable[[int], None]]
EVERYDAY = "everyday-requests.jsonl"  # requests that must never retire a memory (both languages, one file)


@dataclass(frozen=True, slots=True)
class OutcomeConfig:
    splits: tuple[str, ...] = SPLITS
    languages: tuple[str, ...] = LANGUAGES
    modes: tuple[Mode, ...] = MODES
    budget_tokens: int = DEFAULT_BUDGET
    utterances: bool = True
    settings: Mapping[str, Any] = field(default_factory=dict)  # Settings overrides
    data: Path | None = None  # default: the scenarios shipped with engram
    out: Path | None = None


def run_outcome(config: OutcomeConfig, *, progress: Progress | None = None,
                embedder: Embedder | None = None) -> dict[str, Any]:
    settings = Settings(**{"record_recalls": False, **config.settings})
    embedder = embedder or make_embedder(settings.embedder)
    scenarios = load_scenarios(config.splits, config.languages, config.data)
    probes: list[ProbeResult] = []
    with tempfile.TemporaryDirectory(prefix="engram-outcome-") as folder:
        for mode in config.modes:
            advance = _bar(progress, f"scenarios, facts {mode}", len(scenarios))
            for scenario in scenarios:
                probes += _play_one(Path(folder), scenario, mode, settings, embedder, config.budget_tokens)
                advance(1)
        items = _utterance_items(Path(folder), config, settings, embedder, progress) if config.utterances else []
    results = {
        "settings": dict(config.settings), "budget_tokens": config.budget_tokens, "embedder": embedder.name,
        "scenarios": len(scenarios), "summary": summarize(probes), "by_kind": summarize(probes, by_kind=True),
        "utterances": summarize_items(items),
        "probes": [asdict(p) for p in probes], "items": [asdict(i) for i in items],
    }
    if config.out is not None:
        _write_atomic(config.out, results)
    return results


def _bar(progress: Progress | None, label: str, total: int) -> Callable[[int], None]:
    return progress(label, total) if progress is not None else (lambda n: None)


def _play_one(folder: Path, scenario: Scenario, mode: Mode, settings: Settings, embedder: Embedder,
              budget: int) -> list[ProbeResult]:
    clock = FakeClock(START)
    path = folder / f"{scenario.id}-{mode}.db"
    with Memory.open(str(path), embedder=embedder, settings=settings, clock=clock) as memory:
        return play(memory, clock, scenario, mode, budget_tokens=budget)


def _utterance_items(folder: Path, config: OutcomeConfig, settings: Settings, embedder: Embedder,
                     progress: Progress | None) -> list[ItemResult]:
    root = config.data or DATA
    files = [root / split / f"{split}-{lang}-utterances.json" for split in config.splits for lang in config.languages]
    files = [f for f in files if f.exists()]
    sets = [(f.name.removesuffix("-utterances.json"), load_utterances(f)) for f in files]
    everyday_file = root / EVERYDAY
    everyday = [r for r in load_everyday(everyday_file) if r.lang in config.languages] \
        if everyday_file.exists() else []
    advance = _bar(progress, "fresh utterances", sum(len(s.utterances) + len(s.changes) + len(s.forgets)
                                                      for _, s in sets) + len(everyday))
    items: list[ItemResult] = []
    for name, utterance_set in sets:
        clock = FakeClock(START)
        with Memory.open(str(folder / f"{name}-utterances.db"), embedder=embedder, settings=settings,
                         clock=clock) as memory:
            for item in run_set(memory, clock, name, utterance_set):
                items.append(item)
                advance(1)
    for lang in config.languages:
        requests = [r for r in everyday if r.lang == lang]
        if not requests:
            continue
        clock = FakeClock(START)
        with Memory.open(str(folder / f"everyday-{lang}.db"), embedder=embedder, settings=settings,
                         clock=clock) as memory:
            for item in run_everyday(memory, clock, f"everyday-{lang}", requests):
                items.append(item)
                advance(1)
    return items


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _probe_figures(group: Sequence[ProbeResult]) -> dict[str, Any]:
    needed_share = [len(p.found) / len(p.needed) for p in group]
    by_scenario: dict[str, list[float]] = {}
    for p, share in zip(group, needed_share):
        by_scenario.setdefault(p.scenario, []).append(share)
    per_scenario = [sum(v) / len(v) for v in by_scenario.values()]
    stale_total = sum(p.stale_total for p in group)
    return {
        "probes": len(group),
        "needed_in_block": _mean(needed_share),
        "all_needed": _mean(float(len(p.found) == len(p.needed)) for p in group),
        "stale_or_false": _mean(float(bool(p.forbidden_in_block)) for p in group),
        "empty_block": _mean(float(p.empty) for p in group),
        "tokens": _mean(p.tokens for p in group),
        "stored": _mean(len(p.stored) / len(p.needed) for p in group),
        "stale_active": sum(len(p.stale_active) for p in group) / stale_total if stale_total else None,
        "junk_lines": _share(sum(len(p.junk_in_block) for p in group), sum(len(p.block) for p in group)),
        "junk_stored": _share(sum(p.junk_active for p in group), sum(p.active_total for p in group)),
        "retired_needed": _share(sum(len(p.retired_needed) for p in group), sum(len(p.needed) for p in group)),
        "others_as_user": _mean(float(bool(p.others_as_user)) for p in group),
        "scenario_sd": statistics.pstdev(per_scenario) if len(per_scenario) > 1 else 0.0,
        "scenario_min": min(per_scenario),
    }


def summarize(probes: Sequence[ProbeResult], *, by_kind: bool = False) -> dict[str, dict[str, Any]]:
    """Figures per ``split/language/mode`` (and ``/kind`` when ``by_kind``)."""
    groups: dict[str, list[ProbeResult]] = {}
    for p in probes:
        key = f"{p.split}/{p.language}/{p.mode}" + (f"/{p.kind}" if by_kind else "")
        groups.setdefault(key, []).append(p)
    order = {kind: i for i, kind in enumerate(PROBE_KINDS)}
    keys = sorted(groups, key=lambda k: (k.rsplit("/", 1)[0], order.get(k.rsplit("/", 1)[1], 0)) if by_kind else k)
    return {key: _probe_figures(groups[key]) for key in keys}


def summarize_items(items: Sequence[ItemResult]) -> dict[str, dict[str, Any]]:
    """Precision and recall of the single utterances, changes and forgets reconciled, per set."""
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(i.set for i in items):
        mine = [i for i in items if i.set == name]
        said = [i for i in mine if i.part == "utterance"]
        memories = [i for i in said if i.label == "memory"]
        true_positive = sum(i.ok for i in memories)
        false_positive = sum(not i.ok for i in said if i.label != "memory")
        changes = [i for i in mine if i.part == "change"]
        forgets = [i for i in mine if i.part == "forget"]
        everyday = [i for i in mine if i.part == "everyday"]
        out[name] = {
            "utterances": len(said),
            "precision": true_positive / (true_positive + false_positive) if true_positive + false_positive else None,
            "recall": true_positive / len(memories) if memories else None,
            "false_memories": false_positive,
            "changes_ok": sum(i.ok for i in changes), "changes": len(changes),
            "supersede_ok": sum(i.ok for i in changes if i.label == "supersede"),
            "refine_ok": sum(i.ok for i in changes if i.label == "refine"),
            "forgets_ok": sum(i.ok for i in forgets), "forgets": len(forgets),
            "everyday": len(everyday), "everyday_retiring": sum(not i.ok for i in everyday),
        }
    return out


def _write_atomic(path: Path, results: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(temporary, path)
