"""Figures over judged rows: what the judge says against what the writers labelled."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engram.pipeline.judge.subjects import canonical_relation, same_subject
from engram.slots import TEAM, USER, Judgement, is_other, other, single_valued

from .dataset import Pair, Row

DURABLE = ("fact", "change")
JUNK = ("chatter", "question", "request", "passing", "pasted")


def kind_of(subject: str) -> str:
    return "user" if subject == USER else "team" if subject == TEAM else "other" if is_other(subject) else "none"


def ratio(hits: int, total: int) -> float | None:
    return hits / total if total else None


def fmt(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


@dataclass(frozen=True)
class Scores:
    n: int
    utterance: float | None  # 8-way accuracy
    durable_precision: float | None
    durable_recall: float | None
    junk_precision: float | None  # judged not durable: share that truly states nothing durable
    junk_recall: float | None  # junk lines judged not durable
    forget_precision: float | None
    forget_recall: float | None
    subject: float | None  # subject kind, on durable lines judged durable
    slot: float | None  # slot, on durable lines judged durable
    other_name: float | None  # another person's relation and name as the writer spelled them, inside the judged subject

    HEADER = ("n", "type", "dur P", "dur R", "junk P", "junk R", "fgt P", "fgt R", "subj", "slot", "who")

    def cells(self) -> list[str]:
        values = [self.utterance, self.durable_precision, self.durable_recall, self.junk_precision, self.junk_recall,
                  self.forget_precision, self.forget_recall, self.subject, self.slot, self.other_name]
        return [str(self.n), *(fmt(v) for v in values)]


def scores(rows: Sequence[Row], judged: Sequence[Judgement]) -> Scores:
    pairs = list(zip(rows, judged))
    true_durable = [(r, j) for r, j in pairs if r.utterance in DURABLE]
    said_durable = [(r, j) for r, j in pairs if j.durable]
    said_not = [(r, j) for r, j in pairs if not j.durable]
    junk = [(r, j) for r, j in pairs if r.utterance in JUNK]
    both = [(r, j) for r, j in true_durable if j.durable]
    others = [(r, j) for r, j in both if r.subject == "other" and kind_of(j.subject) == "other"]
    return Scores(
        n=len(pairs),
        utterance=ratio(sum(r.utterance == j.utterance for r, j in pairs), len(pairs)),
        durable_precision=ratio(sum(r.utterance in DURABLE for r, _ in said_durable), len(said_durable)),
        durable_recall=ratio(len(both), len(true_durable)),
        junk_precision=ratio(sum(r.utterance not in DURABLE for r, _ in said_not), len(said_not)),
        junk_recall=ratio(sum(not j.durable for _, j in junk), len(junk)),
        forget_precision=ratio(sum(r.utterance == "forget" for r, j in pairs if j.utterance == "forget"),
                               sum(j.utterance == "forget" for _, j in pairs)),
        forget_recall=ratio(sum(j.utterance == "forget" for r, j in pairs if r.utterance == "forget"),
                            sum(r.utterance == "forget" for r, _ in pairs)),
        subject=ratio(sum(r.subject == kind_of(j.subject) for r, j in both), len(both)),
        slot=ratio(sum(r.slot == j.slot for r, j in both), len(both)),
        other_name=ratio(sum(_same_person(r.subject_text, j.subject) for r, j in others), len(others)),
    )


def _same_person(written: str, judged: str) -> bool:
    """The writer's relation and name (they often give the relation alone) are all in the judged subject."""
    try:
        wanted = [canonical_relation(w) for w in other(written.removeprefix("other:")).removeprefix("other:").split()]
    except ValueError:
        return False
    return set(wanted) <= set(judged.removeprefix("other:").split())


@dataclass(frozen=True)
class PairScores:
    changes: int
    caught: float | None
    apart: int
    caught_apart: float | None
    unrelated: int  # unrelated + adds pairs
    false_supersession: float | None

    HEADER = ("changes (single-valued slot)", "caught", "worded apart", "caught", "unrelated/adds",
              "false supersession")

    def cells(self) -> list[str]:
        return [str(self.changes), fmt(self.caught), str(self.apart), fmt(self.caught_apart), str(self.unrelated),
                fmt(self.false_supersession)]


def supersedes(old: Judgement, new: Judgement) -> bool:
    """What reconciliation would do: the new value ends the old one."""
    return (old.durable and new.durable and same_subject(old.subject, new.subject) and old.slot == new.slot
            and single_valued(new.slot))


def pair_scores(pairs: Sequence[Pair], old: Sequence[Judgement], new: Sequence[Judgement]) -> PairScores:
    triples = list(zip(pairs, old, new))
    # A change of a many-valued slot ("we moved from Jira to Linear") is no supersession by structure.
    single = [(p, o, n) for p, o, n in triples if p.label == "change" and single_valued(p.slot)]
    changes = [supersedes(o, n) for p, o, n in single]
    apart = [supersedes(o, n) for p, o, n in single if p.worded_apart]
    unrelated = [supersedes(o, n) for p, o, n in triples if p.label in ("unrelated", "adds")]
    return PairScores(len(changes), ratio(sum(changes), len(changes)), len(apart), ratio(sum(apart), len(apart)),
                      len(unrelated), ratio(sum(unrelated), len(unrelated)))


def table(title: str, header: Sequence[str], lines: Sequence[tuple[str, list[str]]]) -> str:
    """A Markdown table (the first column names the row)."""
    width = max([len(title), *(len(name.replace(" ", "&nbsp;", 2) if name.startswith("  ") else name)
                               for name, _ in lines)])
    widths = [max([len(h), *(len(cells[i]) for _, cells in lines)]) for i, h in enumerate(header)]
    out = [f"| {title.ljust(width)} | " + " | ".join(h.rjust(w) for h, w in zip(header, widths)) + " |",
           f"|{'-' * (width + 2)}|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|"]
    for name, cells in lines:
        shown = name.replace(" ", "&nbsp;", 2) if name.startswith("  ") else name
        out.append(f"| {shown.ljust(width)} | " + " | ".join(c.rjust(w) for c, w in zip(cells, widths)) + " |")
    return "\n".join(out)
