"""LLMExtractor with the scripted fake (and once through the real HTTP client)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from engram.errors import LLMResponseError
from engram.llm import OpenAICompatibleLLM, ScriptedLLM, TokenUsage
from engram.model import Kind, Message
from engram.pipeline.llm_extract import LLMExtractor
from engram.pipeline.prompts import EXTRACTION_SCHEMA, dominant_language
from stub_openai import StubOpenAI, chat_reply

ENGLISH = [
    Message("user", "Hi, I'm Dana and I run the Berlin office.", id="u-1"),
    Message("assistant", "Nice to meet you, Dana!", id="a-1"),
    Message("user", "Please never schedule meetings on Fridays. I prefer tea over coffee.", id="u-2"),
]
CHINESE = [
    Message("user", "我叫王芳，在杭州做产品经理。", id="c-1"),
    Message("assistant", "你好，王芳！", id="c-2"),
    Message("user", "我不吃香菜，周五之前要把季度报告交给老板。", id="c-3"),
]


def answer(*items: dict) -> str:
    return json.dumps({"memories": list(items)}, ensure_ascii=False)


def item(kind="fact", content="The user is called Dana.", confidence=0.9, importance=0.8, source_ids=("m1",)):
    return {"kind": kind, "content": content, "confidence": confidence, "importance": importance,
            "source_ids": list(source_ids)}


def test_english_conversation_gives_candidates_with_real_message_ids():
    llm = ScriptedLLM([answer(
        item("fact", "The user is called Dana and runs the Berlin office.", 0.95, 0.9, ["m1"]),
        item("rule", "Never schedule the user's meetings on Fridays.", 0.9, 0.85, ["m3"]),
        item("preference", "The user prefers tea over coffee.", 0.8, 0.5, ["m3", "m1"]),
    )], model="gpt-test")
    extractor = LLMExtractor(llm)
    candidates = extractor.extract(ENGLISH)
    assert [(c.kind, c.content, c.confidence, c.importance, c.source_message_ids) for c in candidates] == [
        (Kind.FACT, "The user is called Dana and runs the Berlin office.", 0.95, 0.9, ("u-1",)),
        (Kind.RULE, "Never schedule the user's meetings on Fridays.", 0.9, 0.85, ("u-2",)),
        (Kind.PREFERENCE, "The user prefers tea over coffee.", 0.8, 0.5, ("u-2", "u-1")),
    ]
    assert {c.extractor for c in candidates} == {"llm:gpt-test"}
    assert extractor.last_result.dropped == ()
    assert extractor.last_result.language == "en"
    assert extractor.last_usage == extractor.last_result.usage
    assert extractor.last_usage.prompt_tokens > 100  # the fake counts characters / 4


def test_english_prompt_shows_temp_ids_and_asks_for_the_schema():
    llm = ScriptedLLM([answer()])
    LLMExtractor(llm, temperature=0.0).extract(ENGLISH)
    (call,) = llm.calls
    assert call.json_schema == EXTRACTION_SCHEMA
    assert call.temperature == 0.0
    system, user = call.messages
    assert system.role == "system" and "long-term memories" in system.content
    assert "[m1] user: Hi, I'm Dana" in user.content
    assert "[m2] assistant: Nice to meet you" in user.content
    assert "u-1" not in user.content  # real ids stay out of the prompt


def test_chinese_conversation_uses_the_chinese_prompt_and_keeps_chinese_content():
    llm = ScriptedLLM([answer(
        item("fact", "用户叫王芳，在杭州做产品经理。", 0.95, 0.8, ["m1"]),
        item("preference", "用户不吃香菜。", 0.9, 0.6, ["m3"]),
        item("todo", "用户要在周五之前把季度报告交给老板。", 0.85, 0.9, ["m3"]),
    )])
    extractor = LLMExtractor(llm)
    candidates = extractor.extract(CHINESE)
    assert [(c.kind, c.content, c.source_message_ids) for c in candidates] == [
        (Kind.FACT, "用户叫王芳，在杭州做产品经理。", ("c-1",)),
        (Kind.PREFERENCE, "用户不吃香菜。", ("c-3",)),
        (Kind.TODO, "用户要在周五之前把季度报告交给老板。", ("c-3",)),
    ]
    system, user = llm.calls[0].messages
    assert "长期记忆" in system.content and "使用用户所用的语言" in system.content
    assert user.content.startswith("对话：\n[m1] user: 我叫王芳")
    assert extractor.last_result.language == "zh"


def test_message_time_and_speaker_name_are_shown():
    at = datetime(2025, 3, 14, 9, 30, tzinfo=UTC)
    llm = ScriptedLLM([answer()])
    LLMExtractor(llm).extract([Message("user", "Ship it tomorrow.", id="x", name="Dana", at=at)])
    assert "[m1] user (Dana) 2025-03-14T09:30+00:00: Ship it tomorrow." in llm.calls[0].messages[1].content


def test_bad_items_are_dropped_and_noted(caplog):
    good = item("fact", "The user is called Dana.", 0.9, 0.8, ["m1"])
    llm = ScriptedLLM([answer(
        good,
        item(kind="episode"),                       # a kind extraction may not propose
        item(kind="opinion"),                       # not a kind at all
        item(confidence=1.5),                       # out of range
        item(importance=-0.1),
        item(confidence="0.9"),                     # a string is not a number
        item(importance=float("nan")) | {"importance": None},
        item(source_ids=["m9"]),                    # not in the conversation
        item(source_ids=[]),                        # uncited
        item(content="   "),
        "just a string",
        good,                                       # duplicate
    )])
    extractor = LLMExtractor(llm)
    candidates = extractor.extract(ENGLISH)
    assert [c.content for c in candidates] == ["The user is called Dana."]
    dropped = extractor.last_result.dropped
    assert [d.index for d in dropped] == list(range(1, 12))
    reasons = [d.reason for d in dropped]
    assert "unknown kind 'episode'" in reasons[0]
    assert "confidence must be in [0, 1]" in reasons[2]
    assert "['m9']" in reasons[6]
    assert reasons[-1] == "duplicate of an earlier item"
    assert dropped[9].item == "just a string"
    assert "dropped extracted item 6" in caplog.text


def test_lenient_but_exact_source_ids_and_kinds():
    llm = ScriptedLLM([answer(item(kind=" Preference ", source_ids=[3, "[m1]", "1"]))])
    (candidate,) = LLMExtractor(llm).extract(ENGLISH)
    assert candidate.kind is Kind.PREFERENCE
    assert candidate.source_message_ids == ("u-2", "u-1")


def test_messages_without_ids_are_cited_by_position_but_not_recorded():
    llm = ScriptedLLM([answer(item(source_ids=["m1"]))])
    (candidate,) = LLMExtractor(llm).extract([Message("user", "I'm Dana.")])
    assert candidate.source_message_ids == ()


def test_repairable_answer_from_a_small_model():
    sloppy = ("Here are the memories:\n```json\n{'memories': [{'kind': 'preference', "
              "'content': 'The user prefers tea.', 'confidence': 0.8, 'importance': 0.4, "
              "'source_ids': ['m3'],},],}\n```")
    (candidate,) = LLMExtractor(ScriptedLLM([sloppy])).extract(ENGLISH)
    assert candidate.content == "The user prefers tea." and candidate.source_message_ids == ("u-2",)


def test_bare_list_and_single_item_answers_are_accepted():
    bare_list = json.dumps([item()])
    single = json.dumps(item())
    for text in (bare_list, single):
        (candidate,) = LLMExtractor(ScriptedLLM([text])).extract(ENGLISH)
        assert candidate.content == "The user is called Dana."


def test_truncated_answer_keeps_finished_items_and_notes_the_broken_one():
    text = '{"memories": [' + json.dumps(item()) + ', {"kind": "fact", "content": "The user wor'
    extractor = LLMExtractor(ScriptedLLM([text]))
    assert [c.content for c in extractor.extract(ENGLISH)] == ["The user is called Dana."]
    assert extractor.last_result.dropped[0].reason == "content is missing or empty"


@pytest.mark.parametrize("text", [
    "Sorry, I cannot help with that.",
    '{"facts": ["The user is Dana"]}',
    '{"memories": "none"}',
    '{"memories": [',
    "42",
])
def test_unusable_answer_raises_with_raw_text(text):
    extractor = LLMExtractor(ScriptedLLM([text]))
    with pytest.raises(LLMResponseError) as caught:
        extractor.extract(ENGLISH)
    assert caught.value.raw == text
    assert extractor.last_usage.completion_tokens > 0  # the spend is still known


def test_empty_answer_is_a_real_empty_result():
    extractor = LLMExtractor(ScriptedLLM(['{"memories": []}']))
    assert extractor.extract(ENGLISH) == []
    assert extractor.last_result.dropped == ()


def test_no_messages_means_no_call():
    llm = ScriptedLLM([])
    extractor = LLMExtractor(llm)
    assert extractor.extract([]) == []
    assert llm.calls == [] and extractor.last_usage == TokenUsage()


def test_usage_and_model_are_reported():
    llm = ScriptedLLM([answer(item())])
    result = LLMExtractor(llm).run(ENGLISH)
    prompt_chars = sum(len(m.content) for m in llm.calls[0].messages)
    assert result.usage == TokenUsage(-(-prompt_chars // 4), -(-len(answer(item())) // 4))
    assert result.model == "scripted-fake"


def test_through_the_http_client_with_a_repairable_answer():
    content = 'Sure!\n```json\n{"memories": [{"kind": "rule", "content": "Never book Friday meetings.", ' \
              '"confidence": 0.9, "importance": 0.7, "source_ids": ["m3"],}]}\n```'
    with StubOpenAI([chat_reply(content, prompt_tokens=321, completion_tokens=45)]) as stub:
        llm = OpenAICompatibleLLM("stub-model", stub.base_url, "k", backoff=0.01)
        extractor = LLMExtractor(llm)
        (candidate,) = extractor.extract(ENGLISH)
    assert candidate.content == "Never book Friday meetings." and candidate.kind is Kind.RULE
    assert extractor.last_usage == TokenUsage(321, 45)
    assert stub.requests[0].body["response_format"]["json_schema"]["name"] == "engram_extraction"


def test_through_the_http_client_with_an_unparseable_answer():
    with StubOpenAI([chat_reply("I found: the user, Dana, tea")]) as stub:
        extractor = LLMExtractor(OpenAICompatibleLLM("stub-model", stub.base_url, "k", backoff=0.01))
        with pytest.raises(LLMResponseError) as caught:
            extractor.extract(ENGLISH)
    assert caught.value.raw == "I found: the user, Dana, tea"


@pytest.mark.parametrize(("texts", "language"), [
    (["我叫王芳"], "zh"),
    (["I love 北京 and Shanghai a lot"], "en"),
    (["我喜欢用 Python 写代码"], "zh"),
    (["", "123"], "en"),
])
def test_dominant_language(texts, language):
    assert dominant_language(texts) == language


def test_the_model_gives_subject_and_slot_and_the_prompt_asks_for_them():
    llm = ScriptedLLM([answer(
        {**item("fact", "The user's colleague Ravi is allergic to peanuts."), "subject": "other:Colleague Ravi",
         "slot": "allergies"},
        {**item("fact", "The user lives in Oakland."), "subject": "user", "slot": "residence"},
        item("fact", "The user is called Dana."),  # an older model answering without them: the judge decides
    )])
    candidates = LLMExtractor(llm).extract(ENGLISH)
    assert [(c.subject, c.slot) for c in candidates] == [("other:colleague ravi", "allergies"),
                                                         ("user", "residence"), (None, None)]
    system = llm.calls[0].messages[0].content
    assert "other:colleague ravi" in system and "residence" in system and "{slots}" not in system
    assert {"subject", "slot"} <= set(EXTRACTION_SCHEMA["properties"]["memories"]["items"]["required"])


@pytest.mark.parametrize("field, value", [("slot", "favourite_colour"), ("subject", "the neighbour"),
                                          ("subject", "other:")])
def test_an_unknown_slot_or_subject_drops_the_item_with_the_reason(field, value):
    llm = ScriptedLLM([answer({**item(), field: value}, item("fact", "The user is called Dana."))])
    extractor = LLMExtractor(llm)
    assert [c.content for c in extractor.extract(ENGLISH)] == ["The user is called Dana."]
    assert field in extractor.last_result.dropped[0].reason
