"""The memory block injected into a prompt: grouped by kind, within a token budget,
deterministic for the same hits.

Each line says whose fact it is when the memory is about someone else and its words do
not say so ("Sarah (wife): loves orchids"), and dates what changed: a memory of a
single-valued slot (where the user lives, works, who the manager is) that replaced an older
value, or was said to hold from a moment of its own, says since when ("since 2026-05",
"自2026-05起"). As a safety net the block never holds two values
of one single-valued slot of one subject: the newest (by ``valid_from``) stays.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Kind, MemoryRecord, SearchHit
from ..slots import OTHER_PREFIX, is_other, single_valued
from ..text.tokenize import has_cjk, names_word

_CJK_CHARS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

KIND_ORDER = (Kind.PREFERENCE, Kind.FACT, Kind.RULE, Kind.CONCLUSION, Kind.TODO, Kind.EPISODE, Kind.FILE)
HEADINGS = {
    "en": {
        Kind.PREFERENCE: "Preferences", Kind.FACT: "Facts", Kind.RULE: "Rules", Kind.CONCLUSION: "Conclusions",
        Kind.TODO: "To-dos", Kind.EPISODE: "Past conversations", Kind.FILE: "Files",
    },
    "zh": {
        Kind.PREFERENCE: "偏好", Kind.FACT: "事实", Kind.RULE: "规则", Kind.CONCLUSION: "结论",
        Kind.TODO: "待办", Kind.EPISODE: "过往对话", Kind.FILE: "文件",
    },
}
TITLES = {"en": "Relevant memories", "zh": "相关记忆"}


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: one token per CJK character, one per ~4 other characters."""
    cjk = len(_CJK_CHARS.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


@dataclass(frozen=True, slots=True)
class ContextBlock:
    text: str
    hits: tuple[SearchHit, ...]  # the memories that made it into the block
    tokens: int
    dropped: int  # hits left out for the budget
    recall_id: str | None = None  # links the answer that used this block (memory.audit.link_answer)
    below_floor: int = 0  # hits left out by the relevance floor (nothing says they are relevant)
    profile: tuple[str, ...] = ()  # ids of the hits given as the user's profile (first in ``hits``)


def _language(hits: Sequence[SearchHit], query: str) -> str:
    cjk = sum(has_cjk(hit.record.content) for hit in hits) + has_cjk(query)
    return "zh" if cjk * 2 > len(hits) + 1 else "en"


def line(record: MemoryRecord) -> str:
    """One memory as a line of the block: whose it is when its words do not say, since when
    a changed value holds."""
    text = " ".join(record.content.split())
    owner = whose(record)
    zh = has_cjk(text)
    if owner:
        text = f"{owner}{'：' if zh else ': '}{text}"
    if dated(record):
        text += f"（自{record.valid_from:%Y-%m}起）" if zh else f" (since {record.valid_from:%Y-%m})"
    return "- " + text


def dated(record: MemoryRecord) -> bool:
    """A value of a single-valued slot that has changed (it replaced an older one) or was said
    to hold from a moment of its own ("moved here last month") says since when: every line dated
    crowded the block (measured on dev at budget 200: needed 0.929 → 0.911)."""
    return single_valued(record.slot) and (record.supersedes is not None or record.valid_from != record.created_at)


def whose(record: MemoryRecord) -> str | None:
    """Who the memory is about, when it is someone else its words do not name: "Sarah (wife)"."""
    if not is_other(record.subject):
        return None
    words = record.subject[len(OTHER_PREFIX):].split()
    if not words or words == ["someone"] or any(names_word(record.content, w) for w in words):
        return None
    if len(words) == 1:
        return words[0]
    return f"{' '.join(w.capitalize() for w in words[1:])} ({words[0]})"


def one_value_per_slot(hits: Sequence[SearchHit]) -> set[str]:
    """Ids of the hits to leave out: every value of a single-valued slot of one subject (and one
    kind: a preference does not end a fact) but the newest (two active values can meet when one
    was written by hand or in one add())."""
    newest: dict[tuple[str, str, str], MemoryRecord] = {}
    for hit in hits:
        record = hit.record
        if single_valued(record.slot):
            kept = newest.get(_slot_key(record))
            if kept is None or (record.valid_from, record.created_at) > (kept.valid_from, kept.created_at):
                newest[_slot_key(record)] = record
    return {hit.record.id for hit in hits if single_valued(hit.record.slot)
            and newest[_slot_key(hit.record)].id != hit.record.id}


def _slot_key(record: MemoryRecord) -> tuple[str, str, str]:
    return record.subject, record.slot or "", record.kind.value


def render(records: Sequence[MemoryRecord], language: str, title: str | None = None) -> str:
    """The block: the memories grouped by kind, each group in the order given, under
    ``title`` (the context block's by default); "" when there are none."""
    sections = [f"## {title or TITLES[language]}"]
    for kind in KIND_ORDER:
        group = [record for record in records if record.kind is kind]
        if group:
            sections.append(f"### {HEADINGS[language][kind]}\n" + "\n".join(line(record) for record in group))
    return "\n".join(sections) if len(sections) > 1 else ""


def _cjk(text: str) -> int:
    return len(_CJK_CHARS.findall(text))


class _BlockSize:
    """Characters and CJK characters of ``render(chosen)``, kept as hits are added, so
    each candidate's fit is tested without rendering the block again (it was quadratic
    in the hits: 40 renders for a 40-hit context)."""

    def __init__(self, language: str) -> None:
        self.language = language
        title = f"## {TITLES[language]}"
        self.chars, self.cjk = len(title), _cjk(title)
        self.kinds: set[Kind] = set()

    def _heading(self, kind: Kind) -> tuple[int, int]:
        heading = f"### {HEADINGS[self.language][kind]}"
        return 1 + len(heading), _cjk(heading)  # "\n" before the section, then the heading

    def with_hit(self, hit: SearchHit) -> tuple[int, int]:
        text = line(hit.record)
        chars, cjk = self.chars + 1 + len(text), self.cjk + _cjk(text)  # "\n" before the line
        if hit.record.kind not in self.kinds:
            extra_chars, extra_cjk = self._heading(hit.record.kind)
            chars, cjk = chars + extra_chars, cjk + extra_cjk
        return chars, cjk

    def add(self, hit: SearchHit, size: tuple[int, int]) -> None:
        self.chars, self.cjk = size
        self.kinds.add(hit.record.kind)

    @staticmethod
    def tokens(size: tuple[int, int]) -> int:
        chars, cjk = size
        return cjk + math.ceil((chars - cjk) / 4)  # estimate_tokens of the rendered text


def build_context(
    hits: Sequence[SearchHit], query: str, budget_tokens: int, language: str = "auto", *,
    profile: Sequence[SearchHit] = (), profile_share: float = 0.0,
) -> ContextBlock:
    """The profile first, best first, while it fits in ``profile_share`` of the budget;
    then the recalled hits best-first in what is left. A hit that does not fit is
    skipped and smaller ones are still tried (a long memory must not starve the rest).
    Both are rendered grouped by kind, the profile's first in each group."""
    lang = _language([*profile, *hits], query) if language == "auto" else language
    older = one_value_per_slot([*profile, *hits])
    profile = [hit for hit in profile if hit.record.id not in older]
    hits = [hit for hit in hits if hit.record.id not in older]
    size = _BlockSize(lang)
    given = _fill(profile, size, budget_tokens * profile_share)
    taken = {hit.record.id for hit in given}
    candidates = [hit for hit in hits if hit.record.id not in taken]
    chosen = _fill(candidates, size, budget_tokens)
    text = render([hit.record for hit in given + chosen], lang)
    return ContextBlock(text=text, hits=tuple(given + chosen), tokens=estimate_tokens(text),
                        dropped=len(candidates) - len(chosen), profile=tuple(hit.record.id for hit in given))


def _fill(hits: Sequence[SearchHit], size: _BlockSize, budget: float) -> list[SearchHit]:
    """The hits, best first, that still fit in ``budget`` tokens with what ``size`` holds."""
    chosen: list[SearchHit] = []
    for hit in hits:
        trial = size.with_hit(hit)
        if size.tokens(trial) <= budget:
            chosen.append(hit)
            size.add(hit, trial)
    return chosen
