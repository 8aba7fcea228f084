"""The memory block injected into a prompt: grouped by kind, within a token budget,
deterministic for the same hits."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Kind, SearchHit
from ..text.tokenize import has_cjk

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


def _line(hit: SearchHit) -> str:
    return "- " + " ".join(hit.record.content.split())


def render(hits: Sequence[SearchHit], language: str) -> str:
    """The block: the hits grouped by kind, each group in the order given."""
    sections = [f"## {TITLES[language]}"]
    for kind in KIND_ORDER:
        group = [hit for hit in hits if hit.record.kind is kind]
        if group:
            sections.append(f"### {HEADINGS[language][kind]}\n" + "\n".join(_line(hit) for hit in group))
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
        line = _line(hit)
        chars, cjk = self.chars + 1 + len(line), self.cjk + _cjk(line)  # "\n" before the line
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
    size = _BlockSize(lang)
    given = _fill(profile, size, budget_tokens * profile_share)
    taken = {hit.record.id for hit in given}
    candidates = [hit for hit in hits if hit.record.id not in taken]
    chosen = _fill(candidates, size, budget_tokens)
    text = render(given + chosen, lang)
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
