"""The topic a spoken forget names ("my address", "前任"), or None when it points back at
what was just said ("forget that", "当我没说")."""

from __future__ import annotations

import re

from .forget_words import ZH_CUE, has_forget_cue

_EN_TOPIC = re.compile(
    r"\b(?:forget|delete|erase|remove|drop|wipe|remembering|keep(?:ing)?|store|storing)\s+(?:the |that |this |all the )"
    r"(?P<thing>[\w' -]{2,40}?)\s+(?:thing|stuff|bit|part|info|information|details?|business)\b"
    r"|\b(?:about|regarding)\s+(?P<about>(?:my |the |our |that |his |her )?[\w' -]{2,60}?)\s*(?:[,.;!?]|$|\bplease\b"
    r"|\bpls\b|\btoo\b|\bi'd\b|\bi would\b|\bthanks\b|\btbh\b|\bfrom\b|\banymore\b|\bany ?more\b)"
    r"|\b(?:forget|delete|erase|remove|drop|wipe|remember|keep|store|save|record|have)\s+(?:that |the fact that )?"
    r"(?P<mine>(?:my|our) [\w' -]{2,40}?)\s*(?:[,.;!?]|$|\bon record\b|\bwritten\b|\bplease\b|\bpls\b|\bfrom\b"
    r"|\banymore\b|\bany ?more\b)",
    re.IGNORECASE,
)
_EN_NOISE = re.compile(
    r"\b(?:on second thoughts?|second thoughts?|you know what|to be honest|come to think of it|in fact|after all"
    r"|hey|hi|ok|okay|so|oh|um+|uh+|hmm+|ah+|erm|eh|meh|ugh|welp|well|actually|also|and|but|just|kindly|please|pls|plz|thanks|thank you|thx|can|could"
    r"|would|will|you|u|your|yourself|i|i'd|i'm|id|me|we|want|wanna|need|needs|like|rather|prefer|go ahead and|to"
    r"|forget|forgot|unlearn|delete|erase|remove|drop|bin|scrap|scratch|strike|wipe|clear|purge|ditch|toss|get rid of"
    r"|throw out|throw away|cancel|undo|unsave|disregard|ignore|retract|nix|lose|dump|let go of|don'?t|do not|dont"
    r"|no need|needn'?t|stop|quit|never|not|no longer|won'?t|wouldn'?t|shouldn'?t|didn'?t|did not|remember|remembering"
    r"|keep|keeping|store|storing|save|saving|record|recording|note|log|track|tracking|hold|retain|know|have|has"
    r"|memory|memories|on record|off the record|notes|file|profile|anymore|any more|any longer|from now on|now"
    r"|what|that|which|i said|i told|i mentioned|i wrote|i shared|told|said|mentioned|wrote|shared|earlier|before"
    r"|about|regarding|re|on|onto|into|out|off|up|away|with|at|by|over|of|from|in|the fact|fact|facts|anything|everything|all|stuff|thing|things|info"
    r"|information|details?|bit|part|business|the|a|an|is|it's|its|it|this|that's|there|here|entry|line|bits"
    r"|for me|too|as well|tbh|honestly|please do|again|okay\?|got|gotten|saved|'ve|ve|'m|had|whatever|there"
    r"|myself|lol|haha|btw|fyi|thing you|you've|you have|you got|i've|i'm|im|ive|just|really|very)\b",
    re.IGNORECASE,
)
_EN_POINTING = re.compile(r"(?:that|this|it|what i (?:just )?said|everything|all of (?:that|it)|the last (?:one|bit))",
                          re.IGNORECASE)
_ZH_TOPIC = re.compile(
    r"(?:忘掉|忘记|删掉|删除|删了|去掉|别记|不用记|不要记)(?:我的?)(?P<after>[^，,。！!？?]{1,10}?)(?:那条|那个|信息|吧|了|$|，|,)"
    r"|(?:关于|有关)(?P<about>[^，,。！!？?]{1,20}?)(?:的(?:事|那些|那个|内容|话|信息)?|那条|那件事)"
    r"|(?:我说的|我说过的|我提的|我讲的|说的那个|之前说的)(?P<said>[^，,。！!？?]{1,16}?)(?:那条|那些|那个|的事|的话|的|，|,|$)"
    r"|(?:把|将)?(?:我的?)(?P<mine>[^，,。！!？?的]{1,10}?)(?:那条|那个|信息)?(?:删|去掉|忘|别记|不用记)"
    r"|(?:记着|记住)我的(?P<kept>[^，,。！!？?]{1,10})"
    r"|^(?:我的?)?(?P<matter>[^，,。！!？?刚这那]{1,10}?)(?:那个事儿?|那件事|那些事|的事儿?|那档子事)"
)
_ZH_TOPIC_NOISE = re.compile(r"那个事儿?|那件事|那些事|的事儿?|那些|那个|那条|你就?|了|吧|啊|呀|^我的?")
_ZH_POINTING = re.compile(r"这个?|那个?|这些|那些|刚才|刚刚|这句|那句|这条|那条|刚说|刚才说|刚刚说|我说的|上一句|上面")
_ZH_NOISE = re.compile(
    r"请|麻烦|帮我|帮忙|你|您|就|再|也|都|还是|可以|能不能|能|吧|了|啊|呀|哈|呢|嘛|哦|喔|噢|一下|以后|之后|从现在起|现在"
    r"|忘掉|忘记|忘了|忘|删掉|删除|删了|删|去掉|去除|抹掉|抹去|清掉|清除|清空|移除|丢掉|扔掉|划掉|拿掉|作废|撤回|收回"
    r"|别再?记(?:着|住|录)?|不用再?记(?:着|住|录)?|不要再?记(?:着|住|录)?|不必记|甭记|不需要记|记住|记着|记录|记忆|记"
    r"|别存|不要存|不用存|保存|存着|存|别留|不要留|留着|不想让|不希望|让|当我没说|当没说|就当|没说过|没说"
    r"|关于|有关|把|将|那条|那个|这条|这个|那些|这些|的事儿?|的事情|事情|那件事|信息|资料|内容|记录|方面|部分|全部|所有|的"
    r"|我说过|我说|我提过|我提|我讲|之前|刚才|刚刚|上次|我的|我|从|里面|里|哈+|嘿+|呗|着|先|全|都|那档子",
)


def topic_named(sentence: str, *, chinese: bool) -> str | None:
    """What the forget names ("my address", "前任"), or None when it points back ("that"): read
    in the clause that asks ("时区别记了，我老出差" → 时区), else in the clauses before it
    ("salary info, forget it" → salary)."""
    clauses = [c for c in _CLAUSE.split(sentence) if c.strip()] or [sentence]
    asking = next((i for i, c in enumerate(clauses) if has_forget_cue(c)), 0)
    read = _zh_topic if chinese else _en_topic
    about = read(clauses[asking])
    if about is None and asking > 0:
        about = read(" ".join(clauses[:asking]), stripped_only=True)
    return about


_CLAUSE = re.compile(r"[,，;；:：]|\s+-\s+|\s+but\s+|\s+so\s+")
_EN_WHERE = re.compile(r"\bwhere (?:i|we|my \w+)(?:'m| am| are|'re| is)? (?:from|live|lives|living|work|works|grew up|stay)\b",
                       re.IGNORECASE)
_PRONOUN = re.compile(r"(?:me|myself|us|it|them|him|her|this|that|you)", re.IGNORECASE)


def _en_topic(text: str, *, stripped_only: bool = False) -> str | None:
    match = None if stripped_only else _EN_TOPIC.search(text)
    about = None
    if match is not None:
        about = (match.group("thing") or match.group("about") or match.group("mine") or "").strip() or None
        if about and _PRONOUN.fullmatch(about):
            about = None
    if about is None and (phrase := _EN_WHERE.search(text)) is not None:  # "forget where I'm from"
        about = phrase.group(0)
    if about is None:
        about = _EN_NOISE.sub(" ", re.sub(r"[^\w' -]", " ", text))
        about = " ".join(w for w in about.split() if w not in ("'", "-")) or None
        if about is not None and (len(about) < 3 or _PRONOUN.fullmatch(about)):
            about = None
    if about and _EN_POINTING.fullmatch(about):
        return None
    return about


def _zh_topic(text: str, *, stripped_only: bool = False) -> str | None:
    match = None if stripped_only else _ZH_TOPIC.search(text)
    about = None
    if match is not None:
        about = _ZH_TOPIC_NOISE.sub("", next((g for g in match.groups() if g), "")) or None
        if about and (ZH_CUE.search(about) or _ZH_POINTING.fullmatch(about)):
            about = None
    if about is None:
        rest = _ZH_NOISE.sub("", re.sub(r"[^\w\u4e00-\u9fff]", "", text))
        about = rest if len(rest) >= 2 and not _ZH_POINTING.fullmatch(rest) else None
    return about
