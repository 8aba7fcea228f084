"""Chinese side of the embedded extractor: which sentences can hold a memory, and what they hold.

Same calibration as the English side: firm statements ("我对海鲜过敏",
"我们公司采用三级审批流程") start at 0.85-0.9; weak readings ("我想…", an
undated "我要…") start below the gate's 0.7; hedges ("可能", "也许") lower
whatever they touch.

Discourse markers at the head of a sentence or clause ("另外", "还有", "对了",
"其实") are dropped before the patterns run, so they never leak into a memory;
statements of a state lose "现在"/"目前", so a change ("我现在住在杭州") reads
like the fact it replaces ("用户住在杭州").
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...model import Kind
from .common import SETTLED_GROUPS, Finding, SentenceView, group_of, is_small_talk
from .zh_base import Pattern, carry_subject, finding, settle, third_person
from .zh_changes import CHANGES
from .zh_patterns import ACTIONS, IDENTITY_AND_TASTE, LIFE_FACTS

PATTERNS: tuple[Pattern, ...] = IDENTITY_AND_TASTE + LIFE_FACTS + CHANGES + ACTIONS

# How a sentence or clause joins the conversation, not what it says: "另外我们公司采用…".
_DISCOURSE = re.compile(
    r"(^|[，,])(?:(?:另外还有|另外就是|还有就是|另外|还有|对了|哦对了|然后|其实|而且|并且|此外|再就是|话说|说起来|顺便说一下|顺便说一句"
    r"|顺便提一下|顺便|补充一下|补充一点)[，,、：:\s]*|(?:嗯|哦|噢|哎|诶|啊|好吧)[，,、\s]+)+"
)

# "你能提醒我…吗？" asks for something to be kept; it is not a question to answer.
_POLITE_REQUEST = re.compile(r"^(?:你)?(?:能不能|能|可以|可不可以|麻烦你?|请你?)(?=提醒我|记住|帮我记住|记一下|以后|每次)")
_POLITE_TAIL = re.compile(r"[吗呢吧]?[？?。！!\s]*$")
_INTENT_PREFIX = re.compile(
    r"^(?:请你?|麻烦你?|你)?(?:帮我)?(?:一定要)?(?:记住|记着|记一下|记好|牢记|请注意|注意一下|备注一下|备注|你要记得)了?[：:，,\s]*"
)
_INTENT_SUFFIX = re.compile(r"[，,\s]*(?:记住了?|记一下|记好了?|别忘了)[。！!\s]*$")
_QUESTION_END = re.compile(r"(?:[？?]|[吗么呢][。！!…~～\s]*)$")
_INTERROGATIVE = re.compile(
    r"什么|几点|几号|几月|几岁|几个|等于几|怎么|怎样|为什么|为啥|多少|哪里|哪儿|哪个|哪些|哪位|谁|是否|是不是|有没有|能不能"
    r"|可不可以|会不会|要不要|对不对|好不好|行不行|天气|气温"
)
_HYPOTHETICAL = re.compile(r"如果|假如|要是|假设|万一|倘若|若是|的话|就好了|假使|设想")
_REPORTED = re.compile(
    r"听说|据说|传闻|传言|[他她它]们?说|有人说|别人说"
    r"|(?:同事|朋友|同学|老板|领导|经理|老师|妈妈|爸爸|老婆|老公|[老小][\u4e00-\u9fff])(?:跟我|和我|对我)?说|[“”「」『』\"]"
)
_META_NEGATION = re.compile(r"我不是说|并不是说|不是说我|倒不是")
_ONE_OFF = re.compile(
    r"^(?:请|麻烦你?)?(?:你)?(?:(?:帮我|帮忙|给我|替我)(?!记|提醒)|翻译|解释一下|计算|查一下|搜一下|搜索|总结一下)"
)
_DURABLE = re.compile(r"以后|今后|往后|每次|每天|每周|总是|始终|一直|永远|所有|从现在开始|不要再|别再")
_HEDGE = re.compile(r"可能|也许|或许|大概|好像|似乎|说不定|不确定|不一定|还没想好|考虑|估计|应该会|吧[。！!…~～\s]*$")


def strip_discourse(text: str) -> str:
    return _DISCOURSE.sub(lambda m: m.group(1), text).lstrip("，,")


def analyse(sentence: str) -> SentenceView:
    text = sentence.strip()
    if is_small_talk(text):
        return SentenceView(text, skip="small_talk")
    text = strip_discourse(text) or text
    polite = _POLITE_REQUEST.match(text)
    if polite:
        text = _POLITE_TAIL.sub("", text[polite.end() :])
    explicit = False
    for intent in (_INTENT_PREFIX, _INTENT_SUFFIX):
        stripped = strip_discourse(intent.sub("", text, count=1))
        if stripped != text and stripped:
            text, explicit = stripped, True
    skip = _skip_reason(text, polite=polite is not None)
    return SentenceView(text, skip=skip, hedged=bool(_HEDGE.search(text)), explicit=explicit)


def is_question(text: str) -> bool:
    return bool(_QUESTION_END.search(text.strip()))


def asks_something(text: str) -> bool:
    """A question even without "？": "现在几点", "今天天气怎么样"."""
    return is_question(text) or bool(_INTERROGATIVE.search(text))


def is_one_off_request(text: str) -> bool:
    return bool(_ONE_OFF.match(text)) and not _DURABLE.search(text)


def _skip_reason(text: str, *, polite: bool) -> str | None:
    if not polite and is_question(text):
        return "question"
    if _HYPOTHETICAL.search(text):
        return "hypothetical"
    if _REPORTED.search(text):
        return "reported"
    if _META_NEGATION.search(text):
        return "negated"
    if is_one_off_request(text):
        return "request"
    return None


def find(body: str, speaker: str | None) -> list[Finding]:
    """Every pattern hit in the sentence; ``rules`` settles overlaps and calibration."""
    sentence = carry_subject(body)
    found: list[Finding] = []
    for entry in PATTERNS:
        for match in entry.regex.finditer(sentence):
            hit = entry.build(match, speaker)
            if hit is not None:
                found.append(_settled(replace(hit, span=match.span(), rule=f"zh.{entry.name}"), sentence))
    return found


def _settled(hit: Finding, sentence: str) -> Finding:
    if hit.kind not in (Kind.FACT, Kind.PREFERENCE) or group_of(hit.category) not in SETTLED_GROUPS:
        return hit
    content = settle(hit.content, sentence)
    return replace(hit, content=content) if len(content) >= 3 else hit


def noted(body: str, speaker: str | None) -> Finding | None:
    """What an explicit "记住…" keeps when no pattern recognised the statement."""
    hit = finding(Kind.FACT, "note", 0.75, third_person(body, speaker))
    return None if hit is None else replace(hit, span=(0, len(body)), rule="zh.noted")
