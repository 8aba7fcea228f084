"""parse_json_answer: repairs what small models break, refuses what it cannot know."""

from __future__ import annotations

import pytest

from engram.errors import LLMResponseError
from engram.llm.jsonrepair import parse_json_answer

REPAIRABLE = [
    ('{"a": 1}', {"a": 1}),
    ('  [1, 2, 3]\n', [1, 2, 3]),
    ('```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
    ('```\n{"a": 1}\n```', {"a": 1}),
    ('Here you go:\n```JSON\n{"a": 1}\n```\nLet me know!', {"a": 1}),
    ('Sure! The memories are {"a": "x"} and that is all.', {"a": "x"}),
    ('Based on [m1] and [m2]: {"a": 1}', {"a": 1}),
    ('{"a": [1, 2,],}', {"a": [1, 2]}),
    ('[{"a": 1},, {"b": 2},]', [{"a": 1}, {"b": 2}]),
    ("{'kind': 'fact', 'content': 'It\\'s \"quoted\"'}", {"kind": "fact", "content": "It's \"quoted\""}),
    ('{"a": True, "b": False, "c": None}', {"a": True, "b": False, "c": None}),
    ("{'a': True, 'b': [None]}", {"a": True, "b": [None]}),
    ('{kind: "rule", importance: 0.9}', {"kind": "rule", "importance": 0.9}),
    ('{"a": 1, // why\n "b": 2 /* note */}', {"a": 1, "b": 2}),
    ('{"a": 1 "b": 2}', {"a": 1, "b": 2}),
    ('{"text": "line one\nline two"}', {"text": "line one\nline two"}),
    ('{"s": "\\u4f60\\u597d \\ud83d\\ude00"}', {"s": "你好 😀"}),
    ('{"content": "用户喜欢喝“乌龙茶”，不喝咖啡"}', {"content": "用户喜欢喝“乌龙茶”，不喝咖啡"}),
    ('{"n": -1.5e2, "m": 0}', {"n": -150.0, "m": 0}),
    ('{"a": 1}\n{"b": 2}', {"a": 1}),
    # truncation: close the brackets, drop the unfinished tail
    ('{"memories": [{"a": 1}, {"b": 2}', {"memories": [{"a": 1}, {"b": 2}]}),
    ('{"memories": [{"a": 1}, {"b": 2}]', {"memories": [{"a": 1}, {"b": 2}]}),
    ('[{"a": 1}, {"b": "unfinished str', [{"a": 1}]),
    ('[{"a": 1}, {"b": "done", "c": "unfin', [{"a": 1}, {"b": "done"}]),
    ('[1, 2, 12', [1, 2]),
    ('[1, 2, 0.', [1, 2]),
    ('[true, fal', [True]),
    ('{"a": 1, "b":', {"a": 1}),
    ('{"a": 1, "b"', {"a": 1}),
    ('{"a": 1, "b": "x\\', {"a": 1}),
    ('```json\n{"memories": [{"a": 1}', {"memories": [{"a": 1}]}),
    # a half-written object keeps only its finished members; callers validate what is missing
    ('{"memories": [{"kind": "fact", "content": "The user', {"memories": [{"kind": "fact"}]}),
]


@pytest.mark.parametrize(("text", "expected"), REPAIRABLE)
def test_repairs(text, expected):
    assert parse_json_answer(text) == expected


UNUSABLE = [
    "",
    "   \n ",
    "I could not find anything worth remembering.",
    '{"memories": [',
    '[{"a',
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": undefined}',
    '{"a": hello}',
    '{"a" 1}',
    '{"a": }',
    '{: 1}',
    '{"a": "bad \\q escape"}',
    "(1, 2)",
]


@pytest.mark.parametrize("text", UNUSABLE)
def test_refuses_and_keeps_raw_text(text):
    with pytest.raises(LLMResponseError) as caught:
        parse_json_answer(text)
    assert caught.value.raw == text


def test_scalar_json_is_returned_as_is():
    # A bare JSON scalar is valid JSON; callers decide whether its shape is usable.
    assert parse_json_answer("42") == 42
    assert parse_json_answer('"hi"') == "hi"


def test_non_string_input_is_refused():
    with pytest.raises(LLMResponseError):
        parse_json_answer(None)  # type: ignore[arg-type]


def test_never_invents_a_closing_quote():
    answer = parse_json_answer('[{"content": "The user likes tea"}, {"content": "The user hates cof')
    assert answer == [{"content": "The user likes tea"}]
