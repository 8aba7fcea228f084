"""English surface grammar and pattern plumbing: normalising, clauses, third person, findings.

Memories are stored as statements about the user, not in the user's own voice:
"I prefer concise reports" becomes "Prefers concise reports" (or "Ana prefers
concise reports" when the speaker's name is known), and "my" becomes "their".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

from ...model import Kind
from .common import Finding

# Straight apostrophes, and "I'm" spelt out, so one pattern serves every spelling.
_CURLY = re.compile(r"[’‘`´]")
_LONE_I = re.compile(r"(?<![\w'])i(?=\s|'|$)")
_EXPANSIONS = (
    (re.compile(r"\bI'm\b", re.IGNORECASE), "I am"),
    (re.compile(r"\bI've\b", re.IGNORECASE), "I have"),
    (re.compile(r"\bI'd\b", re.IGNORECASE), "I would"),
    (re.compile(r"\bI'll\b", re.IGNORECASE), "I will"),
    (re.compile(r"\bwe're\b", re.IGNORECASE), "we are"),
    (re.compile(r"\bwe've\b", re.IGNORECASE), "we have"),
    (re.compile(r"\bgonna\b", re.IGNORECASE), "going to"),
    (re.compile(r"\bwanna\b", re.IGNORECASE), "want to"),
    (re.compile(r"\bgotta\b", re.IGNORECASE), "have to"),
)

ADVERBS = (
    "just|really|truly|also|still|usually|often|always|never|generally|absolutely|honestly"
    "|actually|definitely|totally|sometimes|normally|typically|regularly|recently|finally"
    "|now|currently|mostly|personally|seriously|genuinely|even|already|only|mainly|simply"
    "|deeply|super|so|especially|particularly|kinda|officially|once|both|all"
)
# Zero or more adverbs, each followed by a space; used inside larger patterns.
ADV = rf"(?:(?:{ADVERBS}|kind of|sort of)\s+)*"
# "no longer" is skipped when conjugating ("no longer prefer" -> "no longer prefers") but is
# no adverb for the patterns: "I no longer like X" must not read as a liking.
ADVERB_WORDS = frozenset(ADVERBS.split("|")) | {"kind", "sort", "of", "no", "longer"}

_THIRD_PERSON = {
    "am": "is", "are": "is", "have": "has", "do": "does", "go": "goes", "don't": "doesn't",
    "dont": "doesn't", "haven't": "hasn't", "were": "was", "aren't": "isn't",
}
_KEEPS_FORM = frozenset(
    "can can't cannot could couldn't will won't would wouldn't should shouldn't must might may"
    " shall had did didn't was wasn't used".split()
)
PARTICIPLES = frozenset(
    "done gone seen taken written given eaten driven ridden flown swum begun won lost found built taught bought"
    " brought caught made met read run sung drawn grown thrown".split()
)
IRREGULAR_PAST = frozenset(
    "went got took made saw met found bought ran began did gave wrote won lost left came became"
    " built drew sang caught taught brought spent read flew drove rode swam ate threw held kept"
    " sold sent led fell broke chose grew knew heard hit put set shot sat stood told thought felt"
    " paid wore woke slept hung dug fed fought had was were".split()
)

# Where a new statement starts inside one sentence: a comma, "and", "but", "so"
# followed by a fresh first-person subject or an instruction word.
_CLAUSE_BREAK = re.compile(
    r"\s*(?:[,;:]|\s-+|\s—)\s*(?:(?:and|but|so|because|cause|since|while|though|although|plus)\s+)?"
    r"(?=(?:I|my|we|our|no|never|always|please|don't)\b)"
    r"|\s+(?:and|but|so|because|while|though|although|plus)\s+(?=(?:I|my|we)\b)"
    r"|\s+[-—]+\s+"
)
_TRAILING_FILLER = re.compile(
    r"(?:[\s,]*(?:please|pls|too|as well|lol|haha+|lmao|:\)|:D|for sure|though|tho|anyway))+[\s.!?,;:…]*$",
    re.IGNORECASE,
)
_TRAILING_PUNCT = re.compile(r"[\s,;:.!?…\-—]+$")
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    text = _CURLY.sub("'", text)
    text = _LONE_I.sub("I", text)
    for pattern, replacement in _EXPANSIONS:
        text = pattern.sub(replacement, text)
    return _SPACES.sub(" ", text).strip()


def clauses(sentence: str) -> list[tuple[str, int]]:
    """The sentence's clauses with their offsets, so spans stay sentence-relative."""
    parts: list[tuple[str, int]] = []
    start = 0
    for match in _CLAUSE_BREAK.finditer(sentence):
        if match.start() > start:
            parts.append((sentence[start : match.start()], start))
        start = match.end()
    parts.append((sentence[start:], start))
    return [(text, offset) for text, offset in parts if text.strip()]


# Chat drops the subject: "Got some new shoes!", "Just finished my first marathon".
_DROPPED_SUBJECT = re.compile(
    r"^(?:(?:just|finally|also|recently|still|actually|totally)\s+)*(?:got|went|finished|started|bought|made|took"
    r"|tried|can't wait|cannot wait|love|loved|adopted|signed up|joined|visited|picked up|found|saw|met|watched"
    r"|painted|baked|ran|did|launched|booked|moved|adopted)\b",
    re.IGNORECASE,
)


def restore_subject(clause: str) -> tuple[str, int]:
    """The clause with a dropped "I" put back, and how many characters were added."""
    stripped = clause.lstrip(" ,")
    if _DROPPED_SUBJECT.match(stripped):
        return "I " + stripped[:1].lower() + stripped[1:], 2 - (len(clause) - len(stripped))
    return clause, 0


_TAKES_ES = re.compile(r"(?:s|sh|ch|x|z|o)$")
_CONSONANT_Y = re.compile(r"[^aeiou]y$")
_LEADING_TO = re.compile(r"^to\s+", re.IGNORECASE)


def third_person_verb(word: str) -> str:
    low = word.lower()
    if low in _THIRD_PERSON:
        return _THIRD_PERSON[low]
    if low in _KEEPS_FORM or low in IRREGULAR_PAST or low in PARTICIPLES or low.endswith("ed") or "'" in low:
        return word
    if _TAKES_ES.search(low):
        return word + "es"
    if _CONSONANT_Y.search(low):
        return word[:-1] + "ies"
    return word + "s"


def conjugate(verb_phrase: str) -> str:
    """'prefer tea' -> 'prefers tea'; adverbs before the verb are kept as they are."""
    words = verb_phrase.split(" ")
    for index, word in enumerate(words):
        if word.lower() not in ADVERB_WORDS:
            words[index] = third_person_verb(word)
            break
    return " ".join(words)


_I_AM = re.compile(r"\bI am\b")
_I_WAS = re.compile(r"\bI was\b")
_I_VERB = re.compile(rf"\bI ((?:(?:{ADVERBS})\s+)*)([A-Za-z']+)")
_MY = re.compile(r"\bmy\b", re.IGNORECASE)
_MINE = re.compile(r"\bmine\b", re.IGNORECASE)
_MYSELF = re.compile(r"\bmyself\b", re.IGNORECASE)
_ME = re.compile(r"\bme\b", re.IGNORECASE)


def third_person(text: str, speaker: str | None, *, addressee: bool = False) -> str:
    """Rewrite first-person words; ``addressee`` is for instructions ("send me" -> "send the user")."""
    who = speaker or "the user"
    possessive = f"{speaker}'s" if speaker else ("the user's" if addressee else "their")
    text = _I_AM.sub(f"{who} is", text)
    text = _I_WAS.sub(f"{who} was", text)
    text = _I_VERB.sub(lambda m: f"{who} {m.group(1)}{third_person_verb(m.group(2))}", text)
    text = _MYSELF.sub(speaker or "themselves", text)
    text = _MINE.sub(f"{speaker}'s" if speaker else "theirs", text)
    text = _MY.sub(possessive, text)
    return _ME.sub(speaker or ("the user" if addressee else "them"), text)


def tidy(text: str) -> str:
    text = _SPACES.sub(" ", text).strip()
    text = _TRAILING_FILLER.sub("", text)
    text = _TRAILING_PUNCT.sub("", text)
    return text[:1].upper() + text[1:] if text else text


# A trailing aside ("..., but sometimes I fall", "..., and it was so cool") is not part of the fact.
_TAIL = re.compile(
    r"(?:,\s*|\s+)(?:but|although|though|whereas)\b.*$"
    r"|,\s*(?:and\s+|so\s+)?(?:it|that|this|they|he|she|which|the user|I)\b.*$"
    r"|\s+and\s+(?:it|that|this)\b.*$",
    re.IGNORECASE,
)


def trim_tail(text: str) -> str:
    return _TAIL.sub("", text)


_CHANGE_ADVERB = re.compile(r"\b(?:now|currently|nowadays|actually)\s+(?=\w)", re.IGNORECASE)
_CHANGE_TAIL = re.compile(r"(?:,?\s+(?:now|nowadays|these days|at the moment))+(?=[\s.!,]*$)", re.IGNORECASE)


def settle(content: str) -> str:
    """A state without the words that only say it is new: "Now prefers tea" -> "Prefers tea"."""
    return tidy(_CHANGE_TAIL.sub("", _CHANGE_ADVERB.sub("", content)))


# Where a place or an employer ends and the when, why or with-whom of a move begins.
_PLACE_TAIL = re.compile(
    r"\s*,?\s+(?:last|this|next|earlier|recently|a (?:few|couple)|\d+ (?:days?|weeks?|months?|years?) ago|ago|back in"
    r"|in (?:(?:19|20)\d\d|(?:early |late |mid-)?(?:january|february|march|april|may|june|july|august|september"
    r"|october|november|december))"
    r"|for|because|since|with|after|before|when|so|and|but|to (?:be|work|study|live|join|start)|as of)\b.*$"
    r"|\s*[,(].*$",
    re.IGNORECASE,
)


def place(text: str) -> tuple[str, str | None]:
    """("Berlin", "last month") from "Berlin last month"; the rest is kept for metadata."""
    match = _PLACE_TAIL.search(text)
    if match is None or match.start() == 0:
        return text.strip(), None
    rest = match.group(0).strip(" ,().!;:")
    return text[: match.start()].strip(), rest or None


def state(speaker: str | None, predicate: str) -> str:
    """A profile line: 'Prefers tea' without a name, 'Ana prefers tea' with one."""
    predicate = tidy(trim_tail(predicate))
    if speaker:
        return f"{speaker} {predicate[:1].lower()}{predicate[1:]}"
    return predicate


def owner(speaker: str | None) -> str:
    return f"{speaker}'s" if speaker else "User's"


# --- pattern plumbing -----------------------------------------------------------

Builder = Callable[[re.Match[str], str | None], Finding | None]


@dataclass(frozen=True, slots=True)
class Pattern:
    name: str
    regex: re.Pattern[str]
    build: Builder


def pattern(name: str, regex: str, build: Builder, flags: int = re.IGNORECASE) -> Pattern:
    return Pattern(name, re.compile(regex, flags), build)


def finding(kind: Kind, category: str, confidence: float, content: str, **metadata: str | None) -> Finding | None:
    """A finding without its span; the caller knows where the pattern matched."""
    content = tidy(content)
    if len(content) < 3:
        return None
    meta = MappingProxyType({key: value for key, value in metadata.items() if value})
    return Finding(kind, content[:300], confidence, category, (0, 0), "", meta)


# Objects that say nothing once the conversation is gone ("I love it", "I did that").
_EMPTY_OBJECT = re.compile(
    r"^(?:(?:it|that|this|them|those|these|you|him|her|so|much|too|a lot|all|very|really|here|there"
    r"|one|stuff|things|lol|haha|the most|most|more|though|now|yet|a|the|out|up|over|off|on|down|back"
    r"|again|around|anyway)\b[\s,!.]*)*$",
    re.IGNORECASE,
)
# Conversational objects: "I love that you ...", "I like how they ...".
_CHATTY_OBJECT = re.compile(
    r"^(?:you\b|your\b|that you|how\b|when\b|what\b|where\b|the way|it when you|seeing you|hearing|to hear"
    r"|to see|to know|reading your|talking|chatting|the (?:idea|sound|pic|photo|picture)|this pic|that pic)",
    re.IGNORECASE,
)


def usable(obj: str, *, starts_with_verb: bool = False) -> bool:
    """Whether an object still means something outside the chat.

    "holding them" and "check it out" are verbs with nothing but a pronoun after
    them; "traveling" alone is fine.
    """
    obj = obj.strip(" ,.!")
    if not obj or _EMPTY_OBJECT.match(obj) or _CHATTY_OBJECT.match(obj):
        return False
    head, _, rest = _LEADING_TO.sub("", obj).partition(" ")
    if starts_with_verb or head.lower().endswith("ing") or obj.lower().startswith("to "):
        return not (rest and _EMPTY_OBJECT.match(rest))
    return True


def predicate(kind: Kind, category: str, confidence: float) -> Builder:
    """Builder for "I <verb phrase>": the phrase, in the third person, becomes the memory.

    The pattern names the phrase ``vp``; an optional ``x`` group is its object,
    refused when it is only a pronoun.
    """

    def build(match: re.Match[str], speaker: str | None) -> Finding | None:
        obj = match.groupdict().get("x")
        if obj is not None and not usable(obj):
            return None
        rest = third_person(conjugate(match.group("vp")), speaker)
        return finding(kind, category, confidence, state(speaker, rest))

    return build


_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_WHEN = (
    rf"(?:today|tonight|tomorrow(?: (?:morning|afternoon|evening|night))?"
    rf"|this (?:morning|afternoon|evening|week(?:end)?|month|year)|next (?:week(?:end)?|month|year|{_WEEKDAY})"
    rf"|{_WEEKDAY}|end of (?:the )?(?:day|week|month|quarter|year)|eod|eow"
    rf"|{_MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)? of {_MONTH}"
    rf"|\d{{1,2}}(?::\d{{2}})? ?(?:am|pm)|noon|midnight|in \d+ (?:days?|weeks?|hours?)"
    rf"|(?<=in |by )(?:early |late |mid-)?{_MONTH})"
)
_DEADLINE = re.compile(
    rf"\b(?:(?:by|before|until|no later than|due(?: on| by)?|on|at|in)\s+)?{_WHEN}\b", re.IGNORECASE
)


def deadline(text: str) -> str | None:
    """The first date or time expression in a task, kept as the user wrote it."""
    match = _DEADLINE.search(text)
    return match.group(0) if match else None
