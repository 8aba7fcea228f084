"""English pattern tables: who the user is, what they like, do, decide and must do.

Order matters only for ties: when two patterns overlap in a clause, the more
confident wins, and on equal confidence the one listed first.
"""

from __future__ import annotations

import re

from ...model import Kind
from .common import (
    ABSTAIN,
    AGE,
    ALLERGY,
    BIRTHDAY,
    DIET,
    EMPLOYER,
    JOB,
    NAME,
    NATIONALITY,
    NICKNAME,
    ORIGIN,
    RELATION_MANAGER,
    RELATION_MENTOR,
    RESIDENCE,
    SURNAME,
    TOOLS,
    Finding,
    taste_slot,
)
from .en_base import (
    ADV,
    ADVERB_WORDS,
    IRREGULAR_PAST,
    Pattern,
    conjugate,
    deadline,
    finding,
    owner,
    pattern,
    place,
    predicate,
    state,
    third_person,
    trim_tail,
    usable,
)

# --- identity and taste -----------------------------------------------------------

_NATIONALITY = (
    r"(?:American|British|English|Scottish|Irish|Welsh|Canadian|Mexican|Brazilian|Argentinian|Chinese"
    r"|Japanese|Korean|Vietnamese|Thai|Filipino|Indian|Pakistani|German|French|Italian|Spanish|Portuguese"
    r"|Dutch|Swedish|Norwegian|Danish|Finnish|Polish|Russian|Ukrainian|Greek|Turkish|Nigerian|Kenyan"
    r"|Ghanaian|Egyptian|Australian|Christian|Muslim|Jewish|Buddhist|Hindu|Catholic|Sikh|atheist)"
)
_REL = (
    r"wife|husband|partner|boyfriend|girlfriend|fianc[eé]e?|son|daughter|kids?|children|child|baby|babies"
    r"|mom|mum|mother|dad|father|parents|brother|sister|siblings?|grandma|grandmother|grandpa|grandfather"
    r"|grandkids|grandchildren|twins|cousin|aunt|uncle|family|best friend|roommate|boss|manager"
)
_PET = (
    r"dogs?|cats?|pupp(?:y|ies)|kittens?|pets?|birds?|parrots?|fish|hamsters?|rabbits?|bunn(?:y|ies)"
    r"|turtles?|snakes?|horses?|guinea pigs?"
)


_BREED = (
    r"retrievers?|labradors?|labs?|poodles?|beagles?|bulldogs?|shepherds?|huskies|husky|corgis?|collies?|spaniels?"
    r"|terriers?|dachshunds?|pugs?|chihuahuas?|tabb(?:y|ies)|siamese|persians?|maine coons?|budgies?|cockatiels?"
)
_IS_NATIONALITY = re.compile(_NATIONALITY)
_IS_PET = re.compile(_PET, re.IGNORECASE)
_NOT_A_TASTE = re.compile(r"\s*(?:you|to (?:see|hear|know|read|chat|talk))\b", re.IGNORECASE)
_SOFT_DISLIKE = re.compile(r"\breally (?:like|enjoy|into)|not a fan", re.IGNORECASE)


def _name(match: re.Match[str], speaker: str | None) -> Finding | None:
    if (match.group("part") or "").lower() in {"last", "sur", "family"}:
        return finding(Kind.FACT, SURNAME, 0.9, f"{owner(speaker)} last name is {match.group('x')}")
    return finding(Kind.FACT, NAME, 0.9, f"{owner(speaker)} name is {match.group('x')}")


def _call_me(match: re.Match[str], speaker: str | None) -> Finding | None:
    return finding(Kind.FACT, NICKNAME, 0.85, state(speaker, f"prefers to be called {match.group('x')}"))


def _i_am_name(match: re.Match[str], speaker: str | None) -> Finding | None:
    name = match.group("x")
    if _IS_NATIONALITY.fullmatch(name.split(" ")[0]):
        return finding(Kind.FACT, NATIONALITY, 0.85, state(speaker, f"is {name}"))
    return finding(Kind.FACT, NAME, 0.8, f"{owner(speaker)} name is {name}")


def _birthday(match: re.Match[str], speaker: str | None) -> Finding | None:
    rel = match.group("rel")
    whose = f"{rel}'s " if rel else ""
    category = "family" if rel else BIRTHDAY
    return finding(Kind.FACT, category, 0.9, f"{owner(speaker)} {whose}birthday is {match.group('x')}")


def _favorite(match: re.Match[str], speaker: str | None) -> Finding | None:
    value = third_person(match.group("x"), speaker)
    if not usable(value):
        return None
    confidence = 0.75 if match.group("tense").lower() == "was" else 0.85
    what = match.group("what")
    return finding(Kind.PREFERENCE, taste_slot(what, "like"), confidence, f"{owner(speaker)} favorite {what} is {value}")


def _favorite_of_mine(match: re.Match[str], speaker: str | None) -> Finding | None:
    if not usable(match.group("x")):
        return None
    what = f" {match.group('what')}" if match.group("what") else ""
    return finding(Kind.PREFERENCE, "like", 0.85, f"{owner(speaker)} favorite{what} is {match.group('x')}")


def _like(match: re.Match[str], speaker: str | None) -> Finding | None:
    obj = match.group("x")
    if not usable(obj) or _NOT_A_TASTE.match(obj):
        return None
    confidence = 0.85 if match.group("v").lower() in {"prefer", "would rather"} else 0.8
    rest = third_person(conjugate(match.group("vp")), speaker)
    return finding(Kind.PREFERENCE, taste_slot(obj, "like"), confidence, state(speaker, rest))


def _dislike(match: re.Match[str], speaker: str | None) -> Finding | None:
    obj = match.group("x")
    if not usable(obj):
        return None
    softened = bool(_SOFT_DISLIKE.search(match.group("vp")))
    rest = third_person(conjugate(match.group("vp")), speaker)
    return finding(Kind.PREFERENCE, taste_slot(obj, "dislike"), 0.8 if softened else 0.85, state(speaker, rest))


IDENTITY_AND_TASTE: tuple[Pattern, ...] = (
    pattern(
        "name",
        r"\b(?i:my (?:full )?(?:(?P<part>first|last|family|sur) ?)?name is(?: now| actually)?) (?P<x>[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3})",
        _name,
        0,
    ),
    pattern("call_me", r"\b(?i:call me|I (?:now |usually |mostly |just )?go by) (?P<x>[A-Z][\w'-]*)", _call_me, 0),
    pattern(
        "i_am_name",
        r"^(?:(?:[Hh]i|[Hh]ello|[Hh]ey)\W+(?:there\W+|all\W+"
        r"|everyone\W+)?)?I am (?P<x>[A-Z][a-z]+(?: [A-Z][a-z]+)?)"
        # "Hi, I'm Marcus, nice to meet you": the courtesy after the name says nothing more
        r"(?:\W+(?:(?:it's |it is )?(?:nice|glad|good|great|pleased|happy) to (?:meet|e-?meet|be|see|join)\b[^;!?]*"
        r"|thanks? (?:you )?for having me[^;!?]*))?\W*$",
        _i_am_name,
        0,
    ),
    pattern("birthday", rf"\bmy (?:(?P<rel>{_REL})'s )?birthday is (?P<x>[^;!?]+)", _birthday),
    pattern(
        "age",
        r"\bI (?P<vp>(?:am \d{1,3} (?:years old|yrs old|yo)|(?:just )?turned \d{1,3}(?! (?:minutes|hours|days))))\b",
        predicate(Kind.FACT, AGE, 0.85),
    ),
    pattern(
        "nationality",
        rf"\bI (?P<vp>am (?:a |an )?{_NATIONALITY}\b[^;!?]*)",
        predicate(Kind.FACT, NATIONALITY, 0.85),
    ),
    pattern(
        "allergy",
        r"\bI (?P<vp>am (?:(?:very|severely|deathly|really|quite|also|mildly|super) )?allergic to (?P<x>[^;!?]+))",
        predicate(Kind.PREFERENCE, ALLERGY, 0.9),
    ),
    pattern(
        "diet",
        r"\bI (?P<vp>am (?:(?:no longer|not) )?(?:a |an )?(?:strict )?(?:vegetarian|vegan|pescatarian|lactose[- ]intolerant"
        r"|gluten[- ]intolerant|celiac|coeliac|diabetic|teetotal(?:er)?|sober|halal|kosher)\b[^;!?]*)",
        predicate(Kind.PREFERENCE, DIET, 0.85),
    ),
    pattern(
        "abstain",
        r"\bI (?P<vp>(?:do not|don't|never|cannot|can't|can not|no longer) (?:eat|drink|consume|touch"
        r"|smoke)\b(?P<x>[^;!?]*))",
        predicate(Kind.PREFERENCE, ABSTAIN, 0.85),
    ),
    pattern(
        "dislike",
        rf"\bI (?P<vp>{ADV}(?:hate|dislike|detest|loathe|can't stand|cannot stand|can not stand"
        r"|(?:do not|don't) (?:really )?(?:like|enjoy)|am not (?:really |very |much |that )?(?:a (?:big "
        r"|huge )?fan of|into)|no longer (?:like|enjoy|prefer|love|want)"
        r"|can't bear|cannot bear)\b(?P<x>[^;!?]*))",
        _dislike,
    ),
    pattern(
        "favorite",
        r"\bmy (?:(?:all-time|absolute|very|personal) )*favou?rite (?P<what>[\w' -]{1,30}?) (?P<tense>is|are|was"
        r"|has to be) (?P<x>[^;!?]+)",
        _favorite,
    ),
    pattern(
        "favorite_of_mine",
        r"^(?:(?:and|but|so|oh|yeah|yes)[,\s]+)?(?P<x>[\w'\" -]{2,40}?) (?:is|are) (?:still )?my (?:all-time "
        r"|absolute |very )?"
        r"favou?rites?(?: (?P<what>[\w -]{1,20}))?\b",
        _favorite_of_mine,
    ),
    pattern(
        "like",
        rf"\bI (?P<vp>{ADV}(?P<v>prefer|like|love|enjoy|adore|would rather|am (?:a )?(?:big |huge |massive )?fan of"
        r"|am into|am passionate about|am obsessed with|am addicted to|am a sucker for)\b(?P<x>[^;!?]*))",
        _like,
    ),
)

# --- durable facts about the user's life -------------------------------------------------

JOB_WORDS = (
    r"engineer|developer|programmer|nurse|teacher|doctor|physician|surgeon|designer|manager|student"
    r"|writer|artist|painter|lawyer|attorney|chef|cook|baker|accountant|scientist|researcher|consultant"
    r"|analyst|architect|photographer|musician|singer|dancer|actor|actress|pilot|driver|firefighter"
    r"|officer|soldier|veteran|farmer|mechanic|electrician|plumber|pharmacist|therapist|counsell?or"
    r"|psychologist|dentist|vet|veterinarian|professor|lecturer|librarian|journalist|editor|author"
    r"|entrepreneur|founder|co-founder|ceo|cto|intern|freelancer|tutor|coach|trainer|athlete|player"
    r"|gamer|streamer|barista|waiter|waitress|cashier|recruiter|banker|investor|realtor|owner|volunteer"
    r"|retiree|homemaker|social worker|paramedic|carpenter|technician|assistant|clerk|secretary"
)


_WORK_ROLE = (
    r"(?:direct |new |current |immediate |line |skip-level |engineering |project )?"
    r"(?:manager|boss|team lead|team leader|tech lead|supervisor|line manager|mentor|lead)"
)
_PERSON = r"(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2})"
# "my mentor at work", "my manager at Acme", "my lead on the project": where the role holds.
_WHERE_ROLE = r"(?: (?:at|on|in|from) (?:work|the office|the project|my (?:job|team|company)|(?-i:[A-Z][\w&.-]*)))?"


def _work_relation(match: re.Match[str], speaker: str | None) -> Finding | None:
    """"My direct manager is Laura Chen": who the user reports to (one slot at a time)."""
    role = match.group("role").lower()
    category = RELATION_MENTOR if role.endswith("mentor") else RELATION_MANAGER
    return finding(Kind.FACT, category, 0.85, f"{owner(speaker)} {role} is {match.group('name')}")


def _reports_to(match: re.Match[str], speaker: str | None) -> Finding | None:
    """"I report to Daniel Kim": the same slot as "my manager is Daniel Kim"."""
    return finding(Kind.FACT, RELATION_MANAGER, 0.85, f"{owner(speaker)} manager is {match.group('name')}")


def _relative_name(match: re.Match[str], speaker: str | None) -> Finding | None:
    rel = match.group("rel").lower()
    category = "pet" if _IS_PET.fullmatch(rel) else "family"
    return finding(Kind.FACT, category, 0.85, f"{owner(speaker)} {rel}'s name is {match.group('name')}")


def _family(match: re.Match[str], speaker: str | None) -> Finding | None:
    rel = match.group("rel")
    category = "pet" if _IS_PET.fullmatch(rel) else "family"
    rest = third_person(trim_tail(match.group("x")), speaker)
    return finding(Kind.FACT, category, 0.8, f"{owner(speaker)} {rel}{rest}")


def _have(match: re.Match[str], speaker: str | None) -> Finding | None:
    category = "pet" if _IS_PET.fullmatch(match.group("noun")) else "family"
    rest = third_person(conjugate(match.group("vp")), speaker)
    return finding(Kind.FACT, category, 0.85, state(speaker, rest))


def _habit(match: re.Match[str], speaker: str | None) -> Finding | None:
    words = match.group("vp").lower().split()
    verb = next((word for word in words if word not in ADVERB_WORDS), "")
    if verb.endswith("ed") or verb in IRREGULAR_PAST:
        return None  # a dated event, not a routine; the episode pattern takes it
    confidence = 0.7 if words[0] == "sometimes" else 0.8
    category = TOOLS if _CODES_IN.search(match.group("vp")) else "habit"  # "I mostly code in TypeScript"
    return finding(Kind.FACT, category, confidence, state(speaker, third_person(conjugate(match.group("vp")), speaker)))


_ORIGIN_VERBS = re.compile(r"\b(?:grew up|was born|was raised)\b", re.IGNORECASE)
# "I moved from Sweden four years ago": where the user comes from, not where they live.
_MOVED_AWAY = re.compile(r"\b(?:moved|relocated)\s+(?:here\s+|over\s+|away\s+)?from\b(?!.*\b(?:to|into)\b)", re.IGNORECASE)
_MOVE = re.compile(
    r"\b(?:moved|have moved|relocated|have relocated)\s+(?:back\s+)?(?:from\s+.+?\s+)?(?:to|into)\s+(?P<place>.+)$",
    re.IGNORECASE,
)


def _home(match: re.Match[str], speaker: str | None) -> Finding | None:
    """Where the user lives; a move says where they live now ("moved to Berlin" -> "Lives in Berlin")."""
    vp = match.group("vp")
    if _ORIGIN_VERBS.search(vp) or _MOVED_AWAY.search(vp):
        return finding(Kind.FACT, ORIGIN, 0.85, state(speaker, third_person(conjugate(vp), speaker)))
    switch = _SWITCHED.search(vp)
    if switch is not None and (_TECH.fullmatch(switch.group("old")) or not _NAMED_PLACE.match(switch.group("new"))):
        # "moved from Java to mostly writing Go": tools changed, the home did not
        return finding(Kind.FACT, TOOLS, 0.8, state(speaker, third_person(conjugate(vp), speaker)),
                       change="moved", replaces=switch.group("old"))
    moved = _MOVE.search(vp)
    if moved is not None:
        where, since = place(third_person(moved.group("place"), speaker))
        if usable(where) and _NAMED_PLACE.match(where):  # "moved to a bigger apartment" names no place
            return finding(Kind.FACT, RESIDENCE, 0.85, state(speaker, f"lives in {where}"), change="moved", since=since)
    return finding(Kind.FACT, RESIDENCE, 0.85, state(speaker, third_person(conjugate(vp), speaker)))


_NAMED_PLACE = re.compile(r"(?:the )?[A-Z]")  # a place starts with a name: "Berlin", "the Netherlands"
_SWITCHED = re.compile(r"\bfrom (?P<old>[A-Z][\w+#.-]*) to (?P<new>[^;!?]+)$")
# Languages, platforms and products people move between (never places).
_TECH = re.compile(
    r"Java|JavaScript|TypeScript|Python|Go|Golang|Rust|Ruby|PHP|Kotlin|Swift|Scala|Perl|Haskell|Elixir|Clojure|C\+\+|C#"
    r"|Mac|MacBook|Windows|Linux|Ubuntu|Android|iPhone|iOS|React|Vue|Angular|Django|Rails|AWS|GCP|Azure|Postgres"
    r"|PostgreSQL|MySQL|MongoDB|Vim|Emacs|Slack|Teams|Notion|Jira|Linear|Excel|Figma|Sketch"
)
_CODES_IN = re.compile(
    r"\b(?:code|coding|program|programming|write|writing|develop|developing|build|building)\b[^;!?]*?"
    r"\b(?:in|with|using) (?-i:[A-Z][\w+#.-]*)",
    re.IGNORECASE,
)
_WORKED = re.compile(r"\bhave worked\b", re.IGNORECASE)


def _work(match: re.Match[str], speaker: str | None) -> Finding | None:
    """"works as a nurse" is a job; "works at Shopify" an employer; "works from home", "has worked at" neither."""
    preposition = match.group("p").lower()
    category = JOB if preposition in {"as", "in", "with"} else EMPLOYER if preposition in {"at", "for"} else "work"
    if _WORKED.search(match.group("vp")):
        category = "work"  # "I have worked at Google" may be over; it must not supersede where they work now
    return finding(Kind.FACT, category, 0.85, state(speaker, third_person(conjugate(match.group("vp")), speaker)))


_PLAN_STRENGTH = {"planning": 0.8, "about": 0.75, "getting ready": 0.75, "saving up": 0.75}


def _plan(match: re.Match[str], speaker: str | None) -> Finding | None:
    verb = match.group("v").lower()
    if not usable(match.group("x"), starts_with_verb=verb == "going"):
        return None
    if verb == "going":  # "I'm gonna keep trying" is resolve; with a date it is a plan
        confidence = 0.75 if deadline(match.group("x")) else 0.65
    else:
        confidence = _PLAN_STRENGTH.get(verb, 0.6)  # hoping, thinking of: not settled yet
    return finding(Kind.FACT, "plan", confidence, state(speaker, "is " + third_person(match.group("rest"), speaker)))


_INTEND_STRENGTH = {"plan": 0.8, "intend": 0.8, "am determined": 0.8, "aim": 0.75}


def _intend(match: re.Match[str], speaker: str | None) -> Finding | None:
    if not usable(match.group("x"), starts_with_verb=True):
        return None
    confidence = _INTEND_STRENGTH.get(match.group("v").lower(), 0.6)  # hope, want, would love
    rest = third_person(conjugate(match.group("vp")), speaker)
    return finding(Kind.FACT, "plan", confidence, state(speaker, rest))


def _looking_forward(match: re.Match[str], speaker: str | None) -> Finding | None:
    if not usable(match.group("x") or match.group("y") or "", starts_with_verb=bool(match.group("x"))):
        return None
    confidence = 0.75 if deadline(match.group("vp")) else 0.65  # looking forward to a dated thing is a plan
    return finding(Kind.FACT, "plan", confidence, state(speaker, third_person(conjugate(match.group("vp")), speaker)))


_ROUTINE = (
    r"every (?:day|morning|night|evening|week|weekend|month|year|summer|winter|spring|fall|other day"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|each (?:day|week|month|morning)|daily|weekly|monthly"
    r"|twice a \w+|once a \w+|\w+ times a \w+|on weekends|on (?:mon|tues|wednes|thurs|fri|satur|sun)days"
)

LIFE_FACTS: tuple[Pattern, ...] = (
    pattern(
        "work",
        rf"\bI (?P<vp>{ADV}(?:work|am {ADV}working|have worked|have been working|no longer work|do not work|don't work)"
        r"\s+(?P<p>as|at|for|in|with|from)\b[^;!?]*)",
        _work,
    ),
    pattern(
        "job",
        rf"\bI (?P<vp>am (?:now |currently |also |actually |still )?(?:a|an) (?:[\w-]+ ){{0,3}}?(?:{JOB_WORDS})s?\b[^;!?]*)",
        predicate(Kind.FACT, JOB, 0.85),
    ),
    pattern(
        "teach",
        rf"\bI (?P<vp>{ADV}(?:teach|tutor|coach|run (?:a|my own|the)|own (?:a|my own)|manage (?:a|the)) [^;!?]+)",
        predicate(Kind.FACT, JOB, 0.8),
    ),
    pattern(
        "job_title",
        r"\bmy (?:job|role|position|title|profession|occupation) is (?:now )?(?P<x>[^;!?]+)",
        lambda m, s: finding(Kind.FACT, JOB, 0.85, f"{owner(s)} job is {third_person(m.group('x'), s)}"),
    ),
    pattern(
        "home",
        rf"\b(?:I|[Ww]e) (?P<vp>{ADV}(?:live|am living|are living|have lived|have been living|reside|am based|are based"
        r"|grew up|was born|was raised|no longer live|do not live|don't live"
        r"|moved|have moved|relocated|have relocated)\s+(?:in|to|at|near|out of|on|back to|from)\b[^;!?]*)",
        _home,
    ),
    pattern("origin", r"\bI (?P<vp>am (?:originally )?from\s+[^;!?]+)", predicate(Kind.FACT, ORIGIN, 0.85)),
    pattern(
        "family",
        rf"(?:^|(?<=[,;:] )|(?<=\band )|(?<=\bbut )|(?<=\bso ))my (?P<rel>{_REL}"
        rf"|{_PET})\b(?P<x>(?-i:,? [A-Z][a-z]+,?)? (?:is|are|was|has|have|had|just|recently|works"
        r"|lives|loves|likes|turned|turns|started|starts|begins|got|goes|plays|studies|will|graduated|passed|moved"
        r"|named|called)\b[^;!?]*)",
        _family,
    ),
    pattern(
        "work_relation",
        rf"\bmy (?P<role>{_WORK_ROLE}){_WHERE_ROLE} (?:is|is called|is named|'s name is) (?:now )?(?P<name>{_PERSON})",
        _work_relation,
    ),
    pattern("reports_to", rf"\bI {ADV}(?:now )?(?:report|answer) (?:directly )?to (?P<name>{_PERSON})", _reports_to),
    pattern("relative_name", rf"\bmy (?P<rel>{_REL}|{_PET})'s name is (?P<name>{_PERSON})", _relative_name),
    pattern(
        "have",
        rf"\bI (?P<vp>{ADV}(?:have|have got|own|adopted|got|am raising|raise)\s+(?:a|an|one|two|three|four|five|six"
        rf"|seven|\d+|another|a new|my first|twin)\s+(?:[\w-]+\s+){{0,2}}?(?P<noun>{_PET}|kids?|children|sons?"
        rf"|daughters?"
        r"|boys|girls|twins|grandkids|grandchildren|brothers?|sisters?|siblings)\b[^;!?]*)",
        _have,
    ),
    pattern(
        "named",
        rf"\bI (?P<vp>{ADV}(?:have|have got|own|adopted|got|rescued) (?:a|an|two|three|\d+) [\w -]{{1,30}}? (?:named"
        rf"|called)"
        r" [A-Z][a-z]+[^;!?]*)",
        predicate(Kind.FACT, "pet", 0.85),
    ),
    pattern(
        # "We have a golden retriever named Biscuit": the household's pet; "we have a meeting called Sync" is not one
        "we_named",
        rf"\bwe (?P<vp>{ADV}(?:have|have got|own|adopted|got|rescued) (?:a|an|two|three|\d+) (?:[\w-]+ ){{0,3}}?"
        rf"(?:{_PET}|{_BREED}) (?:named|called) [A-Z][a-z]+[^;!?]*)",
        predicate(Kind.FACT, "pet", 0.85),
    ),
    pattern(
        "status",
        rf"\bI (?P<vp>am {ADV}(?:married|divorced|single|engaged|widowed|pregnant|expecting|a (?:single |stay-at-home "
        r"|proud |new )?(?:mom|mum|dad|mother|father|parent|grandparent|grandmother|grandfather|grandma"
        r"|grandpa))\b[^;!?]*)",
        predicate(Kind.FACT, "family", 0.85),
    ),
    pattern(
        "study",
        rf"\bI (?P<vp>{ADV}(?:am studying|study|am majoring in|majored in|am enrolled in|am in (?:college|grad school"
        r"|high school|university|med school|law school)|graduated from|have a (?:degree|phd|masters?|master's) in"
        r"|am doing (?:a|my) (?:degree|phd|masters?|master's)|am (?:a )?(?:freshman|sophomore|junior|senior) at"
        r"|am getting (?:a|my) (?:degree|phd|masters?|master's)|am going back to school)\b[^;!?]*)",
        predicate(Kind.FACT, "education", 0.85),
    ),
    pattern(
        "since",
        r"\bI (?P<vp>have been (?!feeling|thinking|wondering|meaning|waiting|trying|looking forward|dealing|struggling"
        r"|going through|wanting)\w+ing\b[^;!?]*?\b(?:for|since)\b[^;!?]*)",
        predicate(Kind.FACT, "hobby", 0.8),
    ),
    pattern(
        "lately",
        r"\bI (?P<vp>have been (?!feeling|thinking|wondering|meaning|waiting|trying|looking forward|dealing|struggling"
        r"|going through|wanting|so|really|busy)\w+ing (?P<x>[^;!?]+))",
        predicate(Kind.FACT, "activity", 0.7),
    ),
    pattern(
        "usually",
        r"\bI (?P<vp>(?:usually|often|always|regularly|normally|typically|generally|frequently|sometimes|mostly)"
        r" (?!think|feel|wonder|say|tell|try|want|wish)[^;!?]+)",
        _habit,
    ),
    pattern(
        "routine",
        rf"\bI (?P<vp>(?!was\b|am\b|will\b|would\b|could\b|should\b)[a-z]+ [^;!?]*?\b(?:{_ROUTINE})\b[^;!?]*)",
        _habit,
    ),
    pattern(
        "plan",
        rf"\b(?:I am|we are) (?P<rest>{ADV}(?P<v>planning|going|hoping|thinking of|thinking about|considering"
        rf"|looking into"
        r"|looking to|aiming|saving up|getting ready|about|trying) (?:to |on |of |for )?(?P<x>[^;!?]+))",
        _plan,
    ),
    pattern(
        "intend",
        rf"\bI (?P<vp>{ADV}(?P<v>plan|intend|am determined|aim|hope|want|would love|can't wait"
        rf"|cannot wait) to (?P<x>[^;!?]+))",
        _intend,
    ),
    pattern(
        "looking_forward",
        r"\bI (?P<vp>(?:can't|cannot) wait (?:for|to) (?P<x>[^;!?]+)|am (?:really "
        r"|so )?looking forward to (?P<y>[^;!?]+))",
        _looking_forward,
    ),
    pattern(
        "upcoming",
        r"\bI (?P<vp>have (?:a|an|my|another|the) [^;!?]*?\b(?:coming up|next (?:week|month|weekend|year)|tomorrow"
        r"|tonight"
        r"|this (?:week|weekend|month)|on (?:mon|tues|wednes|thurs|fri|satur|sun)day)\b[^;!?]*)",
        predicate(Kind.FACT, "plan", 0.75),
    ),
    pattern(
        "ongoing",
        rf"\bI (?P<vp>am {ADV}(?!feeling|doing|going|loving|trying|thinking|hoping|wondering|getting|looking|having"
        r"|glad|sure|kidding|joking|saying|telling|asking|talking|chatting|planning|wearing|sitting|standing|waiting"
        r"|running out|eating|drinking|heading|leaving|coming|starting to|beginning|dying"
        r"|freaking)[a-z]+ing (?P<x>[^;!?]+))",
        predicate(Kind.FACT, "activity", 0.7),
    ),
    pattern(
        "language",
        rf"\bI (?P<vp>{ADV}(?:speak|am fluent in|am learning|grew up speaking) [A-Z][a-z]+\b[^;!?]*)",
        predicate(Kind.FACT, "language", 0.8),
        0,
    ),
    pattern(
        "uses",
        rf"\bI (?P<vp>{ADV}(?:use|rely on|depend on) (?P<x>(?!it\b|this\b|that\b|them\b)[^;!?]+))",
        predicate(Kind.FACT, "tools", 0.7),
    ),
)
