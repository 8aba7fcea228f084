"""English statements of change: a fact that replaces an older one of the same slot.

"I changed my name to ...", "I just started a new job at Stripe", "I got promoted
to engineering manager", "I went vegan", "we switched to Linear": each is kept
as the state it leads to, in the words and the category the first statement of
that slot gets ("User's name is ...", "Works at Stripe", "Is an engineering
manager", "Is vegan", "The team uses Linear ..."), so that reconcile sees the same
slot and supersedes the old memory. The cue is kept in metadata as ``change``.
Moves are handled with "I live in" (rules_en_patterns), business rules that
change ("we switched to a two-step approval process") with the other business
rules (rules_en_actions).
"""

from __future__ import annotations

import re

from ...model import Kind
from .common import ABSTAIN, DIET, EMPLOYER, JOB, NAME, TOOLS, Finding
from .en_actions import is_business_rule
from .en_base import (
    ADV,
    Pattern,
    conjugate,
    finding,
    owner,
    pattern,
    place,
    state,
    third_person,
    usable,
)
from .en_patterns import JOB_WORDS

_ARTICLE = re.compile(r"^(?:a|an|the|my|our)\s", re.IGNORECASE)


def _with_article(role: str) -> str:
    if _ARTICLE.match(role):
        return role
    return ("an " if role[:1].lower() in "aeiou" else "a ") + role


def _name_change(match: re.Match[str], speaker: str | None) -> Finding | None:
    return finding(Kind.FACT, NAME, 0.9, f"{owner(speaker)} name is {match.group('x')}", change="renamed")


def _new_employer(match: re.Match[str], speaker: str | None) -> Finding | None:
    where, since = place(third_person(match.group("x"), speaker))
    if not usable(where):
        return None
    role = match.group("role")
    if role:
        role, since = place(third_person(role, speaker))
    text = f"works at {where}" + (f" as {role}" if role else "")
    return finding(Kind.FACT, EMPLOYER, 0.85, state(speaker, text), change="new job", since=since)


def _left_employer(match: re.Match[str], speaker: str | None) -> Finding | None:
    where, since = place(third_person(match.group("x"), speaker))
    if not usable(where):
        return None
    return finding(Kind.FACT, EMPLOYER, 0.85, state(speaker, f"no longer works at {where}"), change="left", since=since)


def _new_role(match: re.Match[str], speaker: str | None) -> Finding | None:
    role, since = place(third_person(match.group("x"), speaker))
    if not usable(role):
        return None
    return finding(Kind.FACT, JOB, 0.85, state(speaker, "is " + _with_article(role)), change="new role", since=since)


def _eats_again(match: re.Match[str], speaker: str | None) -> Finding | None:
    if not usable(match.group("x")):
        return None
    return finding(Kind.PREFERENCE, ABSTAIN, 0.8, state(speaker, third_person(conjugate(match.group("vp")), speaker)),
                   change="again")


def _new_diet(match: re.Match[str], speaker: str | None) -> Finding | None:
    return finding(Kind.PREFERENCE, DIET, 0.85, state(speaker, f"is {match.group('d').lower()}"), change="new diet")


_SUBJECT = {"we": "the team", "our team": "the team", "our company": "the company", "our org": "the company",
            "our organization": "the company", "our organisation": "the company", "our department": "the department",
            "our group": "the team", "the team": "the team", "the company": "the company"}
_SWITCH = re.compile(r"switch|migrat|chang|start|now|no longer|stopped", re.IGNORECASE)
_FROM = re.compile(r"\bfrom (?P<old>.+?) to$", re.IGNORECASE)
_WHEN_TAIL = re.compile(
    r"\s+(?:last|this|next|earlier|recently|yesterday|today|ago|in (?:19|20)\d\d|a (?:few|couple) \w+ ago"
    r"|\d+ \w+ ago)\b.*$",
    re.IGNORECASE,
)
_STOPPED = re.compile(r"no longer|stopped", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:a|an|the) (?=[A-Z0-9]|[a-z][A-Z])")
_PRODUCT = re.compile(r"^(?:[A-Z0-9]|[a-z][A-Z])")  # "Jira", "3M", "iPhone"  # "we use Jira": a product; "we use our garden": not a tool choice


def _team_tool(match: re.Match[str], speaker: str | None) -> Finding | None:
    tool = _ARTICLE.sub("", _WHEN_TAIL.sub("", match.group("x")).rstrip(" .,!"))  # "to a Mac": the product
    if not usable(tool) or is_business_rule(match.string):
        return None  # "we switched to a two-step approval process" is a business rule
    subject = match.group("s")
    verb = match.group("v")
    changed = bool(_SWITCH.search(verb)) or bool(match.group("lead")) or "now" in (match.group("adv") or "").lower()
    if subject.lower() == "i":
        if not changed or not _PRODUCT.match(tool):
            return None  # a plain "I use X" is rules_en_patterns' "uses"; "I switched to decaf" is no tool
        who = None
    else:
        who = _SUBJECT.get(subject.lower(), "the team")
        if not changed and not _PRODUCT.match(tool):
            return None
    action = "no longer uses" if _STOPPED.search(verb) else "uses"
    content = f"{who} {action} {tool}" if who else state(speaker, f"{action} {tool}")
    lead = (match.group("lead") or "").strip(" ,").lower()
    replaced = _FROM.search(verb)
    cue = lead or _FROM.sub("to", verb).lower()
    return finding(Kind.FACT, TOOLS, 0.8 if changed else 0.75, third_person(content, speaker),
                   change=cue if changed else None, replaces=replaced.group("old") if replaced else None)


CHANGES: tuple[Pattern, ...] = (
    pattern(
        "name_change",
        r"\bI (?i:(?:have |just |recently |legally |officially |finally )*changed my (?:last |first |full |sur)?name to) "
        r"(?P<x>[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3})",
        _name_change,
        0,
    ),
    pattern(
        "new_employer",
        rf"\bI (?:{ADV}(?:have )?(?:started (?:a |my )?(?:new )?(?:job|position|role|work|working) (?:at|for|with)"
        r"|got (?:a |my )?(?:new )?(?:job|position|role|offer) (?:at|with|from)|took (?:a |the )?(?:new )?(?:job|position"
        r"|role) (?:at|with)|landed (?:a |my )?(?:new )?(?:job|role|position) at|accepted (?:an|the) offer from"
        r"|switched (?:jobs|companies|employers) to|moved (?:jobs|companies) to|am now at))"
        r" (?P<x>[^;!?]+?)(?: as (?P<role>(?:a|an) [^;!?]+))?$",
        _new_employer,
    ),
    pattern(
        # "joined" alone is too wide ("joined a gym"): an employer is joined as someone.
        "joined_as",
        rf"\bI {ADV}(?:have )?joined (?P<x>[A-Z][\w&.'-]*(?: [A-Z][\w&.'-]*){{0,2}}) as (?P<role>(?:a|an) [^;!?]+)",
        _new_employer,
        0,
    ),
    pattern(
        "left_employer",
        rf"\bI {ADV}(?:have )?(?:left|quit) my (?:job|position|role) (?:at|with) (?P<x>[^;!?]+)",
        _left_employer,
    ),
    pattern(
        "new_role",
        rf"\bI (?:{ADV}(?:have )?(?:got |was |have been |been )?(?:promoted|moved up|stepped up) to"
        rf"|{ADV}(?:switched|moved) (?:roles|careers|jobs|teams) to (?:become )?"
        rf"|{ADV}(?:became|have become) (?=(?:a|an) (?:[\w-]+ ){{0,3}}?(?:{JOB_WORDS})s?\b))"
        r" ?(?P<x>[^;!?]+)",
        _new_role,
    ),
    pattern(
        "new_diet",
        rf"\bI {ADV}(?:have )?(?:went|gone|became|become|turned|switched to being|switched to a) "
        r"(?:fully |completely |strictly )?(?P<d>vegetarian|vegan|pescatarian|plant-based)\b",
        _new_diet,
    ),
    pattern(
        # "I eat meat again", "I can drink coffee again": a taboo that no longer holds, in the taboo's slot
        "eats_again",
        r"\bI (?P<vp>(?:can (?:now )?|now )?(?:eat|drink) (?P<x>[^;!?]+?) (?:again|now))\b",
        _eats_again,
    ),
    pattern(
        "team_tool",
        r"^(?P<lead>(?:from now on|going forward|starting (?:today|now|this week|next week|this month|next month))[,\s]+)?"
        r"(?P<s>we|I|our (?:team|company|org|organi[sz]ation|department|group)|the (?:team|company))\s+"
        r"(?P<adv>(?:now |currently |still |mostly |mainly |all |also |just |recently |finally |officially )*)"
        r"(?P<v>uses?|are using|is using|are now using|(?:has |have )?switched (?:over )?(?:from [^;!?]+? )?to"
        r"|(?:has |have )?migrated (?:over )?(?:from [^;!?]+? )?to|(?:has |have )?changed (?:over )?to"
        r"|started using|(?:are|is) switching to|no longer uses?|stopped using|rel(?:y|ies) on)\s+(?P<x>[^;!?]+)",
        _team_tool,
    ),
)

