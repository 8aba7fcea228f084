"""Each pipeline step alone: gate, PII policy, rule-based reconciliation."""

from dataclasses import replace
from datetime import UTC

import pytest

from engram import ConfigError, InvalidValueError, Kind, Scope
from engram.errors import PIIForbiddenError
from engram.model import MemoryRecord
from engram.pii import PIIPolicy, find_pii, reveal, screen_record
from engram.pipeline.candidate import ASKED, Candidate
from engram.pipeline.gate import GatePolicy, gate
from engram.pipeline.reconcile import ReconcilePolicy, Similar, decide_by_rules


def cand(content, kind=Kind.FACT, confidence=0.9, importance=0.8, category=None):
    return Candidate(kind, content, confidence, importance, ("m1",), category)


def test_gate_defaults_and_custom_thresholds():
    kept, skipped = gate([cand("a"), cand("b", confidence=0.69), cand("c", importance=0.29)], GatePolicy())
    assert [c.content for c in kept] == ["a"]
    assert [reason.split()[0] for _, reason in skipped] == ["confidence", "importance"]
    kept, _ = gate([cand("b", confidence=0.5)], GatePolicy(min_confidence=0.5))
    assert len(kept) == 1
    with pytest.raises(InvalidValueError):
        GatePolicy(min_confidence=1.5)


@pytest.mark.parametrize(
    "text, kind",
    [
        ("write to zhang.san@example.com", "email"),
        ("我的手机号是13812345678", "phone"),
        ("call +49 30 1234 5678 tomorrow", "phone"),
        ("身份证 11010519491231002X", "cn_id"),
        ("card 4111 1111 1111 1111 please", "card"),
        ("my password: hunter2", "secret"),
        ("密码是abc123", "secret"),
        ("key sk-abcdefghijklmnopqrstuvwx", "secret"),
    ],
)
def test_pii_detection(text, kind):
    assert [f.kind for f in find_pii(text)] == [kind]


def test_no_false_pii_in_ordinary_numbers():
    assert find_pii("the budget is 5000 yuan for 3 people in 2026") == []
    assert "card" not in {f.kind for f in find_pii("card 4111 1111 1111 1112")}  # fails the Luhn check


def test_mask_allow_forbid():
    policy = PIIPolicy(default="mask", actions={"email": "allow", "secret": "forbid"})
    masked = screen_record(record("Phone 13812345678, mail a@b.co"), policy)
    assert masked.content == "Phone [PHONE], mail a@b.co"
    assert masked.sensitivity.value == "personal"
    with pytest.raises(PIIForbiddenError, match="secret") as refused:
        screen_record(record("password: hunter2"), policy)
    assert refused.value.kinds == ("secret",)


def test_encrypt_keeps_a_searchable_mask_and_reveals_with_the_key():
    from cryptography.fernet import Fernet

    key = Fernet.generate_key().decode()
    policy = PIIPolicy(actions={"phone": "encrypt"}, encryption_key=key)
    stored = screen_record(record("User's phone is 13812345678"), policy)
    assert "13812345678" not in stored.content and "[PHONE#1]" in stored.content
    assert reveal(stored.content, stored.metadata, key) == "User's phone is 13812345678"


def test_encrypt_without_a_key_is_a_config_error(monkeypatch):
    monkeypatch.delenv("ENGRAM_ENCRYPTION_KEY", raising=False)
    with pytest.raises(ConfigError, match="ENGRAM_ENCRYPTION_KEY"):
        screen_record(record("phone 13812345678"), PIIPolicy(actions={"phone": "encrypt"}))


def record(content, kind=Kind.FACT, category=None, rid="r1") -> MemoryRecord:
    from datetime import datetime

    now = datetime(2026, 1, 1, tzinfo=UTC)
    return MemoryRecord(rid, Scope("acme", ("u",)), kind, content, 0.5, 0.9, now, now, now, category=category)


@pytest.mark.parametrize(
    "old, new, score, category, expected",
    [
        ("Prefers concise reports", "prefers concise reports!", 0.99, None, "NOOP"),
        ("Prefers concise reports", "Prefers concise reports with bullet points", 0.81, None, "UPDATE"),
        ("Prefers concise reports with bullet points", "Prefers concise reports", 0.81, None, "NOOP"),
        ("公司采用三级审批流程", "公司采用两级审批流程", 0.85, None, "SUPERSEDE"),
        ("Lives in Berlin", "Lives in Munich", 0.64, "location:residence", "SUPERSEDE"),
        ("Lives in Berlin", "Lives in Munich", 0.64, None, "ADD"),
        ("Lives in London", "No longer lives in London", 0.7, "location:residence", "SUPERSEDE"),
        ("Works at Stripe", "Works at Shopify", 0.47, "work:employer", "SUPERSEDE"),
        ("用户不吃辣", "用户不吃香菜", 0.83, "taboo:diet", "ADD"),
        ("Allergic to peanuts", "Allergic to peanuts and shellfish", 0.8, "taboo:allergy", "UPDATE"),
        ("Lives in Berlin", "Works in Berlin", 0.8, "location:residence", "ADD"),
        ("Has a dog named Max", "Has a cat named Luna", 0.52, None, "ADD"),
    ],
)
def test_rule_reconciliation(old, new, score, category, expected):
    kind = Kind.PREFERENCE if "Prefers" in old else Kind.FACT
    existing = record(old, kind, category)
    new_category = "work:employer" if new.startswith("Works in") else category
    decision = decide_by_rules(cand(new, kind, category=new_category), [Similar(existing, score)],
                               ReconcilePolicy())
    assert decision.event == expected
    if expected != "ADD":
        assert decision.target is existing


def test_reconciliation_never_touches_a_different_kind():
    existing = record("Report every Friday", Kind.TODO)
    decision = decide_by_rules(cand("Report every Friday morning", Kind.RULE), [Similar(existing, 0.9)],
                               ReconcilePolicy())
    assert decision.event == "ADD"


@pytest.mark.parametrize("old, new, score, category, unasked", [
    ("公司采用三级审批流程", "公司采用两级审批流程", 0.85, None, "SUPERSEDE"),
    ("Works at Stripe", "Works at Shopify", 0.47, "work:employer", "SUPERSEDE"),
    ("Prefers concise reports", "Prefers concise reports with bullet points", 0.81, None, "UPDATE"),
])
def test_a_fact_told_while_asking_ends_nothing_by_the_word_rules(old, new, score, category, unasked):
    """An everyday request may carry a fact ("这周和李姐的一对一取消，她请假了"), but the word rules
    cannot tell its words from a change: told while asking, it is added, never ending a memory."""
    existing = record(old, Kind.PREFERENCE if "Prefers" in old else Kind.FACT, category)
    kind = existing.kind
    plain = decide_by_rules(cand(new, kind, category=category), [Similar(existing, score)], ReconcilePolicy())
    asked = decide_by_rules(replace(cand(new, kind, category=category), metadata={ASKED: True}),
                            [Similar(existing, score)], ReconcilePolicy())
    assert plain.event == unasked
    assert asked.event == "ADD" and "told while asking" in asked.reason


def test_a_repeat_told_while_asking_is_still_known():
    existing = record("Prefers concise reports")
    asked = decide_by_rules(replace(cand("prefers concise reports!", Kind.FACT), metadata={ASKED: True}),
                            [Similar(existing, 0.99)], ReconcilePolicy())
    assert asked.event == "NOOP"
