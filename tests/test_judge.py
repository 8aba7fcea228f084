"""What the shipped weights judge: accuracy floors on the fixed held-out slice of the
writers' data (tests/data/judge_slice.jsonl, never trained on) and the issue's cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.pipeline.judge.learned import LearnedJudge, default_judge
from engram.slots import TEAM, USER, Utterance, is_other

SLICE = Path(__file__).parent / "data" / "judge_slice.jsonl"
DURABLE = ("fact", "change")
JUNK = ("chatter", "question", "request", "passing", "pasted")


def kind(subject: str) -> str:
    return "user" if subject == USER else "team" if subject == TEAM else "other" if is_other(subject) else "none"


@pytest.fixture(scope="module")
def judge() -> LearnedJudge:
    return default_judge()


@pytest.fixture(scope="module")
def judged_slice(judge):
    lines = [json.loads(line) for line in SLICE.read_text(encoding="utf-8").splitlines()]
    return list(zip(lines, judge.judge([line["text"] for line in lines])))


def share(hits: list[bool]) -> float:
    assert hits, "the slice holds no line of this kind"
    return sum(hits) / len(hits)


def test_the_slice_is_big_enough_to_mean_something(judged_slice):
    assert len(judged_slice) >= 200
    assert {line["lang"] for line, _ in judged_slice} == {"en", "zh"}


def test_utterance_type_floor(judged_slice):
    assert share([j.utterance == line["type"] for line, j in judged_slice]) >= UTTERANCE_FLOOR


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_durable_statements_are_kept_per_language(judged_slice, lang):
    assert share([j.durable for line, j in judged_slice if line["type"] in DURABLE and line["lang"] == lang]) \
        >= DURABLE_RECALL_FLOOR


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_turns_that_state_nothing_are_dropped_per_language(judged_slice, lang):
    assert share([not j.durable for line, j in judged_slice if line["type"] in JUNK and line["lang"] == lang]) \
        >= JUNK_RECALL_FLOOR


def test_subject_and_slot_floors(judged_slice):
    kept = [(line, j) for line, j in judged_slice if line["type"] in DURABLE and j.durable]
    assert share([kind(j.subject) == line["subject_kind"] for line, j in kept]) >= SUBJECT_FLOOR
    assert share([j.slot == line["slot"] for line, j in kept]) >= SLOT_FLOOR


def test_no_everyday_request_in_the_slice_is_judged_a_forget(judged_slice):
    requests = [j for line, j in judged_slice if line["type"] == "request"]
    assert share([j.utterance is not Utterance.FORGET for j in requests]) >= REQUEST_NOT_FORGET_FLOOR


# Floors a little under what the shipped weights measure on the slice (652 lines: type
# 0.910; durable kept en 0.967 / zh 0.962; nothing-durable dropped en 0.937 / zh 0.957;
# subject kind 0.929, slot 0.881; requests not judged forgets 0.987), so a retrain that
# loses ground fails here. docs/JUDGE.md has the cross-writer figures.
UTTERANCE_FLOOR = 0.87
DURABLE_RECALL_FLOOR = 0.93
JUNK_RECALL_FLOOR = 0.90
SUBJECT_FLOOR = 0.89
SLOT_FLOOR = 0.84
REQUEST_NOT_FORGET_FLOOR = 0.95


@pytest.mark.parametrize(("text", "subject", "slot"), [
    ("上个月搬到深圳了，还在适应这边的天气", USER, "residence"),
    ("Aisha Rahman is my boss now after the reorg", USER, "manager"),
    ("my colleague Ravi is allergic to peanuts", "other:colleague ravi", "allergies"),
    ("I'm 34", USER, "age"),
    ("我吃素", USER, "diet"),
])
def test_the_issues_durable_cases(judge, text, subject, slot):
    [judgement] = judge.judge([text])
    assert judgement.durable, judgement
    assert (judgement.subject, judgement.slot) == (subject, slot)


@pytest.mark.parametrize(("text", "utterance"), [
    ("Ugh, Mondays", Utterance.CHATTER),
    ("brb", Utterance.CHATTER),
    ("谢谢，很有帮助！", Utterance.CHATTER),
    ("in Lisbon this week for a conference", Utterance.PASSING),
])
def test_the_issues_turns_that_state_nothing_durable(judge, text, utterance):
    [judgement] = judge.judge([text])
    assert judgement.utterance is utterance
    assert (judgement.subject, judgement.slot) == (USER, None)


def test_vectors_given_or_embedded_judge_alike_and_deterministically(judge):
    from engram.embed.local import USEEmbedder

    texts = ["my son Leo is 7", "brb", "我们公司用飞书", "scratch my address from your memory please"]
    vectors = USEEmbedder().embed(texts)
    assert judge.judge(texts, vectors=vectors) == judge.judge(texts) == judge.judge(texts, vectors=vectors)


def test_confidence_is_the_utterance_probability(judge):
    for judgement in judge.judge(["I'm 34", "brb", "what's a good recipe for dal"]):
        assert 1 / len(Utterance) < judgement.confidence <= 1.0
