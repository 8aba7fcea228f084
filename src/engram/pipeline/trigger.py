"""When to run extraction on a conversation turn.

Extraction costs an LLM call (or at least a pass of the rules) and every
memory it writes has to be governed, so a turn is only worth extracting when
the user said something that could last. ``should_extract`` decides, in order:

1. no user message in the turn: no;
2. an explicit intent ("记住", "以后", "不要再", "remember that", "from now on"):
   yes, at once, whatever the cadence;
3. nothing but small talk ("hi", "thanks", "好的", "哈哈") or what the keeper
   (rules/keep.py) finds nothing lasting in — passing questions, one-off requests,
   passing states ("what's the weather", "现在几点", "translate this"): no;
4. with ``every_n_turns`` set and ``turn_index`` given: yes on every N-th turn
   only (batch mode: the caller extracts the window of the last N turns);
5. otherwise: yes when the substantive user text is at least
   ``min_user_chars`` long (a Han character counts ``cjk_char_weight`` times).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InvalidValueError
from ..model import Message
from .rules import keep
from .rules.common import is_chinese, is_small_talk, split_sentences, weighted_length
from .rules.forgets import forget_request

DEFAULT_INTENTS_ZH: tuple[str, ...] = (
    "记住", "记一下", "记得", "以后", "今后", "从现在开始", "从今以后", "不要再", "别再", "提醒我", "别忘了", "请注意",
)
DEFAULT_INTENTS_EN: tuple[str, ...] = (
    "remember that", "remember this", "please remember", "keep in mind", "from now on", "going forward",
    "don't ever", "never again", "remind me", "don't forget", "for future reference", "note that",
)


@dataclass(frozen=True, slots=True)
class TriggerPolicy:
    min_user_chars: int = 8
    intents_zh: tuple[str, ...] = DEFAULT_INTENTS_ZH
    intents_en: tuple[str, ...] = DEFAULT_INTENTS_EN
    every_n_turns: int | None = None
    cjk_char_weight: int = 2  # one Han character says about as much as two Latin letters

    def __post_init__(self) -> None:
        if isinstance(self.min_user_chars, bool) or not isinstance(self.min_user_chars, int) or self.min_user_chars < 0:
            raise InvalidValueError(f"min_user_chars must be a non-negative integer, got {self.min_user_chars!r}")
        if self.every_n_turns is not None and (
            isinstance(self.every_n_turns, bool) or not isinstance(self.every_n_turns, int) or self.every_n_turns < 1
        ):
            raise InvalidValueError(f"every_n_turns must be a positive integer or None, got {self.every_n_turns!r}")
        if not isinstance(self.cjk_char_weight, int) or self.cjk_char_weight < 1:
            raise InvalidValueError(f"cjk_char_weight must be a positive integer, got {self.cjk_char_weight!r}")
        for name in ("intents_zh", "intents_en"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(item, str) and item.strip() for item in value):
                raise InvalidValueError(f"{name} must be a sequence of non-empty strings")
            object.__setattr__(self, name, tuple(value))


@dataclass(frozen=True, slots=True)
class TriggerDecision:
    fire: bool
    reason: str  # "intent:<phrase>", "small_talk", "temporary_question", "every_n_turns", "long_enough", ...

    def __bool__(self) -> bool:
        return self.fire


def should_extract(
    messages: Sequence[Message], policy: TriggerPolicy | None = None, turn_index: int | None = None
) -> TriggerDecision:
    """Whether this turn's messages are worth extracting; ``turn_index`` counts turns from 0."""
    policy = policy or TriggerPolicy()
    texts = [m.content for m in messages if m.role == "user" and m.content and m.content.strip()]
    if not texts:
        return TriggerDecision(False, "no_user_message")
    intent = find_intent(texts, policy)
    if intent is not None:
        return TriggerDecision(True, f"intent:{intent}")
    chatter = [chatter_kind(text) for text in texts]
    if all(kind is not None for kind in chatter):
        only_small_talk = all(kind == "small_talk" for kind in chatter)
        return TriggerDecision(False, "small_talk" if only_small_talk else "temporary_question")
    if policy.every_n_turns is not None and turn_index is not None:
        if (turn_index + 1) % policy.every_n_turns == 0:
            return TriggerDecision(True, "every_n_turns")
        return TriggerDecision(False, "waiting_for_turn")
    substance = sum(weighted_length(text, policy.cjk_char_weight) for text, kind in zip(texts, chatter) if kind is None)
    if substance >= policy.min_user_chars:
        return TriggerDecision(True, "long_enough")
    return TriggerDecision(False, "too_short")


def find_intent(texts: Sequence[str], policy: TriggerPolicy) -> str | None:
    """The first explicit intent phrase in the user's words (case-insensitive for English)."""
    for text in texts:
        folded = text.casefold().replace("’", "'")
        for phrase in policy.intents_zh:
            if phrase in text:
                return phrase
        for phrase in policy.intents_en:
            if phrase.casefold() in folded:
                return phrase
    return None


def chatter_kind(text: str) -> str | None:
    """"small_talk" or "temporary_question" when no sentence of ``text`` can state something durable."""
    kinds = {_sentence_chatter(sentence) for sentence in split_sentences(text)} or {"small_talk"}
    if None in kinds:
        return None
    return "small_talk" if kinds == {"small_talk"} else "temporary_question"


def _sentence_chatter(sentence: str) -> str | None:
    """Chatter when the keeper finds nothing in it that could last (a question, a one-off
    request, a passing state: rules/keep.py) and it asks nothing to be forgotten."""
    if is_small_talk(sentence):
        return "small_talk"
    if forget_request(sentence, chinese=is_chinese(sentence)) is not None or not keep.passing(sentence):
        return None
    return "temporary_question"
