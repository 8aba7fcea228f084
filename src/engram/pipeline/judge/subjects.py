"""Who "another person" is: the relation word and/or the name the text gives them.

The judge's subject head decides *that* a statement is about someone else (learned); this
small closed-class reader only spells *who*, for ``slots.other``: "my colleague Ravi is
allergic to peanuts" -> "other:colleague ravi", "老婆不吃辣" -> "other:wife". Relation
words are a closed class in both languages, each spelled by one English name; a name is
the capitalised word(s) right after the relation ("my son Leo"), before it ("Sarah, my
wife"), or, with no relation word, the capitalised name the sentence opens with ("Priya
just started at Google").
"""

from __future__ import annotations

import re

from ...slots import OTHER_PREFIX, other

SOMEONE = "someone"  # when the text names neither a relation nor a person
UNNAMED = OTHER_PREFIX + SOMEONE

# Relation words in both languages, each to one English name, so that "my wife" and "老婆"
# are one subject whatever language the user writes in.
_CANONICAL: dict[str, tuple[str, ...]] = {
    "wife": ("wife", "wifey", "妻子", "老婆", "太太", "媳妇"),
    "husband": ("husband", "hubby", "老公", "丈夫", "先生"),
    "partner": ("partner", "spouse", "爱人", "对象"),
    "girlfriend": ("girlfriend", "gf", "女朋友", "女友"),
    "boyfriend": ("boyfriend", "bf", "男朋友", "男友"),
    "fiancée": ("fiancée", "fiancee", "未婚妻"),
    "fiancé": ("fiancé", "fiance", "未婚夫"),
    "ex-wife": ("ex-wife", "前妻"),
    "ex-husband": ("ex-husband", "前夫"),
    "ex": ("ex", "前任"),
    "son": ("son", "stepson", "儿子"),
    "daughter": ("daughter", "stepdaughter", "女儿", "闺女"),
    "kid": ("kid", "kids", "child", "children", "toddler", "孩子", "小孩", "娃"),
    "baby": ("baby", "宝宝"),
    "twins": ("twins", "双胞胎"),
    "mom": ("mom", "mum", "mother", "mama", "mommy", "mummy", "妈妈", "老妈", "母亲", "妈"),
    "dad": ("dad", "father", "papa", "daddy", "爸爸", "老爸", "父亲", "爸"),
    "parents": ("parents", "爸妈", "父母"),
    "brother": ("brother", "bro", "哥哥", "弟弟", "哥"),
    "sister": ("sister", "sis", "姐姐", "妹妹", "姐"),
    "grandma": ("grandma", "grandmother", "granny", "nana", "奶奶", "外婆", "姥姥"),
    "grandpa": ("grandpa", "grandfather", "爷爷", "外公", "姥爷"),
    "mother-in-law": ("mother-in-law", "婆婆", "岳母", "丈母娘"),
    "father-in-law": ("father-in-law", "公公", "岳父", "老丈人"),
    "in-laws": ("in-laws",),
    "sister-in-law": ("sister-in-law", "嫂子", "弟妹", "小姑子"),
    "brother-in-law": ("brother-in-law", "姐夫", "妹夫", "小舅子"),
    "uncle": ("uncle", "叔叔", "舅舅", "伯伯"),
    "aunt": ("aunt", "auntie", "姑姑", "阿姨", "姨妈"),
    "cousin": ("cousin", "表哥", "表姐", "表弟", "表妹", "堂哥", "堂姐", "堂弟", "堂妹"),
    "nephew": ("nephew", "侄子", "外甥"),
    "niece": ("niece", "侄女", "外甥女"),
    "grandson": ("grandson", "孙子"),
    "granddaughter": ("granddaughter", "孙女"),
    "colleague": ("colleague", "coworker", "co-worker", "workmate", "同事"),
    "teammate": ("teammate", "队友"),
    "boss": ("boss", "manager", "supervisor", "领导", "老板", "上司", "经理", "主管", "组长", "总监"),
    "cofounder": ("cofounder", "co-founder", "business partner", "合伙人"),
    "report": ("report", "direct report", "下属"),
    "intern": ("intern", "实习生"),
    "client": ("client", "customer", "客户"),
    "friend": ("friend", "buddy", "bestie", "best friend", "mate", "朋友", "好友", "闺蜜", "哥们", "兄弟"),
    "roommate": ("roommate", "flatmate", "housemate", "室友", "舍友"),
    "neighbor": ("neighbor", "neighbour", "邻居"),
    "landlord": ("landlord", "landlady", "房东"),
    "mentor": ("mentor", "导师"),
    "teacher": ("teacher", "tutor", "coach", "老师"),
    "classmate": ("classmate", "同学"),
    "doctor": ("doctor", "therapist", "dentist", "医生"),
    "nanny": ("nanny", "babysitter", "保姆"),
}
_CANONICAL_OF = {word: canon for canon, words in _CANONICAL.items() for word in words}
_EN_RELATIONS = tuple(w for w in _CANONICAL_OF if w.isascii() or not re.search(r"[\u4e00-\u9fff]", w))
_ZH_RELATIONS = tuple(w for w in _CANONICAL_OF if re.search(r"[\u4e00-\u9fff]", w))
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
_ZH_OWNED = re.compile(r"(?:我|我们|咱|咱们)(?:的|家|家的)?$")
_ZH_RELATION = re.compile(rf"({_ZH_ALTERNATION})\s*((?:小|老|阿|大)[\u4e00-\u9fff]|[A-Z][a-z]+)?")


def other_subject(text: str) -> str:
    """The ``other:...`` subject string for a statement the judge found to be about another person."""
    return other(_relation_and_name(text) or SOMEONE)


def canonical_relation(word: str) -> str:
    """The one English name of a relation word ("老婆", "Wife" -> "wife"); other words as they are."""
    return _CANONICAL_OF.get(word.lower(), _CANONICAL_OF.get(word, word))


def _relation_and_name(text: str) -> str | None:
    return _english(text) or _chinese(text)


def _english(text: str) -> str | None:
    before = _EN_NAME_THEN_RELATION.search(text)
    if before and _is_name(before.group(1)):
        return f"{canonical_relation(before.group(2))} {before.group(1)}"
    after = _EN_RELATION_THEN_NAME.search(text)
    if after:
        name = after.group(2)
        relation = canonical_relation(after.group(1))
        return f"{relation} {name}" if name and _is_name(name) else relation
    bare = _EN_BARE_RELATION.search(text)
    if bare and not _ZH_RELATION.search(text[: bare.start()]):
        return canonical_relation(bare.group(1))
    opening = _EN_OPENING_NAME.match(text)
    return opening.group(1) if opening and _is_name(opening.group(1)) else None


def _chinese(text: str) -> str | None:
    """The first relation the speaker owns ("我先生", "我们领导"), else the first one named."""
    matches = list(_ZH_RELATION.finditer(text))
    if not matches:
        return None
    found = next((m for m in matches if _ZH_OWNED.search(text[: m.start()])), matches[0])
    relation = canonical_relation(found.group(1))
    return f"{relation} {found.group(2)}" if found.group(2) else relation


def _is_name(words: str) -> bool:
    return all(word.lower() not in _NOT_NAMES for word in words.split())


def same_subject(first: str, second: str) -> bool:
    """Whether two subjects name one person: equal, or another person's subjects that share
    their relation where one of them gives no name ("other:wife" / "other:wife sarah"), or
    share a name ("other:sarah" / "other:wife sarah"). Someone the text did not name is
    nobody known: never the same as anyone."""
    if UNNAMED in (first, second):
        return False
    if first == second:
        return True
    if not (first.startswith(OTHER_PREFIX) and second.startswith(OTHER_PREFIX)):
        return False
    a, b = first.removeprefix(OTHER_PREFIX).split(), second.removeprefix(OTHER_PREFIX).split()
    relations = set(_CANONICAL)
    a_relation, b_relation = a[0] in relations, b[0] in relations
    if a_relation and b_relation:
        return a[0] == b[0] and (len(a) == 1 or len(b) == 1 or a[1:] == b[1:])
    a_name, b_name = a[1:] if a_relation else a, b[1:] if b_relation else b
    return bool(a_name) and a_name == b_name
