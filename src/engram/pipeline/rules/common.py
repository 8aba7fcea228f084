"""Shared pieces of the embedded rule extractor: findings, sentences, language, chatter.

The language modules (``rules_en``, ``rules_zh``) turn one sentence into
``Finding``s; ``rules`` turns findings into ``Candidate``s. Everything here is
language-neutral or needed by both, and by the trigger.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ...model import Kind


@dataclass(frozen=True, slots=True)
class Finding:
    """One statement a pattern recognised inside one sentence."""

    kind: Kind
    content: str
    confidence: float  # the pattern's base confidence, before hedges and intents
    category: str
    span: tuple[int, int]  # where in the sentence body it matched; overlapping findings compete
    rule: str  # which pattern fired, kept in metadata so a wrong memory can be traced
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class SentenceView:
    """A sentence after the language module looked at it as a whole."""

    body: str  # the sentence with an explicit "remember that" prefix removed
    skip: str | None = None  # why it yields nothing: question, hypothetical, reported, ...
    hedged: bool = False  # "maybe", "可能": said, but not firmly meant
    explicit: bool = False  # "remember that", "记住": the user asked for it to be kept


# Abbreviations whose dot does not end a sentence ("St. Mary's", "e.g.").
_ABBREVIATION = re.compile(
    r"\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|Inc|Ltd|Co|vs|etc|e\.g|i\.e|a\.m|p\.m|approx|dept)\.",
    re.IGNORECASE,
)
# Chinese and full-width enders split anywhere; an ASCII dot only before space or end,
# so "3.13" and "$1.5k" stay whole.
_SENTENCE_END = re.compile(r"[。！？!?；;…]+[”’\"')）]*|\.+[”’\"')]*(?=\s|$)|\n+")
_WORDISH = re.compile(r"[\w\u3400-\u9fff]")
_PROTECTED_DOT = "\x00"

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


def split_sentences(text: str) -> list[str]:
    """Split Chinese and English text into sentences, keeping each one's end mark."""
    protected = _ABBREVIATION.sub(lambda m: m.group(0).replace(".", _PROTECTED_DOT), text)
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(protected):
        sentences.append(protected[start : match.end()])
        start = match.end()
    sentences.append(protected[start:])
    restored = (s.replace(_PROTECTED_DOT, ".").strip() for s in sentences)
    return [s for s in restored if _WORDISH.search(s)]


def is_chinese(text: str) -> bool:
    """Chinese when Han characters carry the sentence; "用Kafka替换RabbitMQ" still counts."""
    han = len(_CJK.findall(text))
    return han >= 2 and han * 3 >= len(_LATIN.findall(text))


def weighted_length(text: str, cjk_weight: int = 2) -> int:
    """Non-space characters, a Han character counting as ``cjk_weight``.

    One Han character carries about as much as a short English word, so a raw
    character count would make "我不吃辣" (4) look shorter than "ok cool" (7).
    """
    han = len(_CJK.findall(text))
    other = sum(1 for ch in text if not ch.isspace()) - han
    return other + han * cjk_weight


# --- small talk ---------------------------------------------------------------

_SMALL_TALK_EN_WORDS = frozenset(
    """
    hi hello hey heya hiya yo sup there all everyone guys
    thanks thank thx ty cheers appreciate appreciated much so very lot a you too
    ok okay k kk sure cool great nice good fine awesome perfect wonderful excellent
    lol haha hahaha hehe lmao rofl xd omg wow oh ah uh um hmm hm mhm
    bye goodbye cya see ya later soon talk ttyl night morning evening afternoon day
    yes yeah yep yup no nope nah alright right got it gotcha noted understood
    sounds that was is helpful useful welcome np problem worries how are doing
    going what's up today again the bro dude mate man indeed exactly true agreed
    """.split()
)
_EN_TOKEN = re.compile(r"[a-z']+")
_SMALL_TALK_ZH = re.compile(
    r"^(?:你好|您好|早上好|早安|中午好|下午好|晚上好|晚安|大家好|嗨|哈喽|hello|hi"
    r"|谢谢你?|谢啦|多谢|感谢|辛苦了?|不客气|没事|没关系|没问题|不用谢"
    r"|好的?|好吧|好哒|好嘞|行|可以|对|对的|是的|嗯+|哦+|噢|喔|啊+|哇+|哈+|呵+|嘿+|嘻+"
    r"|收到|明白了?|了解|懂了|知道了|ok|OK|棒|厉害|不错|太好了|真好"
    r"|再见|拜拜|回头见|明天见|明天聊|改天聊|回聊|下次聊"
    r"|了|呀|呢|吧|嘛|啦|喽|哒)+$"
)
# Punctuation and emoji do not change whether a message is chatter.
_ZH_FILLER = re.compile(r"[\s\W_~～]+")


def is_small_talk(text: str) -> bool:
    """Greetings, thanks, acknowledgements and laughter in either language."""
    if is_chinese(text) or _CJK.search(text):
        core = _ZH_FILLER.sub("", text)
        return not core or bool(_SMALL_TALK_ZH.match(core))
    words = _EN_TOKEN.findall(text.lower())
    return bool(words) and all(word in _SMALL_TALK_EN_WORDS for word in words)


# --- slots ----------------------------------------------------------------------
#
# Reconcile supersedes an old memory with a new one of the same kind and category
# once they are at least loosely similar, so a fact and every later change of it
# ("我住在上海" -> "我搬到杭州了", "I'm a nurse" -> "I got promoted to head nurse")
# must land in the same category, in either language. Categories that name one
# slot read "group:slot"; importance is looked up by the group.

NAME = "identity:name"
NICKNAME = "identity:nickname"
SURNAME = "identity:surname"  # its own slot: "my last name is now Garcia" must not erase the first name
AGE = "identity:age"
BIRTHDAY = "identity:birthday"
NATIONALITY = "identity:nationality"
RESIDENCE = "location:residence"
ORIGIN = "location:origin"
EMPLOYER = "work:employer"
JOB = "work:job"
APPROVAL = "business_rule:approval"
BUDGET = "business_rule:budget"
BUSINESS_RULE = "business_rule"
REPORT_STYLE = "style:reports"
ANSWER_STYLE = "style:answers"
DIET = "taboo:diet"
ALLERGY = "taboo:allergy"
ABSTAIN = "taboo:abstain"
TOOLS = "tools"
RELATION_MANAGER = "relation:manager"  # who the user reports to: one at a time
RELATION_MENTOR = "relation:mentor"

# Groups whose memories describe a current state: "now", "现在" say when it became
# true, not what is true, and only make a changed fact look less like the old one.
SETTLED_GROUPS = frozenset({"identity", "location", "work", "style", "taboo", "like", "dislike", "tools"})

_APPROVAL = re.compile(r"approv|sign-?offs?\b|signs? off|authori[sz]|审批|批准|审核|签字|签署|核准|批复", re.IGNORECASE)
_BUDGET = re.compile(
    r"\bbudget|\bcap(?:s|ped)?\b|\blimits?\b|allowance|per[ -]diem|stipend|\bspend(?:ing)?\b|ceiling"
    r"|预算|经费|额度|上限|标准|补贴|不超过|以内|最多",
    re.IGNORECASE,
)
_REPORTS = re.compile(
    r"\breports?\b|\bsummar(?:y|ies)\b|\bbriefs?\b|\bbriefings?\b|\bstatus updates?\b|\bwrite-?ups?\b"
    r"|报告|周报|日报|月报|汇报|总结|简报|报表",
    re.IGNORECASE,
)
_ANSWERS = re.compile(r"\b(?:answers?|replies|reply|responses?|explanations?)\b|回答|回复|答复|解释", re.IGNORECASE)


SUBJECT_TERMS = frozenset({"user", "用户", "the", "their", "they", "them"})
# words that only hold an English sentence together (as index terms, i.e. lower-cased and stemmed)
_FUNCTION_EN = frozenset(
    "a an and or but so to of in on at for with from by as is are am was were be been it its this that these those"
    " there here i me my mine we us our you your he she him her his has have had do does did not no just very too"
    " also now then up out about into over than".split()
)


_FUNCTION_HAN = frozenset("的了是在我你他她它们用户这那个有和也都就还又吧啊呢吗呀哈嘛啦么着过把被给让对从到去来要会能说很太")
_HAN_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def content_terms(text: str) -> set[str]:
    """A memory's terms without the words that only name its subject ("the user", "用户").
    Chinese counts single characters (less what only holds a sentence together), so
    "开庭改到3月22号" and "3月8号在法院开庭" share 开, 庭, 月, 号 — bigrams would share nothing."""
    from ...text.tokenize import index_terms

    terms = set(index_terms(text)) - SUBJECT_TERMS - _FUNCTION_EN
    if _HAN_CHAR.search(text):
        terms = {t for t in terms if not _HAN_CHAR.search(t)} | (set(_HAN_CHAR.findall(text)) - _FUNCTION_HAN)
    return terms


def group_of(category: str) -> str:
    return category.split(":", 1)[0]


def business_slot(text: str) -> str:
    """Approval flows and budgets are slots of their own; other business rules share one."""
    if _APPROVAL.search(text):
        return APPROVAL
    if _BUDGET.search(text):
        return BUDGET
    return BUSINESS_RULE


def taste_slot(obj: str, default: str) -> str:
    """How the user wants reports or answers is one slot, liked or disliked alike."""
    if _REPORTS.search(obj):
        return REPORT_STYLE
    if _ANSWERS.search(obj):
        return ANSWER_STYLE
    return default
