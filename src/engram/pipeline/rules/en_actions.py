"""English pattern tables: instructions, business rules, tasks, decisions and events."""

from __future__ import annotations

import re

from ...model import Kind
from .common import Finding, business_slot
from .en_base import (
    IRREGULAR_PAST,
    PARTICIPLES,
    Pattern,
    deadline,
    finding,
    pattern,
    state,
    third_person,
    tidy,
    trim_tail,
    usable,
)

DURABLE = re.compile(
    r"\b(?:always|never|from now on|going forward|moving forward|in (?:the )?future|henceforth|anymore"
    r"|any more|no longer|every time|whenever|next time|for future reference|again|ever)\b",
    re.IGNORECASE,
)

# --- instructions to the assistant ----------------------------------------------------

# Imperatives that are conversation, not standing orders.
_CHATTER_COMMAND = re.compile(
    r"^(?:(?:don't|do not) (?:worry|mind|be |forget|hesitate|stress|sweat|give up|let)|never mind|stop it"
    r"|keep (?:it up|going|up|at it|me posted|in touch|pushing|rocking|smiling|shining|doing|being)"
    r"|leave it|use it|talk (?:soon|later)|send (?:it|pics|a pic|photos|me a pic)|take care|stay)",
    re.IGNORECASE,
)
# "the summaries", "all emails": an instruction about a class of things outlives the turn.
_GENERIC_OBJECT = re.compile(
    r"\b(?:all|any|every|each)\b|\bthe \w+s\b|\b(?:emails|messages|reports|summaries|answers|replies"
    r"|responses|updates|notifications|meetings|calls)\b",
    re.IGNORECASE,
)


_STOPPING = re.compile(r"(?:stop|avoid|no longer)\b", re.IGNORECASE)
_ANY_MORE = re.compile(r"\b(?:any|ever|again|anymore|more)\b", re.IGNORECASE)


def _instruction(match: re.Match[str], speaker: str | None) -> Finding | None:
    order = match.group("x")
    if _CHATTER_COMMAND.match(order) or is_business_rule(order):
        return None  # "only the CFO can approve contracts" is a business rule, not an order to the assistant
    durable = bool(match.group("durable")) or bool(DURABLE.search(order)) or bool(
        _STOPPING.match(order)
    )
    text = third_person(order, speaker, addressee=True)
    when = deadline(order)
    if when and not durable:
        return finding(Kind.TODO, "task", 0.8, text, deadline=when)
    confidence = 0.85 if durable else 0.75 if _GENERIC_OBJECT.search(order) else 0.55
    return finding(Kind.RULE, "instruction", confidence, text)


def _no_more(match: re.Match[str], speaker: str | None) -> Finding | None:
    what = match.group("x")
    firm = "please" in match.group(0).lower() or bool(_ANY_MORE.search(what))
    return finding(Kind.RULE, "instruction", 0.8 if firm else 0.6, "No " + third_person(what, speaker, addressee=True))


def _want_you(match: re.Match[str], speaker: str | None) -> Finding | None:
    order = match.group("x")
    confidence = 0.8 if DURABLE.search(order) else 0.65
    return finding(Kind.RULE, "instruction", confidence, third_person(order, speaker, addressee=True))


# --- business rules: approvals, budgets, policies -------------------------------------

BUSINESS_NOUN = re.compile(
    r"\b(?:approv\w*|sign-?off|budget\w*|expens\w*|reimburs\w*|purchas\w*|procure\w*|polic(?:y|ies)|contracts?"
    r"|invoices?|vacation|pto|time off|leave requests?|deploy\w*|releases?|headcount|spending|travel|overtime"
    r"|payroll|salar(?:y|ies)|discounts?|refunds?|code reviews?|pull requests?|merge requests?|compliance"
    r"|audits?|onboarding|new hires?|employees?|contractors?|vendors?|suppliers?|per[ -]diems?|allowances?|stipends?)\b",
    re.IGNORECASE,
)
_NORMATIVE = re.compile(
    r"\b(?:must|needs?|require[sd]?|has to|have to|(?:is|are) (?:not )?allowed|may not|may only|cannot|can't"
    r"|can only|only|capped|limited to|up to|at least|at most|no more than|not exceed|exceeding|shall|should"
    r"|policy is|rule is|is set at)\b|\b(?:is|are|was|were)\s+(?:now\s+)?[$€£¥]?\d"
    # a rule that changes: "we switched to a two-step approval process", "the budget was cut to $40k"
    r"|\b(?:switched|changed|moved|migrated) (?:over )?to\b|\bno longer\b|\b(?:is|are) now\b"
    r"|\b(?:cut|raised|increased|reduced|lowered|dropped|bumped|capped|set|went (?:up|down)) (?:back )?to\b"
    r"|\b(?:uses?|follows?|adopted|has|have)\b[^;!?]*\b(?:process|flow|workflow|policy|procedure|chain)\b"
    # a team's norm said as what it always does: "our team does code reviews for every pull request, no exceptions",
    # "in our group, nobody deploys on Fridays"
    r"|\bno exceptions?\b"
    r"|\b(?:our|the) (?:team|group|department|dept|company|org)\b[^;!?]*\b(?:nobody|no one|everyone|everybody|every|each|always|never)\b"
    r"|\b(?:nobody|no one|everyone|everybody)\b[^;!?]*\b(?:our|the) (?:team|group|department|dept|company|org)\b",
    re.IGNORECASE,
)
_AUTHORITY = re.compile(
    r"\b(?:our|company|team|department|dept|org|organi[sz]ation|policy|firm|office|corporate|management"
    r"|approv\w*|sign-?off|authori[sz]\w*)\b|[$€£¥]\s?\d|\b\d[\d,.]*\s?(?:k|m|euros?|dollars?|usd|rmb|yuan|pounds?)\b",
    re.IGNORECASE,
)
_OUR = re.compile(r"\bour\b", re.IGNORECASE)
# "From now on, purchases over $5,000 need VP approval": the rule is what follows the marker.
_CHANGE_LEAD = re.compile(
    r"^(?:from now on|going forward|moving forward|henceforth|effective (?:immediately|today|now)"
    r"|starting (?:today|now|this \w+|next \w+))[,:\s]+",
    re.IGNORECASE,
)
_RECURRING = re.compile(r"\b(?:every|each)\b", re.IGNORECASE)


def is_business_rule(text: str) -> bool:
    """Whether ``text`` states a business rule: a business noun and normative wording."""
    return bool(BUSINESS_NOUN.search(text)) and bool(_NORMATIVE.search(text))


_TEAM_NORM_REJECT = re.compile(r"^(?:[^;!?]*\b(?:is|are|was|were|has|had|seems?|looks?|feels?|loves?|likes?)\b)", re.IGNORECASE)


# Praise and cheer, not norms: "our team never gives up", "our team always wins".
_TEAM_IDIOM = re.compile(
    r"\b(?:gives? (?:up|in)|wins?|loses?|fails?|disappoints?|delivers?|rocks?|stops?|quits?|complains?)\b",
    re.IGNORECASE,
)


def _team_norm(match: re.Match[str], speaker: str | None) -> Finding | None:
    """What a team always or never does, with no business noun: "our team writes tests for every new feature"."""
    text = match.group("x")
    act = match.group("act") if match.group("act") is not None else match.group("act2")
    if is_business_rule(text) or _TEAM_NORM_REJECT.match(act) or _TEAM_IDIOM.search(text):
        return None  # the business-rule pattern keeps it; "our team is great for everyone" is no norm
    return finding(Kind.RULE, business_slot(text), 0.8, _OUR.sub("the", text))


def _business_rule(match: re.Match[str], speaker: str | None) -> Finding | None:
    clause = match.group("x")
    lead = _CHANGE_LEAD.match(clause)
    text = clause[lead.end() :] if lead else clause
    if not BUSINESS_NOUN.search(text) or not _NORMATIVE.search(text):
        return None
    if deadline(text) and not _RECURRING.search(text):
        return None  # a dated one-off ("the budget is due Friday") is a task, not a rule
    confidence = 0.85 if _AUTHORITY.search(text) else 0.75
    change = lead.group(0).strip(" ,:").lower() if lead else None
    return finding(Kind.RULE, business_slot(text), confidence, _OUR.sub("the", text), change=change)


# --- tasks and deadlines -------------------------------------------------------------


def _remind(match: re.Match[str], speaker: str | None) -> Finding | None:
    task, fact = match.group("to"), match.group("that")
    if task:
        content = state(speaker, "needs to " + third_person(task, speaker))
        return finding(Kind.TODO, "reminder", 0.9, content, deadline=deadline(task))
    return finding(Kind.TODO, "reminder", 0.9, third_person(fact, speaker), deadline=deadline(fact))


def _task(match: re.Match[str], speaker: str | None) -> Finding | None:
    task = match.group("x")
    content = state(speaker, "needs to " + third_person(task, speaker))
    return finding(Kind.TODO, "reminder", 0.85, content, deadline=deadline(task))


def _must_do(match: re.Match[str], speaker: str | None) -> Finding | None:
    task = match.group("x")
    when = deadline(task)
    # Undated "I need to ..." is mostly passing talk ("I need to relax"); dated, it is a task.
    confidence = 0.85 if when else 0.55 if match.group("m").lower() == "should" else 0.65
    content = state(speaker, "needs to " + third_person(task, speaker))
    return finding(Kind.TODO, "task", confidence, content, deadline=when)


def _dated(match: re.Match[str], speaker: str | None) -> Finding | None:
    when = deadline(match.group("d")) or tidy(match.group("d"))
    return finding(Kind.TODO, "deadline", 0.85, third_person(_OUR.sub("the", match.group(0)), speaker), deadline=when)


# --- decisions and conclusions ---------------------------------------------------------


_AUXILIARY = re.compile(r"^(?:have|had)\s+", re.IGNORECASE)


def _decided(match: re.Match[str], speaker: str | None) -> Finding | None:
    if not usable(match.group("x")):
        return None
    subject = match.group("s").lower()
    action = _AUXILIARY.sub("", match.group("vp"))
    action = third_person(action, speaker)
    content = state(speaker, action) if subject == "i" else action
    return finding(Kind.CONCLUSION, "decision", 0.6 if subject == "they" else 0.85, content)


def _outcome(match: re.Match[str], speaker: str | None) -> Finding | None:
    what = match.group("w").capitalize() + (match.group("of") or "")
    return finding(Kind.CONCLUSION, "decision", 0.85, f"{what}: {third_person(match.group('x'), speaker)}")


# --- events the user lived through -----------------------------------------------------

_PAST_TIME = re.compile(
    r"\b(?:yesterday|last (?:night|week|weekend|month|year|summer|winter|spring|fall|time"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|ago|this (?:morning|afternoon|past \w+)|earlier (?:today|this \w+)"
    r"|the other day|recently|just|finally|over the weekend|on (?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|in (?:19|20)\d\d)\b",
    re.IGNORECASE,
)
# Past forms of thinking and feeling: they report a mood, not something that happened.
_NOT_EVENTS = frozenset(
    "felt thought knew heard told wanted needed seemed used wished hoped wondered guessed realized realised"
    " noticed figured loved liked hated meant asked decided agreed tried missed forgot believed supposed"
    " expected imagined assumed planned appreciated said was were had need feed succeed proceed exceed"
    " bleed speed mentioned enjoyed".split()
)
_PAST_VERB = "[a-z]+ed|" + "|".join(sorted(IRREGULAR_PAST | PARTICIPLES))
_WE = re.compile(r"\bwe\b", re.IGNORECASE)
_SHORT_LEAD = 40  # a short lead-in ("Last weekend", "Yesterday") belongs to the event; a long one does not


def _episode(match: re.Match[str], speaker: str | None) -> Finding | None:
    verb = match.group("v").lower()
    dated = bool(_PAST_TIME.search(match.string))
    # "I had an accident last week" is an event; an undated "I had fun" is small talk.
    if (verb in _NOT_EVENTS and not (verb == "had" and dated)) or not usable(match.group("x")):
        return None
    lead = match.string[: match.start()]
    text = lead + match.group(0) if len(lead) <= _SHORT_LEAD else match.group(0)
    confidence = 0.75 if dated else 0.7
    text = third_person(trim_tail(text), speaker)
    text = _WE.sub(f"{speaker or 'the user'} and others", text)
    return finding(Kind.EPISODE, "event", confidence, text)


ACTIONS: tuple[Pattern, ...] = (
    pattern(
        "remind",
        r"\bremind me (?:to (?P<to>[^;!?]+)|(?:that|about|of) (?P<that>[^;!?]+))",
        _remind,
    ),
    pattern(
        "dont_forget",
        r"\b(?:(?:do not|don't|dont|never) (?:let me )?forget|remember|be sure) to (?P<x>[^;!?]+)",
        _task,
    ),
    pattern(
        "must_do",
        r"\bI (?:really |still |also |definitely |just )?(?P<m>need to|have to|must|have got to|got to|am supposed to"
        r"|should) (?!say\b|admit|agree|tell you|be honest|confess|thank|go now|run\b|leave\b|ask\b|see\b|check (?:it"
        r"|that|this)"
        r" out|try (?:it|that|this)|get going|go\b|sleep|rest\b|relax|focus\b|remember)(?P<x>[^;!?]+)",
        _must_do,
    ),
    pattern(
        "due",
        r"^(?:(?:the|our|my|this|that)\s+)?(?P<x>[^;!?]{3,80}?)\s+(?:is|are)\s+due\b(?P<d>[^;!?]*)",
        _dated,
    ),
    pattern(
        "deadline",
        r"^[^;!?]*\bdeadline\b[^;!?]*?\b(?:is|was moved to|has been moved to|moved to|got moved to"
        r"|falls on)\s+(?P<d>[^;!?]+)",
        _dated,
    ),
    pattern(
        "decided",
        r"\b(?P<s>we|I|the team|everyone|they|the board|management|all of us)\s+(?P<vp>(?:have |had |finally "
        r"|eventually "
        r"|ultimately |all |just |both )*(?:decided|agreed|concluded|settled on|went with|chose|opted|resolved"
        r"|are going with|will go with|made the (?:call|decision))\b(?P<x>[^;!?]*))",
        _decided,
    ),
    pattern(
        "outcome",
        r"\b(?:the\s+|our\s+|my\s+)?(?:final\s+|main\s+|key\s+|overall\s+|big\s+)?(?P<w>conclusion|verdict|outcome"
        r"|takeaway|decision|root cause|bottom line|consensus)(?P<of>\s+(?:of|from|for)\s+[^,;]+?)?\s+(?:is|was|:)\s*"
        r"(?:that\s+)?(?P<x>[^;!?]+)",
        _outcome,
    ),
    pattern(
        "instruction",
        r"^(?:(?:and|so|also|but|oh|ok|okay|please|pls|kindly|just|hey)[,\s]+)*(?:(?P<durable>from now on|going forward"
        r"|moving forward|in (?:the )?future|henceforth|from today on|for future reference|next time)[,\s]+)?"
        r"(?:please[,\s]+)?(?P<x>(?:(?:always|never)(?! (?:there|here|been|had|was|were|is|are|am|a|an|the|so|my|your"
        r"|ready"
        r"|[a-z]+ed)\b)|don't|do not|dont|stop|avoid|no longer|make sure(?: to| you)?"
        r"|be sure to|keep|use|reply|respond|answer|write|send|call|address|cc|bcc|schedule|format|put|include"
        r"|give|show|list|sort|add|book|order|refer to|speak|talk|email|text|mention|skip|leave|treat|assume"
        r"|only)\b[^;!?]*)$",
        _instruction,
    ),
    pattern(
        "no_more",
        r"^(?:so |and |also |but )?no (?P<x>(?!worries|problem|way|doubt|idea|wonder|big deal|pressure|rush|kidding"
        r"|joke|thanks|matter|one\b|clue|offen[cs]e)[^;!?]{3,}?)(?:,? please)?[.!]*$",
        _no_more,
    ),
    pattern("want_you", r"\bI (?:would like|want|need|would prefer|prefer|expect) you to (?P<x>[^;!?]+)", _want_you),
    pattern("business_rule", r"^(?!I\b)(?P<x>[^;!?]+)$", _business_rule),
    pattern(
        "team_norm",
        r"^(?P<x>our (?:team|group|department|dept|company|org|squad) (?P<act>[^;!?]*?)"
        r"\b(?:every|each|always|never|no exceptions)\b[^;!?]*"
        r"|in our (?:team|group|department|dept|company|org),? (?P<act2>(?:nobody|no one|everyone|everybody) [^;!?]+))$",
        _team_norm,
    ),
    pattern(
        "episode",
        rf"\b(?P<s>I|we) (?:(?:just|finally|recently|also|actually|even|already|totally|really|once|both|all) )*"
        rf"(?:(?:have|had) (?:(?:just|finally|already|recently|also) )*)?(?P<v>{_PAST_VERB})\b(?P<x>[^;!?]*)",
        _episode,
    ),
)
