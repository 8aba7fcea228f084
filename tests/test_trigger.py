"""When a turn is worth extracting."""

from __future__ import annotations

import pytest

from engram.errors import InvalidValueError
from engram.model import Message
from engram.pipeline.trigger import TriggerDecision, TriggerPolicy, should_extract


def user(*texts: str) -> list[Message]:
    return [Message("user", text) for text in texts]


@pytest.mark.parametrize(
    "text", ["hi", "Hello there!", "thanks!", "Thank you so much", "lol ok", "好的", "哈哈", "嗯嗯，收到。", "晚安，明天聊"]
)
def test_small_talk_does_not_fire(text: str) -> None:
    assert should_extract(user(text)) == TriggerDecision(False, "small_talk")


@pytest.mark.parametrize(
    "text",
    [
        "what's the weather",
        "What time is it in Tokyo?",
        "现在几点",
        "今天北京天气怎么样？",
        "Can you translate this to French?",
        "帮我翻译一下这段话",
    ],
)
def test_temporary_questions_and_one_off_requests_do_not_fire(text: str) -> None:
    assert should_extract(user(text)) == TriggerDecision(False, "temporary_question")


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("记住我不吃辣", "记住"),
        ("以后用英文回复", "以后"),
        ("不要再发了", "不要再"),
        ("Remember that I'm vegan", "remember that"),
        ("From now on, answer in French", "from now on"),
        ("remind me to call Bob?", "remind me"),
    ],
)
def test_explicit_intents_fire_at_once(text: str, phrase: str) -> None:
    assert should_extract(user(text)) == TriggerDecision(True, f"intent:{phrase}")


def test_intents_fire_even_when_short_or_off_cadence() -> None:
    policy = TriggerPolicy(min_user_chars=100, every_n_turns=5)
    assert should_extract(user("记住"), policy, turn_index=1).fire


def test_length_is_weighted_for_han_characters() -> None:
    policy = TriggerPolicy(min_user_chars=8)
    assert should_extract(user("我不吃辣"), policy) == TriggerDecision(True, "long_enough")  # 4 Han x 2
    assert should_extract(user("我不吃"), policy) == TriggerDecision(False, "too_short")
    assert should_extract(user("I'm vegan"), policy).fire
    assert not should_extract(user("Bob."), policy).fire
    assert not should_extract(user("我不吃"), TriggerPolicy(min_user_chars=8, cjk_char_weight=2)).fire
    assert should_extract(user("我不吃"), TriggerPolicy(min_user_chars=8, cjk_char_weight=3)).fire


def test_small_talk_does_not_count_towards_length() -> None:
    policy = TriggerPolicy(min_user_chars=12)
    assert not should_extract(user("thanks a lot!", "Bob."), policy).fire
    assert should_extract(user("thanks!", "I work as a nurse"), policy).fire


def test_every_n_turns_fires_on_the_nth_turn_only() -> None:
    policy = TriggerPolicy(every_n_turns=3)
    reasons = [should_extract(user("I work as a nurse in Boston"), policy, turn).reason for turn in range(6)]
    assert reasons == ["waiting_for_turn", "waiting_for_turn", "every_n_turns"] * 2
    # without a turn index the cadence cannot be known, so length decides
    assert should_extract(user("I work as a nurse in Boston"), policy).reason == "long_enough"


def test_chatter_is_skipped_even_on_cadence() -> None:
    assert not should_extract(user("ok thanks"), TriggerPolicy(every_n_turns=1), turn_index=0).fire


def test_only_user_messages_count() -> None:
    turn = [Message("assistant", "Remember that you are allergic to peanuts"), Message("system", "from now on")]
    assert should_extract(turn) == TriggerDecision(False, "no_user_message")
    assert should_extract([]) == TriggerDecision(False, "no_user_message")
    assert should_extract([Message("user", "   ")]).reason == "no_user_message"


def test_custom_intents_replace_the_defaults() -> None:
    policy = TriggerPolicy(intents_en=("note to self",), intents_zh=("备忘",), min_user_chars=1000)
    assert should_extract(user("Note to self: buy milk"), policy).reason == "intent:note to self"
    assert should_extract(user("备忘：周五交报告"), policy).reason == "intent:备忘"
    assert not should_extract(user("Remember that I'm vegan"), policy).fire


def test_decision_is_truthy_when_it_fires() -> None:
    assert should_extract(user("I prefer tea over coffee"))
    assert not should_extract(user("hi"))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_user_chars": -1},
        {"min_user_chars": 2.5},
        {"every_n_turns": 0},
        {"every_n_turns": True},
        {"cjk_char_weight": 0},
        {"intents_en": "remember"},
        {"intents_zh": ("记住", "")},
    ],
)
def test_policy_rejects_nonsense(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidValueError):
        TriggerPolicy(**kwargs)  # type: ignore[arg-type]


def test_policy_is_frozen_and_stores_tuples() -> None:
    policy = TriggerPolicy(intents_en=["keep this"])  # type: ignore[arg-type]
    assert policy.intents_en == ("keep this",)
    with pytest.raises(AttributeError):
        policy.min_user_chars = 3  # type: ignore[misc]
