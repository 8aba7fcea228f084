"""The memory block injected into a prompt: grouped by kind, within a token budget,
deterministic for the same hits."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Kind, SearchHit
from .tokenize import has_cjk

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
    recall_id: str | None = None  # links the answer that used this block (Memory.audit.link_answer)
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


def build_context(
    hits: Sequence[SearchHit], query: str, budget_tokens: int, language: str = "auto", *,
    profile: Sequence[SearchHit] = (), profile_share: float = 0.0,
) -> ContextBlock:
    """The profile first, best first, while it fits in ``profile_share`` of the budget;
    then the recalled hits best-first in what is left. A hit that does not fit is
    skipped and smaller ones are still tried (a long memory must not starve the rest).
    Both are rendered grouped by kind, the profile's first in each group."""
    lang = _language([*profile, *hits], query) if language == "auto" else language
    given: list[SearchHit] = []
    for hit in profile:
        if estimate_tokens(render(given + [hit], lang)) <= budget_tokens * profile_share:
            given.append(hit)
    taken = {hit.record.id for hit in given}
    chosen: list[SearchHit] = []
    candidates = [hit for hit in hits if hit.record.id not in taken]
    for hit in candidates:
        if estimate_tokens(render(given + chosen + [hit], lang)) <= budget_tokens:
            chosen.append(hit)
    text = render(given + chosen, lang)
    return ContextBlock(text=text, hits=tuple(given + chosen), tokens=estimate_tokens(text),
                        dropped=len(candidates) - len(chosen), profile=tuple(hit.record.id for hit in given))
