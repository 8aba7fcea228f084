"""English side of the embedded extractor: which sentences can hold a memory, and what they hold.

``analyse`` rules a sentence out when it cannot state anything durable about
the user: a question, a hypothetical, reported speech, a one-off request.
Leading discourse markers ("by the way", "also", "actually", "oh") are dropped
first, so they neither hide a statement nor leak into its content. ``find`` runs
the pattern tables over its clauses; statements of a state ("Now prefers ...")
lose the words that only say the state is new, so a change reads like the fact
it replaces. Base confidences are set
against the gate (keep >= 0.7): firm statements ("I'm allergic to", "my name
is") start at 0.85-0.9, weak readings ("I'm thinking of", an undated "I need
to") start below 0.7 and pass only with an explicit "remember that".
"""

from __future__ import annotations

import re
from dataclasses import replace

from ...model import Kind
from .common import SETTLED_GROUPS, Finding, SentenceView, group_of, is_small_talk
from .en_actions import ACTIONS, DURABLE
from .en_base import (
    Pattern,
    clauses,
    finding,
    normalise,
    restore_subject,
    settle,
    third_person,
)
from .en_changes import CHANGES
from .en_patterns import IDENTITY_AND_TASTE, LIFE_FACTS

PATTERNS: tuple[Pattern, ...] = IDENTITY_AND_TASTE + LIFE_FACTS + CHANGES + ACTIONS

# "By the way, ...", "Oh, and ...", "Actually ...": how the sentence joins the chat, not what it says.
_DISCOURSE = re.compile(
    r"^(?:(?:by the way|btw|oh|also|and|actually|plus|anyway|anyways|well|so(?!\s+(?:much|many|far|long|that)\b)|besides"
    r"|one more thing|on another note"
    r"|come to think of it|incidentally)(?:[,:;!\s]+|\s+[-—]+\s*))+",
    re.IGNORECASE,
)

# "Can you remind me ...?" is a request to keep something, not a question.
_POLITE_REQUEST = re.compile(
    r"^(?:(?:hey|ok|okay|so|and|also)[,\s]+)*(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"(?=remind me|remember|always|never|stop|call me|note|keep in mind|make a note|not\b|use|reply|respond|answer)",
    re.IGNORECASE,
)
# "Remember that ..." asks for a memory; a bare "Remember, ..." is usually advice to the listener.
_INTENT_PREFIX = re.compile(
    r"^(?:(?:please|pls|and|also|oh|ok|okay|hey|just)[,\s]+)*(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    r"(?:(?:remember|keep in mind|note|take note|make a note|do not forget|don't forget|never forget)(?:\s+that|\s*:)"
    r"|(?:please note|for the record|fyi|just so you know|for future reference)[:,]?)\s+",
    re.IGNORECASE,
)
_INTENT_SUFFIX = re.compile(r",\s*(?:remember that|remember this|please note)[\s.!]*$", re.IGNORECASE)
_WH_START = re.compile(r"^(?:what|what's|when|where|who|whom|whose|why|how|which)\b(?!\s+(?:I|we)\b)", re.IGNORECASE)
_HYPOTHETICAL = re.compile(
    r"^(?:if|suppose|supposing|imagine|assuming|assume|what if|in case|let's say|hypothetically)\b"
    r"|\b(?:if I|if we|if you|what if|I wish|wish I|would have|could have|should have)\b",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(?:told me|apparently|I heard|heard that|rumou?r|according to|supposedly|allegedly|gossip)\b"
    r"|\b(?:my|our|his|her|the) \w+ (?:said|says|told|thinks)\b",
    re.IGNORECASE,
)
# Case-sensitive on purpose: "Steve said" is reported speech, "I said" is the user.
_SOMEONE_SAID = re.compile(
    r"\b(?:[Hh]e|[Ss]he|[Tt]hey|[Ss]omeone|[Pp]eople|[A-HJ-Z][a-z]+)\s+(?:said|says|claims|claimed)\b"
)
# Quoted speech, not quoted titles: 'I finished "The Alchemist"' is the user's own statement.
_QUOTED = re.compile(
    r"\b(?:said|says|say|told \w+|asked|asks|goes|went|was like|is like|wrote|yelled|replied)[,:]?\s*[\"“‘']",
    re.IGNORECASE,
)
_META_NEGATION = re.compile(r"\b(?:not saying|I do not mean|I don't mean|not that I)\b", re.IGNORECASE)
_ONE_OFF = re.compile(
    r"^(?:(?:please|pls|hey|ok|okay|so|now|and)[,\s]+)*(?:(?:can|could|would|will) you (?:please )?)?"
    r"(?:translate|convert|calculate|compute|summari[sz]e|rewrite|rephrase|explain|tell me|show me|find|search"
    r"|look up|google|give me|draft|write me|check|fix|debug|generate|help me)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|may be|not sure|I think|I guess|I suppose|kind of|sort of"
    r"|someday|some day|I wonder|not certain|unsure|hopefully)\b",
    re.IGNORECASE,
)


def strip_discourse(text: str) -> str:
    stripped = _DISCOURSE.sub("", text)
    return stripped[:1].upper() + stripped[1:] if stripped and stripped != text else text


def analyse(sentence: str) -> SentenceView:
    text = normalise(sentence)
    if is_small_talk(text):
        return SentenceView(text, skip="small_talk")
    text = strip_discourse(text) or text
    polite = _POLITE_REQUEST.match(text)
    if polite:
        text = text[polite.end() :].rstrip("?").strip()
    explicit = False
    for intent in (_INTENT_PREFIX, _INTENT_SUFFIX):
        stripped = intent.sub("", text, count=1)
        if stripped != text:
            text, explicit = strip_discourse(stripped), True
    skip = _skip_reason(text, polite=polite is not None)
    return SentenceView(text, skip=skip, hedged=bool(_HEDGE.search(text)), explicit=explicit)


def is_question(text: str) -> bool:
    text = text.strip()
    return text.endswith("?") or bool(_WH_START.match(text))


def is_one_off_request(text: str) -> bool:
    return bool(_ONE_OFF.match(text)) and not DURABLE.search(text)


def _skip_reason(text: str, *, polite: bool) -> str | None:
    if not polite and is_question(text):
        return "question"
    if _HYPOTHETICAL.search(text):
        return "hypothetical"
    if _REPORTED.search(text) or _SOMEONE_SAID.search(text) or _QUOTED.search(text):
        return "reported"
    if _META_NEGATION.search(text):
        return "negated"
    if is_one_off_request(text):
        return "request"
    return None


def find(body: str, speaker: str | None) -> list[Finding]:
    """Every pattern hit in every clause; ``rules`` settles overlaps and calibration."""
    found: list[Finding] = []
    for original, offset in clauses(body):
        clause, added = restore_subject(original)
        offset = max(0, offset - added)
        for entry in PATTERNS:
            for match in entry.regex.finditer(clause):
                hit = entry.build(match, speaker)
                if hit is not None:
                    span = (offset + match.start(), offset + match.end())
                    found.append(_settled(replace(hit, span=span, rule=f"en.{entry.name}")))
    return found


def _settled(hit: Finding) -> Finding:
    if hit.kind not in (Kind.FACT, Kind.PREFERENCE) or group_of(hit.category) not in SETTLED_GROUPS:
        return hit
    content = settle(hit.content)
    return replace(hit, content=content) if len(content) >= 3 else hit


def noted(body: str, speaker: str | None) -> Finding | None:
    """What an explicit "remember that ..." keeps when no pattern recognised the statement."""
    if len(body.split()) < 3:
        return None
    hit = finding(Kind.FACT, "note", 0.75, third_person(body, speaker))
    return None if hit is None else replace(hit, span=(0, len(body)), rule="en.noted")
