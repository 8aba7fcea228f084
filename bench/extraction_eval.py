"""Measure the embedded rule extractor.

    python bench/extraction_eval.py --labelled tests/data/extraction_labelled.jsonl \
        --locomo ../shared/bench/locomo/locomo_dev.json [--out result.json]

1. Labelled set: precision, recall and F1 per language and per kind, after the
   gate (confidence >= 0.7, importance >= 0.3). A candidate matches an expected
   item of the same utterance when the kinds are equal, every key term occurs in
   its content (case-insensitive) and none of the item's ``absent_terms`` does
   (a leaked "另外" or "Actually"; Latin terms as whole words); each side
   matches at most once. Where an item names a ``category`` (the slot a change
   of the fact must land in for reconcile to supersede it: identity:name,
   location:residence, work:employer, business_rule:approval, ...), the share of
   matched items whose candidate has that category is reported as slot
   agreement. Rows may carry a ``split``; ``--split`` scores one of them alone.
2. LoCoMo ``observation`` coverage: every session of every conversation goes
   through the extractor (each speaker's turns as "user" messages carrying the
   speaker's name). A gold observation is covered at turn level when some
   candidate came from its evidence turn, and lexically when some candidate of
   the same session has token F1 >= 0.5 with it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engram.errors import BenchmarkDataError
from engram.model import Message
from engram.pipeline.candidate import Candidate
from engram.pipeline.rules import RuleExtractor

GATE_CONFIDENCE = 0.7
GATE_IMPORTANCE = 0.3
LEXICAL_F1 = 0.5


@dataclass(frozen=True, slots=True)
class Expected:
    kind: str
    key_terms: tuple[str, ...]
    category: str | None = None  # the slot, when the row says which
    absent_terms: tuple[str, ...] = ()  # words that must not leak into the content


@dataclass(frozen=True, slots=True)
class Labelled:
    id: str
    lang: str
    text: str
    expected: tuple[Expected, ...]
    split: str | None = None


@dataclass(slots=True)
class Tally:
    predicted: int = 0
    expected: int = 0
    true_positive: int = 0

    @property
    def precision(self) -> float:
        return self.true_positive / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.true_positive / self.expected if self.expected else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "precision": self.precision, "recall": self.recall, "f1": self.f1}


@dataclass(slots=True)
class Slots:
    """Matched items that name a category, and how many of them the candidate put there."""

    labelled: int = 0
    agreed: int = 0

    @property
    def agreement(self) -> float:
        return self.agreed / self.labelled if self.labelled else 1.0

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "agreement": self.agreement}


@dataclass(slots=True)
class LabelledScore:
    overall: Tally = field(default_factory=Tally)
    by_lang: dict[str, Tally] = field(default_factory=dict)
    by_kind: dict[str, Tally] = field(default_factory=dict)
    by_lang_kind: dict[str, dict[str, Tally]] = field(default_factory=dict)
    slots: Slots = field(default_factory=Slots)
    slots_by_lang: dict[str, Slots] = field(default_factory=dict)
    misses: list[dict[str, Any]] = field(default_factory=list)  # what went wrong, for reading


def load_labelled(path: Path) -> list[Labelled]:
    rows: list[Labelled] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                expected = tuple(
                    Expected(e["kind"], tuple(e["key_terms"]), e.get("category"), tuple(e.get("absent_terms", ())))
                    for e in raw["expected"]
                )
                rows.append(Labelled(raw["id"], raw["lang"], raw["text"], expected, raw.get("split")))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise BenchmarkDataError(f"{path}:{number}: not a labelled utterance ({exc})") from exc
    return rows


def passes_gate(candidate: Candidate) -> bool:
    return candidate.confidence >= GATE_CONFIDENCE and candidate.importance >= GATE_IMPORTANCE


def _contains(content: str, term: str) -> bool:
    term = term.casefold()
    if term.isascii() and re.fullmatch(r"[\w' ]+", term):
        return re.search(rf"(?<!\w){re.escape(term)}(?!\w)", content) is not None
    return term in content


def matches(candidate: Candidate, expected: Expected) -> bool:
    content = candidate.content.casefold()
    return (
        candidate.kind.value == expected.kind
        and all(term.casefold() in content for term in expected.key_terms)
        and not any(_contains(content, term) for term in expected.absent_terms)
    )


def pair_up(candidates: Sequence[Candidate], expected: Sequence[Expected]) -> list[tuple[int, int]]:
    """Greedy one-to-one matching of expected items to candidates."""
    used: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for e_index, item in enumerate(expected):
        for c_index, candidate in enumerate(candidates):
            if c_index not in used and matches(candidate, item):
                used.add(c_index)
                pairs.append((c_index, e_index))
                break
    return pairs


def score_labelled(rows: Iterable[Labelled], extractor: RuleExtractor | None = None) -> LabelledScore:
    extractor = extractor or RuleExtractor()
    score = LabelledScore()
    for row in rows:
        found = [c for c in extractor.extract([Message("user", row.text, id=row.id)]) if passes_gate(c)]
        pairs = pair_up(found, row.expected)
        lang = score.by_lang.setdefault(row.lang, Tally())
        for tally in (score.overall, lang):
            tally.predicted += len(found)
            tally.expected += len(row.expected)
            tally.true_positive += len(pairs)
        kinds = score.by_lang_kind.setdefault(row.lang, {})
        for candidate in found:
            for table in (score.by_kind, kinds):
                table.setdefault(candidate.kind.value, Tally()).predicted += 1
        for item in row.expected:
            for table in (score.by_kind, kinds):
                table.setdefault(item.kind, Tally()).expected += 1
        slot_misses = []
        for c_index, e_index in pairs:
            item = row.expected[e_index]
            score.by_kind[item.kind].true_positive += 1
            kinds[item.kind].true_positive += 1
            if item.category is not None:
                agreed = found[c_index].category == item.category
                for slots in (score.slots, score.slots_by_lang.setdefault(row.lang, Slots())):
                    slots.labelled += 1
                    slots.agreed += agreed
                if not agreed:
                    slot_misses.append((item.category, found[c_index].category))
        if len(pairs) < max(len(found), len(row.expected)) or slot_misses:
            score.misses.append(
                {
                    "id": row.id,
                    "text": row.text,
                    "expected": [asdict(e) for e in row.expected],
                    "found": [(c.kind.value, c.content, c.confidence, c.category) for c in found],
                    "slot_misses": slot_misses,
                }
            )
    return score


# --- LoCoMo observations ----------------------------------------------------------------

_SESSION = re.compile(r"^session_(\d+)$")
_TOKEN = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an the and or but of to in on at for with from by about as is are was were be been being it its this that"
    " these those he she they them his her their i me my we our you your has have had do does did so very really"
    " also just not no can will would could should there here what which who when where how than then too".split()
)


def tokens(text: str) -> Counter[str]:
    return Counter(t for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS)


def token_f1(left: str, right: str) -> float:
    a, b = tokens(left), tokens(right)
    common = sum((a & b).values())
    if not common:
        return 0.0
    precision, recall = common / sum(b.values()), common / sum(a.values())
    return 2 * precision * recall / (precision + recall)


def evidence_ids(raw: Any) -> list[str]:
    """Evidence turn ids; upstream sometimes packs several into one string ("D8:6; D9:17")."""
    items = raw if isinstance(raw, list) else [raw]
    ids: list[str] = []
    for item in items:
        ids.extend(part.strip() for part in re.split(r"[;,]", str(item)) if re.fullmatch(r"D\d+:\d+", part.strip()))
    return ids


@dataclass(slots=True)
class Coverage:
    facts: int = 0
    turn_raw: int = 0
    turn_gated: int = 0
    lexical_gated: int = 0
    candidates_raw: int = 0
    candidates_gated: int = 0
    gated_on_evidence_turn: int = 0
    turns: int = 0

    def add(self, other: Coverage) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, float]:
        def share(n):
            return (n / self.facts if self.facts else 0.0)
        return {
            **asdict(self),
            "turn_coverage_raw": share(self.turn_raw),
            "turn_coverage_gated": share(self.turn_gated),
            "lexical_coverage_gated": share(self.lexical_gated),
            "gated_on_evidence_turn_share": (
                self.gated_on_evidence_turn / self.candidates_gated if self.candidates_gated else 0.0
            ),
        }


def session_coverage(
    turns: Sequence[dict[str, Any]], observations: dict[str, Any], extractor: RuleExtractor
) -> Coverage:
    messages = [Message("user", t.get("text", ""), id=t["dia_id"], name=t.get("speaker")) for t in turns]
    raw = extractor.extract(messages)
    gated = [c for c in raw if passes_gate(c)]
    raw_turns = {turn for c in raw for turn in c.source_message_ids}
    gated_turns = {turn for c in gated for turn in c.source_message_ids}
    result = Coverage(candidates_raw=len(raw), candidates_gated=len(gated), turns=len(turns))
    evidence_turns: set[str] = set()
    for facts in observations.values():
        for fact, raw_evidence in facts:
            ids = set(evidence_ids(raw_evidence))
            evidence_turns |= ids
            result.facts += 1
            result.turn_raw += bool(ids & raw_turns)
            result.turn_gated += bool(ids & gated_turns)
            result.lexical_gated += any(token_f1(fact, c.content) >= LEXICAL_F1 for c in gated)
    result.gated_on_evidence_turn = sum(1 for c in gated if evidence_turns & set(c.source_message_ids))
    return result


def locomo_coverage(path: Path, extractor: RuleExtractor | None = None) -> dict[str, Coverage]:
    extractor = extractor or RuleExtractor()
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BenchmarkDataError(f"cannot read LoCoMo file {path}: {exc}") from exc
    per_conversation: dict[str, Coverage] = {}
    for sample in samples:
        total = Coverage()
        conversation, observation = sample["conversation"], sample.get("observation", {})
        for key, turns in conversation.items():
            if _SESSION.match(key) and isinstance(turns, list):
                total.add(session_coverage(turns, observation.get(f"{key}_observation", {}), extractor))
        per_conversation[str(sample.get("sample_id", len(per_conversation)))] = total
    return per_conversation


# --- report ---------------------------------------------------------------------------


def _pct(value: float) -> str:
    return f"{value:.3f}"


def print_report(score: LabelledScore, coverage: dict[str, Coverage] | None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=max(100, Console().width))
    gate = f"confidence >= {GATE_CONFIDENCE}, importance >= {GATE_IMPORTANCE}"
    table = Table(title=f"Labelled set after the gate ({gate})")
    for column in ("slice", "expected", "predicted", "TP", "precision", "recall", "F1"):
        table.add_column(column, justify="left" if column == "slice" else "right")
    slices = [("all", score.overall)] + [(f"lang={k}", v) for k, v in sorted(score.by_lang.items())]
    slices += [(f"kind={k}", v) for k, v in sorted(score.by_kind.items())]
    for name, tally in slices:
        table.add_row(name, str(tally.expected), str(tally.predicted), str(tally.true_positive),
                      _pct(tally.precision), _pct(tally.recall), _pct(tally.f1))
    console.print(table)
    for lang, kinds in sorted(score.by_lang_kind.items()):
        table = Table(title=f"lang={lang} by kind")
        for column in ("kind", "expected", "predicted", "TP", "precision", "recall", "F1"):
            table.add_column(column, justify="left" if column == "kind" else "right")
        for name, tally in [("all", score.by_lang[lang])] + sorted(kinds.items()):
            table.add_row(name, str(tally.expected), str(tally.predicted), str(tally.true_positive),
                          _pct(tally.precision), _pct(tally.recall), _pct(tally.f1))
        console.print(table)
    if score.slots.labelled:
        table = Table(title="Slot agreement: matched items whose candidate has the labelled category")
        for column in ("slice", "labelled", "agreed", "agreement"):
            table.add_column(column, justify="left" if column == "slice" else "right")
        for name, slots in [("all", score.slots)] + [(f"lang={k}", v) for k, v in sorted(score.slots_by_lang.items())]:
            table.add_row(name, str(slots.labelled), str(slots.agreed), _pct(slots.agreement))
        console.print(table)
    if coverage is None:
        return
    table = Table(title="LoCoMo observation coverage")
    columns = ("conv", "facts", "turn raw", "turn gated", "lexical", "cands", "gated", "on evid.")
    for column in columns:
        table.add_column(column, justify="left" if column == "conv" else "right")
    total = Coverage()
    for name, cov in coverage.items():
        total.add(cov)
        _coverage_row(table, name, cov)
    _coverage_row(table, "TOTAL", total)
    console.print(table)


def _coverage_row(table: Any, name: str, cov: Coverage) -> None:
    d = cov.as_dict()
    table.add_row(name, str(cov.facts), _pct(d["turn_coverage_raw"]), _pct(d["turn_coverage_gated"]),
                  _pct(d["lexical_coverage_gated"]), str(cov.candidates_raw), str(cov.candidates_gated),
                  _pct(d["gated_on_evidence_turn_share"]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labelled", type=Path, required=True)
    parser.add_argument("--locomo", type=Path)
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    parser.add_argument("--show-misses", action="store_true", help="print every utterance the extractor got wrong")
    parser.add_argument("--split", help="score only the labelled rows of this split (e.g. slots-heldout)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = load_labelled(args.labelled)
    if args.split:
        rows = [row for row in rows if row.split == args.split]
        if not rows:
            raise BenchmarkDataError(f"no labelled rows in split {args.split!r}")
    score = score_labelled(rows)
    coverage = locomo_coverage(args.locomo) if args.locomo else None
    elapsed = time.perf_counter() - started
    print_report(score, coverage)
    if args.show_misses:
        for miss in score.misses:
            print(json.dumps(miss, ensure_ascii=False))
    print(f"took {elapsed:.1f}s")
    if args.out:
        total = Coverage()
        for cov in (coverage or {}).values():
            total.add(cov)
        result = {
            "gate": {"confidence": GATE_CONFIDENCE, "importance": GATE_IMPORTANCE},
            "labelled": {
                "overall": score.overall.as_dict(),
                "by_lang": {k: v.as_dict() for k, v in score.by_lang.items()},
                "by_kind": {k: v.as_dict() for k, v in score.by_kind.items()},
                "by_lang_kind": {
                    lang: {k: v.as_dict() for k, v in kinds.items()} for lang, kinds in score.by_lang_kind.items()
                },
                "slots": score.slots.as_dict(),
                "slots_by_lang": {k: v.as_dict() for k, v in score.slots_by_lang.items()},
                "misses": score.misses,
            },
            "locomo": None if coverage is None else {
                "total": total.as_dict(),
                "by_conversation": {k: v.as_dict() for k, v in coverage.items()},
            },
            "seconds": elapsed,
        }
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
