"""Chinese surface handling and pattern plumbing for the rule extractor.

Memories speak about the user in the third person: "我不吃辣" is kept as
"用户不吃辣" (or "张三不吃辣" when the speaker's name is known).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

from ...model import Kind
from .common import Finding

# A clause character (stops at any comma or sentence end) and a sentence character
# (runs through commas), for patterns that must or may span "，".
C = r"[^，,。；;！!？?\n]"
CC = r"[^。；;！!？?\n]"
END = r"(?=[，,。；;！!？?、\s]|$)"

_DIGITS = r"[\d一二三四五六七八九十两]"
TIME = (
    rf"(?:今天|今晚|明天|明早|明晚|后天|大后天|今早|(?:本|这|下)(?:周|星期)[一二三四五六日天]?|周[一二三四五六日天末]"
    rf"|星期[一二三四五六日天]|礼拜[一二三四五六日天]|月底|月初|月中|年底|年初|季度末|(?:本|这个|下个?)月(?:底|初)?"
    rf"|{_DIGITS}{{1,2}}月{_DIGITS}{{1,3}}[日号]|{_DIGITS}{{1,2}}[号日]|下班|明年|今年年底)"
    rf"(?:[上下]午|早上|晚上|中午)?(?:{_DIGITS}{{1,2}}点(?:半|{_DIGITS}{{1,2}}分)?)?"
)
_DEADLINE = re.compile(rf"{TIME}(?:之前|以前|前|为止|截止)|截止(?:日期|时间)?(?:是|为|在|定在)?{C}+")
_ANY_TIME = re.compile(TIME)

_OUR_GROUP = re.compile(r"我们(?=公司|团队|部门|单位|小组|组|项目|集团|学校|医院)")
_LEADING_WE = re.compile(r"^我们(?:的)?")
_PLEASE = re.compile(r"(?<![申邀聘])请(?![假求教示柬客])")
_TRAILING = re.compile(r"[\s，,。；;！!？?…~～了啊呀吧哦呢啦嘛哈]+$")


def who(speaker: str | None) -> str:
    return speaker or "用户"


def third_person(text: str, speaker: str | None) -> str:
    """我 -> 用户 (or the speaker's name); "我们公司" -> "公司"; a leading 我们 is dropped."""
    text = _OUR_GROUP.sub("", text)
    text = _LEADING_WE.sub("", text)
    text = text.replace("我们", "\x00").replace("我", who(speaker)).replace("\x00", "我们")
    return _PLEASE.sub("", text)


def tidy(text: str) -> str:
    return _TRAILING.sub("", text.strip())


_NO_LONGER = re.compile(r"(?:现在|目前|如今)不(?!再)(?=[^，,。；;！!？?]*了)")
_NOW = re.compile(r"(?:现如今|现在|目前|如今|其实)(?=.)")


def settle(content: str, sentence: str) -> str:
    """A state without the words that only say it is new: "用户现在住在杭州" -> "用户住在杭州".

    "我现在不吃素了" becomes "用户不再吃素": the "了" that made it a change is gone
    by then, so the change is said with "不再".
    """
    if _NO_LONGER.search(sentence):
        content = re.sub(r"(?:现在|目前|如今)不(?!再)", "不再", content)
    return tidy(_NOW.sub("", content))


def deadline(text: str) -> str | None:
    match = _DEADLINE.search(text) or _ANY_TIME.search(text)
    return match.group(0) if match else None


def has_deadline(text: str) -> bool:
    return bool(_DEADLINE.search(text))


Builder = Callable[[re.Match[str], str | None], Finding | None]


@dataclass(frozen=True, slots=True)
class Pattern:
    name: str
    regex: re.Pattern[str]
    build: Builder


def pattern(name: str, regex: str, build: Builder) -> Pattern:
    return Pattern(name, re.compile(regex), build)


def finding(kind: Kind, category: str, confidence: float, content: str, **metadata: str | None) -> Finding | None:
    content = tidy(content)
    if len(content) < 3:
        return None
    meta = MappingProxyType({key: value for key, value in metadata.items() if value})
    return Finding(kind, content[:300], confidence, category, (0, 0), "", meta)


def about_user(kind: Kind, category: str, confidence: float) -> Builder:
    """Builder for "我<vp>": the user (or their name) followed by the rest, rewritten."""

    def build(match: re.Match[str], speaker: str | None) -> Finding | None:
        phrase = third_person(match.group("vp"), speaker)
        return finding(kind, category, confidence, who(speaker) + phrase)

    return build


def as_said(kind: Kind, category: str, confidence: float) -> Builder:
    """Builder for impersonal statements (rules, decisions): group ``x`` rewritten, nothing added."""

    def build(match: re.Match[str], speaker: str | None) -> Finding | None:
        text = match.group("x")
        when = deadline(text) if kind is Kind.TODO else None
        return finding(kind, category, confidence, third_person(text, speaker), deadline=when)

    return build


# Subjectless clauses that continue the previous clause's "我": "我是王磊，在杭州做前端".
_CONTINUES_SUBJECT = re.compile(
    r"^(?:在|住|做|当|是|喜欢|爱|讨厌|不吃|不喝|不太|不喜欢|也|还|平时|每天|每周|今年|老家|一直|最|特别|比较|很|养|有|对|已经|刚"
    r"|现在|目前|改(?:成|为)?(?:吃|喝))"
)
_CLAUSE = re.compile(r"[^，,]+[，,]?")


# "我哥哥叫张伟，是一名医生": the clause after it goes on about the brother, not the user.
SOMEONE_ELSE = re.compile(
    r"^我(?:的|家的?|们家)?(?:猫|狗|宠物|老公|老婆|丈夫|妻子|太太|先生|爱人|男朋友|女朋友|男友|女友|对象|儿子|女儿|孩子|闺女|小孩|宝宝|爸爸|妈妈|父亲|母亲"
    r"|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|同事|朋友|同学|室友|邻居|上级|上司|领导|老板|经理|主管|组长|总监|导师|师傅"
    r"|老爸|老妈|爸|妈|哥(?!们)|姐|弟|妹|闺蜜)"
)
# "以前我喜欢靠窗的座位，现在更喜欢…": a time word before "我" does not change who the subject is.
_PAST_LEAD = re.compile(r"^(?:以前|之前|原来|过去|曾经|小时候|当年)[，,]?")


# "我养了一只猫，是只英短": the clause introduces someone, and what follows without a subject is theirs
_INTRODUCES = re.compile(r"(?:养了?|有|生了?|添了?|收养了?)(?:[一两二三四][只条个位])?[\u4e00-\u9fff]{0,3}?"
                         r"(?:猫|狗|宠物|儿子|女儿|孩子|宝宝|闺女)[，,。\s]*$")


def about_someone_else(clause: str) -> bool:
    """The clause is about someone of the user's ("我老婆…", "我家猫…"), or introduces them ("我养了一只猫")."""
    return SOMEONE_ELSE.match(clause) is not None or _INTRODUCES.search(clause) is not None


def carry_subject(sentence: str) -> str:
    parts = _CLAUSE.findall(sentence)
    for index in range(1, len(parts)):
        previous = _PAST_LEAD.sub("", parts[index - 1])
        if (previous.startswith("我") and not previous.startswith("我们") and not about_someone_else(previous)
                and _CONTINUES_SUBJECT.match(parts[index])):
            parts[index] = "我" + parts[index]
    return "".join(parts)
