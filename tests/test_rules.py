"""The embedded rule extractor: contents, kinds, calibration, and measured quality.

Measured on tests/data/extraction_labelled.jsonl (367 utterances, 179 en / 188 zh,
82 of them negatives, 298 expected items), after the gate (confidence >= 0.7,
importance >= 0.3):

    all  precision 1.000  recall 0.997
    en   precision 1.000  recall 1.000
    zh   precision 1.000  recall 0.994
    slot agreement (matched items in their labelled category) 141/141

These are figures on a set the rules were developed against, so optimistic.
What was measured on utterances no rule had seen, each time before fixing:

* en-075.., zh-075.. (48, first version): precision 1.000, recall 0.794.
* split "slots-heldout" (75: names, homes, employers, jobs, approval flows,
  budgets, report style, diets, team tools, first statements and statements of
  change): precision 0.814, recall 0.547 (en 0.739 / 0.548, zh 0.900 / 0.545),
  slot agreement 1/35; the rules were then fixed against them.
* split "slots-fresh" (46, written after those fixes): precision 1.000, recall
  0.881 (en 0.905, zh 0.857), slot agreement 35/37; the gaps were then fixed
  except zh-158 (a boss's move: no Chinese pattern for colleagues).
* tests/data/extraction_heldout.jsonl (48: 24 en / 24 zh, written before the
  issue-12 rules — relations to named people, tool switches, Chinese report-style
  instructions — and never used to develop them; split "classes-dev" here was):
  before: en precision 0.812 recall 0.619, zh 0.842 / 0.762; after: en 0.950 /
  0.905, zh 0.909 / 0.952. Its zh misses were then read: a relative's clause
  ("我老婆叫林小慧，是一名护士") lent the user its subject; fixed on new dev
  examples (zh-208..210), re-measured zh 1.000 / 0.952 (no longer unseen text;
  docs/BENCHMARKS.md, "Chinese-first quality").
* tests/data/extraction_heldout2.jsonl (80: 40 en / 40 zh, 20 negatives, written
  without reading the rules): before: en precision 0.960 recall 0.774, zh 0.724 /
  0.677. Its errors were then read and fixed as classes on new dev examples (split
  "classes-dev2"): en 0.969 / 1.000, zh 0.912 / 1.000 (no longer unseen; three of
  the four false positives are true statements the labels did not list).

LoCoMo observation coverage (bench/extraction_eval.py, 1,487 gold facts): turn
level 0.491 raw / 0.435 gated, lexical (token F1 >= 0.5) 0.258; 78.6% of gated
candidates come from a turn that has a gold observation.

The floors below are the full-set figures minus a margin: regression guards,
not goals. The unseen-utterance figures above are the estimate for new text.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from engram.model import Kind, Message
from engram.pipeline.candidate import Candidate
from engram.pipeline.rules import RuleExtractor, extract_text
from engram.pipeline.rules.common import is_chinese, split_sentences

ROOT = Path(__file__).resolve().parents[1]
LABELLED = ROOT / "tests" / "data" / "extraction_labelled.jsonl"
LOCOMO = ROOT.parent / "shared" / "bench" / "locomo" / "locomo_dev.json"
GATE = 0.7

PRECISION_FLOOR = {"all": 0.95, "en": 0.93, "zh": 0.93}
RECALL_FLOOR = {"all": 0.93, "en": 0.9, "zh": 0.9}
SLOT_AGREEMENT_FLOOR = 0.9


def load_eval() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extraction_eval", ROOT / "bench" / "extraction_eval.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def extract(*texts: str, name: str | None = None) -> list[Candidate]:
    messages = [Message("user", text, id=f"m{i}", name=name) for i, text in enumerate(texts)]
    return RuleExtractor("patterns").extract(messages)


def only(text: str, name: str | None = None) -> Candidate:
    found = extract(text, name=name)
    assert len(found) == 1, [(c.kind, c.content) for c in found]
    return found[0]


# --- contents and kinds -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "content", "category"),
    [
        ("我叫张三", Kind.FACT, "用户名叫张三", "identity:name"),
        ("I prefer concise reports", Kind.PREFERENCE, "Prefers concise reports", "style:reports"),
        ("我不吃辣", Kind.PREFERENCE, "用户不吃辣", "taboo:abstain"),
        ("I'm allergic to peanuts", Kind.PREFERENCE, "Is allergic to peanuts", "taboo:allergy"),
        ("不要再给我发营销邮件", Kind.RULE, "不要再给用户发营销邮件", "instruction"),
        ("我们公司采用三级审批流程", Kind.RULE, "公司采用三级审批流程", "business_rule:approval"),
        ("报销超过5000元需要总监审批", Kind.RULE, "报销超过5000元需要总监审批", "business_rule:approval"),
        ("周五之前提交报告", Kind.TODO, "周五之前提交报告", "deadline"),
        ("remind me to call Bob tomorrow", Kind.TODO, "Needs to call Bob tomorrow", "reminder"),
        ("we decided to use PostgreSQL", Kind.CONCLUSION, "Decided to use PostgreSQL", "decision"),
        ("结论是先不上线新功能", Kind.CONCLUSION, "结论是先不上线新功能", "decision"),
        ("I work as a nurse", Kind.FACT, "Works as a nurse", "work:job"),
        ("我住在上海", Kind.FACT, "用户住在上海", "location:residence"),
        ("my daughter is 5", Kind.FACT, "User's daughter is 5", "family"),
        ("I have a dog named Rex", Kind.FACT, "Has a dog named Rex", "pet"),
        ("I've been playing chess since college", Kind.FACT, "Has been playing chess since college", "hobby"),
        ("Yesterday I went to a pottery class", Kind.EPISODE, "Yesterday the user went to a pottery class", "event"),
    ],
)
def test_statements_become_third_person_memories(text: str, kind: Kind, content: str, category: str) -> None:
    candidate = only(text)
    assert (candidate.kind, candidate.content, candidate.category) == (kind, content, category)
    assert candidate.confidence >= 0.7 and candidate.importance >= 0.3
    assert candidate.extractor == "rules"
    assert candidate.source_message_ids == ("m0",)


def test_confident_patterns_start_at_or_above_point_eight() -> None:
    for text in ("记住我对海鲜过敏", "My name is Ana Lima", "I prefer tea", "我们公司采用三级审批流程", "Remember that I use Vim"):
        assert only(text).confidence >= 0.8, text


def test_deadlines_are_kept_in_metadata() -> None:
    assert only("周五之前提交报告").metadata["deadline"] == "周五之前"
    assert only("remind me to call Bob tomorrow").metadata["deadline"] == "tomorrow"
    assert only("I need to file the taxes by April 15").metadata["deadline"] == "by April 15"


def test_the_speakers_name_replaces_user() -> None:
    assert only("I prefer concise reports", name="Ana").content == "Ana prefers concise reports"
    assert only("my daughter is 5", name="Ana").content == "Ana's daughter is 5"
    assert only("我不吃辣", name="张三").content == "张三不吃辣"


def test_first_person_words_are_rewritten() -> None:
    assert only("I live in Toronto with my partner").content == "Lives in Toronto with their partner"
    instruction = only("Never schedule meetings for me before 10am")
    assert instruction.content == "Never schedule meetings for the user before 10am"
    assert only("以后回复我的时候请用英文").content == "以后回复用户的时候用英文"


def test_one_candidate_per_statement() -> None:
    found = extract("I'm Tom, and I prefer tea over coffee. I live in Leeds.")
    assert [(c.kind, c.content) for c in found] == [
        (Kind.FACT, "User's name is Tom"),
        (Kind.PREFERENCE, "Prefers tea over coffee"),
        (Kind.FACT, "Lives in Leeds"),
    ]
    zh = extract("我是王磊，在杭州做前端开发，不吃香菜。")
    assert [c.content for c in zh] == ["用户名叫王磊", "用户在杭州做前端开发", "用户不吃香菜"]


def test_repeated_statements_are_merged_with_both_sources() -> None:
    found = extract("I prefer tea.", "Hello again. I prefer tea!")
    assert len(found) == 1
    assert found[0].source_message_ids == ("m0", "m1")


def test_only_user_messages_are_sources() -> None:
    messages = [
        Message("system", "I prefer tea", id="s"),
        Message("assistant", "I'm allergic to peanuts", id="a"),
        Message("tool", "My name is Bot", id="t"),
        Message("user", "I prefer coffee", id="u"),
    ]
    found = RuleExtractor().extract(messages)
    assert [(c.content, c.source_message_ids) for c in found] == [("Prefers coffee", ("u",))]


# --- calibration --------------------------------------------------------------------


def test_hedges_fall_below_the_gate() -> None:
    firm, hedged = only("I prefer tea"), only("I think I prefer tea")
    assert hedged.content == firm.content
    assert hedged.confidence < GATE <= firm.confidence
    assert only("我可能比较喜欢安静的地方").confidence < GATE
    assert all(c.confidence < GATE for c in extract("Maybe I'd like to try sushi someday."))


def test_explicit_intent_raises_confidence() -> None:
    plain, explicit = only("I use a screen reader"), only("Please keep in mind that I use a screen reader")
    assert explicit.content == plain.content
    assert explicit.confidence == pytest.approx(plain.confidence + 0.1)
    assert only("记住，我不吃香菜").confidence > only("我不吃香菜").confidence


def test_explicit_intent_keeps_statements_no_pattern_knows() -> None:
    candidate = only("Remember that the staging server is at 10.0.0.5")
    assert candidate.kind is Kind.FACT and candidate.category == "note"
    assert "10.0.0.5" in candidate.content and candidate.confidence >= 0.8


def test_undated_needs_are_weak_and_dated_ones_firm() -> None:
    assert only("I need to clean the garage").confidence < GATE
    assert only("I need to clean the garage by Friday").confidence >= 0.8
    assert extract("I need to relax") == []  # passing talk, not a task


@pytest.mark.parametrize(
    "text",
    [
        "hi", "thanks!", "好的", "哈哈哈", "嗯嗯，收到。", "lol ok",
        "What's your favorite color?", "Do you like pizza?", "你喜欢什么颜色？", "现在几点了？",
        "If I were rich, I would buy a boat.", "如果我中了彩票，我就辞职。", "要是预算再多一点就好了。",
        "My coworker told me that Jenny hates her boss.", "She said 'I hate spinach'.", "听说老王要离职了。",
        "他说“我从来不吃早饭”", "我不是说我讨厌咖啡。", "Translate this into French: I love cats.",
        "I'm not allergic to anything.", "帮我把这句话翻译成英文：我喜欢猫。",
    ],
)
def test_chatter_questions_hypotheticals_and_reported_speech_yield_nothing(text: str) -> None:
    assert extract(text) == []


def test_polite_requests_to_remember_are_not_questions() -> None:
    candidate = only("Can you remind me to book the dentist next week?")
    assert candidate.kind is Kind.TODO and "dentist" in candidate.content


def test_confidence_and_importance_stay_in_the_unit_interval() -> None:
    for c in extract("Remember that I'm allergic to peanuts and always answer in French.", "记住！我对花生过敏。"):
        assert 0.0 <= c.confidence <= 1.0 and 0.0 <= c.importance <= 1.0


# --- text handling ----------------------------------------------------------------


def test_sentence_splitting_in_both_languages() -> None:
    assert split_sentences("I work at St. Mary's. Python 3.13 is out! Is it?") == [
        "I work at St. Mary's.",
        "Python 3.13 is out!",
        "Is it?",
    ]
    assert split_sentences("我叫张三。我住在上海！你呢？") == ["我叫张三。", "我住在上海！", "你呢？"]
    assert split_sentences("...") == []


def test_language_detection_tolerates_latin_words_in_chinese() -> None:
    assert is_chinese("我们决定用Kafka替换RabbitMQ")
    assert not is_chinese("I love 火锅 with friends on Fridays")


def test_findings_keep_their_rule_for_tracing() -> None:
    (hit,) = extract_text("I'm allergic to peanuts")
    assert hit.rule == "en.allergy"
    assert only("I'm allergic to peanuts").metadata["rule"] == "en.allergy"


# --- measured quality ----------------------------------------------------------------


def test_labelled_set_is_big_and_balanced_enough() -> None:
    rows = load_eval().load_labelled(LABELLED)
    assert len(rows) >= 120
    assert sum(not r.expected for r in rows) >= 30
    by_lang = {lang: sum(r.lang == lang for r in rows) for lang in ("en", "zh")}
    assert min(by_lang.values()) >= 0.4 * len(rows)


def test_precision_and_recall_on_the_labelled_set_hold() -> None:
    """The patterns alone (the figures of this module's docstring)."""
    evaluation = load_eval()
    score = evaluation.score_labelled(evaluation.load_labelled(LABELLED), RuleExtractor("patterns"))
    slices = {"all": score.overall, **score.by_lang}
    for name, tally in slices.items():
        assert tally.precision >= PRECISION_FLOOR[name], (name, tally, score.misses)
        assert tally.recall >= RECALL_FLOOR[name], (name, tally, score.misses)


def test_the_default_extractor_keeps_the_labelled_items() -> None:
    """Patterns and keeper together (the default): measured 0.875 precision / 0.960 recall
    here, where a kept statement beside a finding, or a true statement the labels do not
    list, counts as a false positive (this set requires the labelled kind and key terms)."""
    evaluation = load_eval()
    score = evaluation.score_labelled(evaluation.load_labelled(LABELLED), RuleExtractor())
    for name, tally in {"all": score.overall, **score.by_lang}.items():
        assert tally.precision >= 0.84 and tally.recall >= 0.93, (name, tally)


def test_facts_land_in_their_labelled_slots() -> None:
    """Reconcile supersedes by (kind, category): a change in another category would pile up instead."""
    evaluation = load_eval()
    score = evaluation.score_labelled(evaluation.load_labelled(LABELLED), RuleExtractor("patterns"))
    assert score.slots.labelled >= 100
    for name, slots in {"all": score.slots, **score.slots_by_lang}.items():
        assert slots.agreement >= SLOT_AGREEMENT_FLOOR, (name, slots, [m for m in score.misses if m["slot_misses"]])


def locomo_figures(mode: str) -> dict[str, float]:
    evaluation = load_eval()
    total = evaluation.Coverage()
    for coverage in evaluation.locomo_coverage(LOCOMO, RuleExtractor(mode)).values():
        total.add(coverage)
    assert total.facts == 1487
    return total.as_dict()


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not present")
def test_locomo_observation_coverage_holds_for_the_patterns() -> None:
    figures = locomo_figures("patterns")
    assert figures["turn_coverage_raw"] >= 0.45
    assert figures["turn_coverage_gated"] >= 0.40
    assert figures["gated_on_evidence_turn_share"] >= 0.72


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not present")
def test_locomo_observation_coverage_of_the_default_extractor() -> None:
    """The keeper (default ``both``) keeps what is not plainly something else: it covers nearly every
    gold observation's turn, and LoCoMo's narrative chat means it also keeps many turns nobody
    annotated, so its share of candidates on evidence turns is lower than the patterns' (0.535 vs
    0.787, recorded in docs/benchmarks/extraction.md)."""
    figures = locomo_figures("both")
    assert figures["turn_coverage_gated"] >= 0.90
    assert figures["gated_on_evidence_turn_share"] >= 0.50


# --- classes found on the second fresh held-out set (tests/data/extraction_heldout2.jsonl) ---------
# Development examples of each class, not the held-out sentences themselves.


@pytest.mark.parametrize(
    ("text", "kind", "content", "category"),
    [
        # a named pet or children: the names in the next clauses belong to the fact
        ("我家有一只柯基，名字叫豆包。", Kind.FACT, "用户家有一只柯基，名字叫豆包", "pet"),
        ("我有一个女儿，叫小雨。", Kind.FACT, "用户有一个女儿，叫小雨", "family"),
        ("We have a parrot called Kiwi.", Kind.FACT, "Has a parrot called Kiwi", "pet"),
        # a relative named by a short kinship word; the next clause is about them, not the user
        ("我弟叫王浩，在北京读大学。", Kind.FACT, "用户的弟叫王浩", "family"),
        # who the user reports to, said other ways
        ("我们项目经理叫孙涛。", Kind.FACT, "用户的项目经理是孙涛", "relation:manager"),
        ("我的导师是吴国平老师。", Kind.FACT, "用户的导师是吴国平老师", "relation:mentor"),
        ("I report directly to Sarah Olsen.", Kind.FACT, "User's manager is Sarah Olsen", "relation:manager"),
        ("My mentor on the project is Ravi Shah.", Kind.FACT, "User's mentor is Ravi Shah", "relation:mentor"),
        # a self-introduction followed by a courtesy
        ("Hello, I'm Elena, glad to be here.", Kind.FACT, "User's name is Elena", "identity:name"),
        # living somewhere, said with 在…生活
        ("我在深圳生活和工作。", Kind.FACT, "用户在深圳生活和工作", "location:residence"),
        # a named product the user works with is a tool, not a habit
        ("我电脑用的是ThinkPad。", Kind.FACT, "用户电脑用的是ThinkPad", "tools"),
        ("I mostly write code in Kotlin.", Kind.FACT, "Mostly writes code in Kotlin", "tools"),
        # intolerance is a taboo like an allergy
        ("我对酒精不耐受。", Kind.PREFERENCE, "用户对酒精不耐受", "taboo:allergy"),
        # a taste that replaced an older one: the current one is kept, not the past one
        ("我以前喜欢喝可乐，现在更喜欢喝气泡水。", Kind.PREFERENCE, "用户更喜欢喝气泡水", "like"),
        # a team's convention, with no business noun
        ("我们团队的文档统一用Markdown写。", Kind.RULE, "团队的文档统一用Markdown写", "business_rule"),
        ("In our department, nobody works on weekends.", Kind.RULE, "In the department, nobody works on weekends",
         "business_rule"),
        # "don't let me forget to …" is a to-do
        ("Don't let me forget to call the bank.", Kind.TODO, "Needs to call the bank", "reminder"),
    ],
)
def test_classes_from_the_second_held_out_set(text: str, kind: Kind, content: str, category: str) -> None:
    candidate = only(text)
    assert (candidate.kind, candidate.content, candidate.category) == (kind, content, category)
    assert candidate.confidence >= GATE


def test_a_changed_taste_keeps_the_new_one_and_the_abstention() -> None:
    found = {(c.kind, c.content) for c in extract("我最近不吃米饭了，改吃杂粮了。")}
    assert (Kind.PREFERENCE, "用户改吃杂粮") in found
    assert any("米饭" in content and kind is Kind.PREFERENCE for kind, content in found)


@pytest.mark.parametrize(
    "text",
    [
        "以后请多关照。", "以后请多指教。", "我哥们在腾讯工作。", "我用Python写了个脚本。", "我们团队都很年轻。",
        "We have a meeting called Sync on Monday.", "The team always wins.", "Don't let me down.",
        "Nobody knows why the deploy broke.", "Our team never gives up.", "Our team always wins.",
    ],
)
def test_near_misses_of_the_new_classes_yield_nothing(text: str) -> None:
    assert [c for c in extract(text) if c.confidence >= GATE] == []
