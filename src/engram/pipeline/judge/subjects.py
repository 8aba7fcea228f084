"""Who "another person" is: the relation word and/or the name the text gives them.

The judge's subject head decides *that* a statement is about someone else (learned); this
small closed-class reader only spells *who*, for ``slots.other``: "my colleague Ravi is
allergic to peanuts" -> "other:colleague ravi", "老婆不吃辣" -> "other:老婆". Relation
words are a closed class in both languages; a name is the capitalised word(s) right after
the relation ("my son Leo"), before it ("Sarah, my wife"), or, with no relation word, the
capitalised name the sentence opens with ("Priya just started at Google").
"""

from __future__ import annotations

import re

from ...slots import other

SOMEONE = "someone"  # when the text names neither a relation nor a person

_EN_RELATIONS = (
    "wife", "husband", "partner", "spouse", "girlfriend", "boyfriend", "fiancée", "fiancee", "fiancé", "fiance",
    "ex-wife", "ex-husband", "ex", "son", "daughter", "stepson", "stepdaughter", "kid", "kids", "child", "baby",
    "toddler", "twins", "mom", "mum", "mother", "mama", "dad", "father", "papa", "parents", "mother-in-law",
    "father-in-law", "sister-in-law", "brother-in-law", "in-laws", "brother", "sister", "sibling", "grandma",
    "grandmother", "granny", "grandpa", "grandfather", "grandson", "granddaughter", "aunt", "uncle", "cousin",
    "niece", "nephew", "colleague", "coworker", "co-worker", "teammate", "boss", "manager", "supervisor", "lead",
    "cto", "ceo", "cofounder", "co-founder", "friend", "buddy", "bestie", "roommate", "flatmate", "housemate",
    "neighbor", "neighbour", "landlord", "landlady", "client", "customer", "mentor", "mentee", "assistant", "intern",
    "report", "student", "teacher", "tutor", "coach", "doctor", "therapist", "dentist", "nanny", "babysitter",
)
_ZH_RELATIONS = (
    "妻子", "老婆", "太太", "媳妇", "爱人", "老公", "丈夫", "先生", "男朋友", "女朋友", "男友", "女友", "对象",
    "未婚妻", "未婚夫", "前妻", "前夫", "儿子", "女儿", "闺女", "孩子", "宝宝", "小孩", "双胞胎", "妈妈", "老妈",
    "母亲", "爸爸", "老爸", "父亲", "爸妈", "父母", "哥哥", "姐姐", "弟弟", "妹妹", "爷爷", "奶奶", "外婆", "姥姥",
    "外公", "姥爷", "婆婆", "公公", "岳母", "丈母娘", "岳父", "老丈人", "叔叔", "阿姨", "舅舅", "姑姑", "表哥",
    "表姐", "表弟", "表妹", "堂哥", "堂姐", "堂弟", "堂妹", "侄子", "侄女", "外甥", "外甥女", "孙子", "孙女",
    "同事", "领导", "老板", "上司", "经理", "主管", "组长", "总监", "朋友", "好友", "闺蜜", "哥们", "兄弟", "室友",
    "舍友", "邻居", "房东", "客户", "导师", "老师", "同学", "合伙人", "实习生", "下属", "医生", "妈", "爸", "哥", "姐",
)
_EN_ALTERNATION = "|".join(re.escape(word) for word in sorted(_EN_RELATIONS, key=len, reverse=True))
_ZH_ALTERNATION = "|".join(re.escape(word) for word in sorted(_ZH_RELATIONS, key=len, reverse=True))
_NAME = r"[A-Z][a-zA-Z'\-]+(?: [A-Z][a-zA-Z'\-]+)?"
_NOT_NAMES = frozenset({
    "i", "i'm", "i've", "i'd", "i'll", "my", "we", "our", "the", "a", "an", "he", "she", "they", "it", "his", "her",
    "their", "and", "but", "so", "also", "just", "is", "was", "has", "had", "will", "can", "does", "did", "ok",
    "okay", "btw", "oh", "hey", "hi", "lol", "anyway", "actually", "yes", "no", "please", "thanks", "fyi", "ps",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "today", "tomorrow", "yesterday",
})

_EN_RELATION_THEN_NAME = re.compile(
    rf"\b(?i:my|our|his|her|their)\s+(?:\w+\s+)?(?i:({_EN_ALTERNATION}))\b(?:,?\s+({_NAME}))?")
_EN_NAME_THEN_RELATION = re.compile(rf"\b({_NAME}),?\s+(?:is\s+)?(?i:my|our)\s+(?:\w+\s+)?(?i:({_EN_ALTERNATION}))\b")
_EN_BARE_RELATION = re.compile(rf"\b({_EN_ALTERNATION})\b(?:'s)?", re.IGNORECASE)
_EN_OPENING_NAME = re.compile(rf"^\W*({_NAME})")
_ZH_RELATION = re.compile(rf"({_ZH_ALTERNATION})\s*((?:小|老|阿|大)[\u4e00-\u9fff]|[A-Z][a-z]+)?")


def other_subject(text: str) -> str:
    """The ``other:...`` subject string for a statement the judge found to be about another person."""
    return other(_relation_and_name(text) or SOMEONE)


def _relation_and_name(text: str) -> str | None:
    return _english(text) or _chinese(text)


def _english(text: str) -> str | None:
    before = _EN_NAME_THEN_RELATION.search(text)
    if before and _is_name(before.group(1)):
        return f"{before.group(2)} {before.group(1)}"
    after = _EN_RELATION_THEN_NAME.search(text)
    if after:
        name = after.group(2)
        return f"{after.group(1)} {name}" if name and _is_name(name) else after.group(1)
    bare = _EN_BARE_RELATION.search(text)
    if bare and not _ZH_RELATION.search(text[: bare.start()]):
        return bare.group(1)
    opening = _EN_OPENING_NAME.match(text)
    return opening.group(1) if opening and _is_name(opening.group(1)) else None


def _chinese(text: str) -> str | None:
    found = _ZH_RELATION.search(text)
    if found is None:
        return None
    return f"{found.group(1)} {found.group(2)}" if found.group(2) else found.group(1)


def _is_name(words: str) -> bool:
    return all(word.lower() not in _NOT_NAMES for word in words.split())
