"""The labelled data: snapshots of the writers' files under ``data/<writer>/``.

Rows for the judge's heads come from ``statements.jsonl`` (every type), ``forgets.jsonl``
(type forget) and ``everyday_requests.jsonl`` (requests that must not forget anything:
type request, or pasted / chatter by their kind). ``pairs.jsonl`` is kept for evaluation.
A line whose labels are outside the shared vocabulary is skipped and counted.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from engram.slots import OTHER_PREFIX, TEAM, USER, Slot, Utterance

DATA = Path(__file__).with_name("data")
UTTERANCES = tuple(u.value for u in Utterance)
SUBJECT_KINDS = ("user", "team", "other", "none")
SLOTS = tuple(s.value for s in Slot) + ("none",)
_EVERYDAY_TYPE = {"pasted": "pasted", "retract_question": "chatter"}


@dataclass(frozen=True)
class Row:
    text: str
    lang: str
    utterance: str
    subject: str  # user / team / other / none
    slot: str  # a Slot value or "none"
    writer: str
    source: str  # statements / forgets / everyday
    subject_text: str = ""  # the writer's full subject ("other:colleague Ravi")


@dataclass(frozen=True)
class Pair:
    old: str
    new: str
    lang: str
    subject: str
    slot: str
    label: str
    worded_apart: bool
    writer: str


def subject_kind(subject: str) -> str | None:
    subject = subject.strip()
    if subject == USER:
        return "user"
    if subject == TEAM:
        return "team"
    if subject.startswith(OTHER_PREFIX):
        return "other"
    return "none" if subject in ("none", "") else None


def read_jsonl(path: Path) -> list[dict]:
    """The objects of a JSON Lines file written by a helper (none when it is absent; a line still
    being appended is skipped)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def _row(item: dict, writer: str, source: str, skipped: Counter) -> Row | None:
    text, lang = str(item.get("text", "")).strip(), str(item.get("lang", ""))
    utterance = str(item.get("type", "")).strip()
    subject = str(item.get("subject", "none"))
    kind = subject_kind(subject)
    slot = str(item.get("slot", "none") or "none").strip()
    durable = utterance in ("fact", "change")
    if not durable and utterance != "forget":
        kind, slot = "none", "none"
    if not text or utterance not in UTTERANCES or kind is None or slot not in SLOTS or (durable and kind == "none"):
        skipped[source] += 1
        return None
    if durable and slot == "none":
        slot = "other"
    kind, slot = _one_convention(subject, kind, slot)
    return Row(text, lang, utterance, kind, slot, writer, source, subject)


_BOSS = frozenset({"boss", "manager", "supervisor", "lead", "team lead", "领导", "老板", "上司", "经理", "主管"})


def _one_convention(subject: str, kind: str, slot: str) -> tuple[str, str]:
    """Who the boss is, is the user's manager slot: the writers labelled "my boss is called
    Hannah" both as the boss's name and as the user's manager; one reading for both."""
    if kind == "other" and slot == "name" and subject.removeprefix(OTHER_PREFIX).strip().lower() in _BOSS:
        return "user", "manager"
    return kind, slot


SLICE_SHARE = 10  # one line in ten (by a hash of its text) is the fixed held-out slice, never trained on
_SPACES = re.compile(r"\s+")


def normalised(text: str) -> str:
    return _SPACES.sub(" ", text.strip().casefold())


def in_slice(text: str) -> bool:
    return int(hashlib.sha256(normalised(text).encode()).hexdigest(), 16) % SLICE_SHARE == 0


def writers(root: Path = DATA) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.exists() else []


def rows(root: Path = DATA, skipped: Counter | None = None, part: str = "train", with_pairs: bool = True) -> list[Row]:
    """Every labelled line once (the first of identical texts): ``part`` "train" (outside
    the held-out slice), "slice" (inside it) or "all". ``with_pairs``: also the texts of
    the statement pairs whose labels are known (see ``pair_rows``)."""
    found = _all_rows(root, Counter() if skipped is None else skipped)
    if with_pairs:
        found += [row for row in pair_rows(pairs(root)) if row.text.strip()]
    seen: set[str] = set()
    out = []
    for row in found:
        key = normalised(row.text)
        if key in seen:
            continue
        seen.add(key)
        if part == "all" or (part == "slice") == in_slice(row.text):
            out.append(row)
    return out


def _all_rows(root: Path, skipped: Counter) -> list[Row]:
    out: list[Row] = []
    for writer in writers(root):
        folder = root / writer
        for item in read_jsonl(folder / "statements.jsonl"):
            out.append(_row(item, writer, "statements", skipped))
        for item in read_jsonl(folder / "forgets.jsonl"):
            out.append(_row({**item, "type": "forget"}, writer, "forgets", skipped))
        for item in read_jsonl(folder / "everyday_requests.jsonl"):
            kind = _EVERYDAY_TYPE.get(str(item.get("kind")), "request")
            out.append(_row({**item, "type": kind, "subject": "none", "slot": "none"}, writer, "everyday", skipped))
    return [row for row in out if row is not None]


def pair_rows(found: list[Pair]) -> list[Row]:
    """A pair's older text is a fact of its subject and slot; the later one too, unless
    the pair is unrelated (its slot and subject are not given): a change when it replaces
    the old value, a fact otherwise (a refinement, a paraphrase, another value)."""
    out = []
    for pair in found:
        kind = subject_kind(pair.subject)
        if kind in (None, "none") or pair.slot not in SLOTS or pair.slot == "none":
            continue
        kind, slot = _one_convention(pair.subject, kind, pair.slot)
        out.append(Row(pair.old, pair.lang, "fact", kind, slot, pair.writer, "pairs", pair.subject))
        if pair.label != "unrelated":
            utterance = "change" if pair.label == "change" else "fact"
            out.append(Row(pair.new, pair.lang, utterance, kind, slot, pair.writer, "pairs", pair.subject))
    return out


def pairs(root: Path = DATA) -> list[Pair]:
    out = []
    for writer in writers(root):
        for item in read_jsonl(root / writer / "pairs.jsonl"):
            try:
                out.append(Pair(str(item["old"]), str(item["new"]), str(item.get("lang", "")), str(item["subject"]),
                                str(item["slot"]), str(item["label"]), bool(item.get("worded_apart")), writer))
            except KeyError:
                continue
    return out
