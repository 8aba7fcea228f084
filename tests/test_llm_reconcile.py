"""LLMReconciler with the scripted fake: temp ids map back, guards hold."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from engram.errors import LLMResponseError
from engram.llm import ScriptedLLM, TokenUsage
from engram.model import Kind, MemoryRecord, Scope
from engram.pipeline.candidate import Candidate
from engram.pipeline.llm_reconcile import LLMReconciler, Proposal
from engram.pipeline.prompts import RECONCILE_SCHEMA

WHEN = datetime(2025, 1, 2, tzinfo=UTC)
SCOPE = Scope.for_user("acme", "dana")


def record(record_id: str, content: str, kind: Kind = Kind.FACT) -> MemoryRecord:
    return MemoryRecord(id=record_id, scope=SCOPE, kind=kind, content=content, importance=0.5,
                        confidence=0.9, created_at=WHEN, updated_at=WHEN, valid_from=WHEN)


SIMILAR = [
    record("rec-aaa", "The user lives in Berlin."),
    record("rec-bbb", "The user prefers tea.", Kind.PREFERENCE),
]
MOVED = Candidate(Kind.FACT, "The user moved to Munich in 2025.", 0.9, 0.8, ("u-7",))
SIMILAR_ZH = [record("rec-zh1", "用户住在杭州。"), record("rec-zh2", "用户喜欢喝乌龙茶。", Kind.PREFERENCE)]
TEA_ZH = Candidate(Kind.PREFERENCE, "用户喜欢喝冻顶乌龙茶，不加糖。", 0.9, 0.5)


def reply(event, target_id, content="The user lives in Munich since 2025.", reason="the user moved") -> str:
    return json.dumps({"event": event, "target_id": target_id, "content": content, "reason": reason},
                      ensure_ascii=False)


def propose(text: str, candidate: Candidate = MOVED, similar=SIMILAR) -> Proposal:
    return LLMReconciler(ScriptedLLM([text])).propose(candidate, similar)


def test_supersede_maps_the_temp_id_to_the_real_record():
    llm = ScriptedLLM([reply("SUPERSEDE", "0")], model="gpt-test")
    proposal = LLMReconciler(llm).propose(MOVED, SIMILAR)
    assert proposal == Proposal("SUPERSEDE", "rec-aaa", "The user lives in Munich since 2025.", "the user moved")
    assert proposal.usage.completion_tokens > 0
    (call,) = llm.calls
    assert call.json_schema == RECONCILE_SCHEMA
    system, user = call.messages
    assert "SUPERSEDE" in system.content
    assert "NEW memory (fact): The user moved to Munich in 2025." in user.content
    assert "[0] (fact, 2025-01-02) The user lives in Berlin." in user.content
    assert "[1] (preference, 2025-01-02) The user prefers tea." in user.content
    assert "rec-aaa" not in user.content


def test_chinese_update_uses_the_chinese_prompt():
    llm = ScriptedLLM([reply("UPDATE", 1, "用户喜欢喝冻顶乌龙茶，不加糖。", "补充了茶的种类")])
    proposal = LLMReconciler(llm).propose(TEA_ZH, SIMILAR_ZH)
    assert (proposal.event, proposal.target_id) == ("UPDATE", "rec-zh2")
    assert proposal.content == "用户喜欢喝冻顶乌龙茶，不加糖。"
    system, user = llm.calls[0].messages
    assert "长期记忆" in system.content
    assert user.content.startswith("新记忆 (preference): 用户喜欢喝冻顶乌龙茶")
    assert "[1] (preference, 2025-01-02) 用户喜欢喝乌龙茶。" in user.content


@pytest.mark.parametrize("target", [1, "1", " [1] "])
def test_target_id_forms(target):
    assert propose(reply("UPDATE", target)).target_id == "rec-bbb"


def test_add_has_no_target_even_if_the_model_gives_one():
    proposal = propose(reply("add", "1", "The user moved to Munich in 2025."))
    assert (proposal.event, proposal.target_id) == ("ADD", None)


def test_noop_without_content_restates_the_target():
    proposal = propose(json.dumps({"event": "NOOP", "target_id": "0", "content": "", "reason": "known"}))
    assert proposal == Proposal("NOOP", "rec-aaa", "The user lives in Berlin.", "known")


def test_noop_without_target_or_content_restates_the_candidate():
    proposal = propose(json.dumps({"event": "NOOP", "target_id": None}))
    assert proposal == Proposal("NOOP", None, MOVED.content, "")


def test_sloppy_but_repairable_answer():
    text = ("```json\n{'event': 'SUPERSEDE', 'target_id': 0, "
            "'content': 'The user lives in Munich.', 'reason': 'moved',}\n```")
    assert propose(text) == Proposal("SUPERSEDE", "rec-aaa", "The user lives in Munich.", "moved")


@pytest.mark.parametrize(("text", "message"), [
    (reply("UPDATE", "2"), "not one of the ids shown"),            # only 0 and 1 were shown
    (reply("SUPERSEDE", "rec-aaa"), "not one of the ids shown"),    # real ids were never shown
    (reply("UPDATE", -1), "UPDATE needs a target_id"),             # -1 is how models say "none"
    (reply("UPDATE", 7), "not one of the ids shown"),
    (reply("UPDATE", True), "not one of the ids shown"),
    (reply("UPDATE", None), "UPDATE needs a target_id"),
    (reply("SUPERSEDE", "null"), "SUPERSEDE needs a target_id"),
    (reply("DELETE", "0"), "unknown event 'DELETE'"),
    (reply(None, "0"), "unknown event None"),
    (reply("ADD", None, content="  "), "ADD needs non-empty content"),
    (reply("UPDATE", "0", content=None), "UPDATE needs non-empty content"),
    ('["ADD"]', "expected a JSON object"),
    ("I think this is new information.", "no usable JSON"),
])
def test_guards_raise_with_the_raw_answer(text, message):
    with pytest.raises(LLMResponseError, match=message) as caught:
        propose(text)
    assert caught.value.raw == text


def test_no_similar_memories_means_add_without_asking():
    llm = ScriptedLLM([])
    proposal = LLMReconciler(llm).propose(MOVED, [])
    assert proposal == Proposal("ADD", None, MOVED.content, "no similar memories")
    assert proposal.usage == TokenUsage() and llm.calls == []
