"""The rule pipeline's decisions, as judgements, for comparison: a line is kept as a
memory when the rule extractor finds anything in it, and is a forget when the spoken
forget reader finds one (the rules name no subject or slot)."""

from __future__ import annotations

from collections.abc import Sequence

from engram.model import Message
from engram.pipeline.rules import RuleExtractor
from engram.pipeline.rules.forgets import forget_requests
from engram.slots import USER, Judgement, Utterance


def rule_judgements(texts: Sequence[str]) -> list[Judgement]:
    extractor = RuleExtractor()
    out = []
    for text in texts:
        if forget_requests(text):
            out.append(Judgement(Utterance.FORGET, USER, None))
        elif extractor.extract([Message("user", text)]):
            out.append(Judgement(Utterance.FACT, USER, None))
        else:
            out.append(Judgement(Utterance.CHATTER, USER, None))
    return out
