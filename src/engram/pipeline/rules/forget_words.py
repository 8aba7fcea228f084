"""The words that can ask to forget: a removal word ("forget", "scratch", "don't keep", 删,
别记 …). Only sentences with one reach the rules and the classifier (forgets.py)."""

from __future__ import annotations

import re

from .common import is_chinese

_EN_CUE = re.compile(
    r"\b(?:forget|forgot|unlearn|delete|erase|remove|drop|bin|scrap|scratch|strike|wipe|clear|purge|ditch|toss"
    r"|get rid of|throw (?:out|away)|take (?:that |this |it )?back|cancel|undo|unsave|disregard|ignore|retract"
    r"|nix|lose|dump|let go of|unremember|hang on ?to|hold on ?to|pretend i (?:didn'?t|never|did not))\b"
    r"|\b(?:don'?t|do not|no need to|needn'?t|stop|quit|never|not|no longer|won'?t|wouldn'?t|shouldn'?t|rather)\b"
    r"[^.?!]{0,30}?\b(?:remember|keep|keeping|store|storing|sav(?:e|ing)|record|note|log|track|hold|retain|know)"
    r"|\boff the record\b",
    re.IGNORECASE,
)
ZH_CUE = re.compile(
    r"忘|删|去掉|去除|抹掉|抹去|清掉|清除|清空|移除|丢掉|扔掉|划掉|拿掉|作废|撤回|收回|取消|当我没|当没|就当"
    r"|(?:别|不用|不要|不必|甭|不需要)你?(?:再)?记|别存|不要存|不用存|别保存|不要保存|不用保存"
    r"|别留|不要留|不想让你记|不希望你记|别记录|不要记录"
)


# words that hold 忘 and remove nothing: the notes app (备忘录), unforgettable (难忘, 忘不了),
# forgetful (健忘), a friendship across ages (忘年交), absorbed (忘我)
_ZH_NOT_REMOVAL = re.compile(r"备忘|难忘|忘不了|忘不掉|健忘|忘年|忘我|忘怀")


def has_forget_cue(sentence: str) -> bool:
    """A removal word: the only sentences the classifier is asked about."""
    if is_chinese(sentence) or _has_han(sentence):
        sentence = _ZH_NOT_REMOVAL.sub("", sentence)
    pattern = ZH_CUE if is_chinese(sentence) else _EN_CUE
    return bool(pattern.search(sentence)) or bool(ZH_CUE.search(sentence) and _has_han(sentence))


def _has_han(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)
