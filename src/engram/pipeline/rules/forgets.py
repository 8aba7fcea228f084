"""Spoken forgets: "forget that", "别再记这个", "I'd rather not have my address on record".

A forget is an instruction about memory, never a memory itself. ``forget_request``
reads one sentence and says what the user wants gone: what they just said (``that``,
``这个``, ``刚才那句``), a topic they name ("what I told you about my sister",
"关于我前任的事"), or a reminder ("you can bin that reminder", "提醒可以取消了").
The pipeline resolves it against the store (pipeline/forget.py) and forgets through
the write core, so it is audited and ``restore`` brings the memory back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .common import is_chinese, split_sentences

_EN_FORGET = re.compile(
    r"\b(?:forget|delete|erase|remove|drop|bin|scrap|scratch|strike|wipe|ignore|disregard|cancel|undo|unsave"
    r"|take back)\b[^.?!]*?"
    r"|\b(?:don't|do not|dont|no need to|you don't need to|please don't|pls don't|stop|never)\s+(?:remember|keep|store"
    r"|save|record|note|log|track|hold on to)(?:ing)?\b"
    r"|\b(?:rather|prefer)\s+(?:you\s+)?(?:not|didn't|did not|don't|wouldn't)\s+(?:have|keep|remember|store|save"
    r"|record|know)\b"
    r"|\b(?:off the record|not on record|not written down|don't want (?:that|it|this) (?:on record|written|saved|stored"
    r"|remembered|kept))\b",
    re.IGNORECASE,
)
# the forget is about memory, not about the world ("I forget my keys" is a fact; "forget that" is not)
_EN_ABOUT_MEMORY = re.compile(
    r"\b(?:that|this|it|what i (?:said|told you|mentioned|wrote)|about|the part|my|everything|all of (?:that|it)"
    r"|reminder|on record|written down|from (?:your )?memory|you)\b|^(?:scratch|strike) that",
    re.IGNORECASE,
)
_EN_NOT_A_FORGET = re.compile(r"^(?:i|we)\s+(?:always\s+|often\s+|keep\s+|tend to\s+)?(?:forget|forgot)\b|\bdon't forget\b"
                              r"|\b(?:people|everyone|everybody|they|he|she|nobody)\s+(?:always\s+|often\s+|usually\s+)?"
                              r"(?:forget|forgets|forgot)\b"
                              r"|\bnever forget\b|\bdo not forget\b|\bforget(?:ting)? (?:my|the) (?:keys|wallet|phone)",
                              re.IGNORECASE)
_EN_TOPIC = re.compile(
    r"\b(?:forget|delete|erase|remove|drop|wipe|remembering|keep(?:ing)?|store|storing)\s+(?:the |that |this |all the )"
    r"(?P<thing>[\w' -]{2,40}?)\s+(?:thing|stuff|bit|part|info|information|details?|business)\b"
    r"|\b(?:about|regarding)\s+(?P<about>(?:my |the |our |that |his |her )?[\w' -]{2,60}?)\s*(?:[,.;!?]|$|\bplease\b"
    r"|\bpls\b|\btoo\b|\bi'd\b|\bi would\b|\bthanks\b|\btbh\b)"
    r"|\b(?:forget|delete|erase|remove|drop|wipe|remember|keep|store|save|record|have)\s+(?:that |the fact that )?"
    r"(?P<mine>(?:my|our) [\w' -]{2,40}?)\s*(?:[,.;!?]|$|\bon record\b|\bwritten\b|\bplease\b|\bpls\b|\bfrom\b)",
    re.IGNORECASE,
)
_EN_REMINDER = re.compile(r"\breminders?\b", re.IGNORECASE)

_ZH_FORGET = re.compile(
    r"忘掉|忘了吧|忘记(?:吧|掉|我说)|别记|不用记|不要记|别再记|不必记|甭记|删掉|删了|删除|去掉|抹掉|清掉|别存|不要存|不用存|别保存"
    r"|取消(?:掉|那个)?提醒|提醒(?:可以)?(?:取消|删|不用了|去掉)|不用(?:再)?提醒|当我没说|就当没说|收回|撤回"
    r"|不想让你记|不希望你记|别让你记|不要你记|别记着|不用记着|这个不用记|别往心里记|不要保存|不用保存|别保存|不要存|不用存"
    r"|当没听(?:过|见|到)|当我没讲|别留着|不要留着|不要记录|别记录"
)
_ZH_NOT_A_FORGET = re.compile(r"^我(?:总是|老是|经常|容易|又)?忘|别忘了|不要忘|别忘记|记得")
_ZH_TOPIC = re.compile(
    r"(?:忘掉|忘记|删掉|删除|删了|去掉|别记|不用记|不要记)(?:我的?)(?P<after>[^，,。！!？?]{1,10}?)(?:那条|那个|信息|吧|了|$|，|,)"
    r"|(?:关于|有关)(?P<about>[^，,。！!？?]{1,20}?)(?:的(?:事|那些|那个|内容|话|信息)?|那条|那件事)"
    r"|(?:我说的|我说过的|我提的|我讲的|说的那个|之前说的)(?P<said>[^，,。！!？?]{1,16}?)(?:那条|那些|那个|的事|的话|的|，|,|$)"
    r"|(?:把|将)?(?:我的?)(?P<mine>[^，,。！!？?的]{1,10}?)(?:那条|那个|信息)?(?:删|去掉|忘|别记|不用记)"
    r"|(?:记着|记住)我的(?P<kept>[^，,。！!？?]{1,10})"
    r"|^(?:我的?)?(?P<matter>[^，,。！!？?刚这那]{1,10}?)(?:那个事儿?|那件事|那些事|的事儿?|那档子事)"
)
_ZH_REMINDER = re.compile(r"提醒")


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    text: str  # the sentence as said
    about: str | None  # the topic named, or None for "that / what I just said"
    reminder: bool = False  # a reminder to cancel ("bin that reminder", "提醒可以取消")


def forget_requests(text: str) -> list[ForgetRequest]:
    """The spoken forgets of one message, sentence by sentence."""
    return [r for s in split_sentences(text) if (r := forget_request(s, chinese=is_chinese(s))) is not None]


def without_forgets(text: str) -> str:
    """The message without its spoken forgets (never memories themselves)."""
    sentences = split_sentences(text)
    kept = [s for s in sentences if forget_request(s, chinese=is_chinese(s)) is None]
    return text if len(kept) == len(sentences) else " ".join(kept)


def forget_request(sentence: str, *, chinese: bool) -> ForgetRequest | None:
    if chinese:
        return _zh(sentence)
    return _en(sentence)


def _en(sentence: str) -> ForgetRequest | None:
    text = sentence.strip()
    if _EN_NOT_A_FORGET.search(text) or not _EN_FORGET.search(text) or not _EN_ABOUT_MEMORY.search(text):
        return None
    match = _EN_TOPIC.search(text)
    about = None
    if match is not None:
        about = (match.group("thing") or match.group("about") or match.group("mine") or "").strip() or None
        if about and re.fullmatch(r"(?:that|this|it|what i said|everything)", about, re.IGNORECASE):
            about = None
    return ForgetRequest(text, about, bool(_EN_REMINDER.search(text)))


def _zh(sentence: str) -> ForgetRequest | None:
    text = sentence.strip()
    if _ZH_NOT_A_FORGET.search(text) or not _ZH_FORGET.search(text):
        return None
    match = _ZH_TOPIC.search(text)
    about = None
    if match is not None:
        about = _ZH_TOPIC_NOISE.sub("", next((g for g in match.groups() if g), "")) or None
        if about and (_ZH_FORGET.search(about) or _ZH_POINTING.fullmatch(about)):
            about = None
    return ForgetRequest(text, about, bool(_ZH_REMINDER.search(text)))


_ZH_TOPIC_NOISE = re.compile(r"那个事儿?|那件事|那些事|的事儿?|那些|那个|那条|你就?|了|吧|啊|呀|^我的?")
_ZH_POINTING = re.compile(r"这个?|那个?|这些|那些|刚才|刚刚|这句|那句|这条|那条|刚说|刚才说|刚刚说")
