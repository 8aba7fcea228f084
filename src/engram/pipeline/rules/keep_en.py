"""English: what in a user's sentence is NOT a memory, and how a kept piece is worded.

The keeper (keep.py) cuts a sentence into pieces and keeps every piece that none of
these recognisers claims. The classes are closed and small — questions, requests
for one-off work, passing states, chatter, hedges and hypotheticals, words about
the conversation itself — where the ways of stating a fact are open-ended.
"""

from __future__ import annotations

import re

from .common import is_small_talk
from .en import _META_NEGATION, _QUOTED, _REPORTED, _SOMEONE_SAID, strip_discourse
from .en_base import normalise, third_person, tidy

# where one piece of a sentence ends and the next begins: punctuation, or a conjunction
# before a new subject or a request
_BREAK = re.compile(
    r"\s*(?:[,;:]|\s[-–—]+|\.\.+)\s+(?=\S)"
    r"|\s+(?:and|but|so|because|cause|cos|coz|though|although|plus|which means)\s+"
    r"(?=(?:I|I'm|I've|I'd|I'll|my|we|we're|our|you|your|can|could|would|will|please|pls|maybe|it|it's|that|this|she"
    r"|he|they|there|what|how|is|are|do|does|if|hopefully|let's|lets|remind|add|make|help|just)\b)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z0-9$€£%][\w'$€£%.-]*")
_FUNCTION_WORDS = frozenset(
    """a an the and or but so to of in on at for with from by as is are am was were be been being it its it's this that
    these those there here i i'm me my mine we us our you your he she him her they them their do does did have has had
    just really very too also not no yes oh ok okay lol haha ha pls please thanks thank like get got gonna wanna now
    then well anyway btw actually still even only much more some any all one thing things stuff""".split()
)

# a supposition, not a rule's condition ("… if you touch /payments" states a rule)
# someone else's opinion or wish for the user: "my boss thinks I should learn Go", "mum keeps telling me to…"
_THEIR_VIEW = re.compile(
    r"\b(?:my|our|his|her)\s+(?:\w+\s+)?(?:boss|manager|mum|mom|mother|dad|father|wife|husband|partner|friend|doctor"
    r"|teacher|colleague|coworker|sister|brother|therapist|coach|parents|family|gf|bf|girlfriend|boyfriend|landlord"
    r"|neighbou?r|kids?|son|daughter)\s+(?:\w+\s+)?(?:thinks|reckons|says|said|wants me to|keeps telling me|suggested"
    r"|insists|believes|claims|told me to|would like me to)\b",
    re.IGNORECASE,
)
# what a clinician found is a fact about the user: "my doctor says I have high cholesterol", "GP said my iron is low"
_DIAGNOSED = re.compile(r"\b(?:doctor|gp|dentist|cardiologist|specialist|consultant|nurse|physio|allergist|vet|surgeon"
                        r"|optician|dermatologist)\s+(?:says|said|thinks|found|told me|confirmed)\s+(?:that\s+)?"
                        r"(?:I|my|I'm|I've|I am)\b", re.IGNORECASE)
_HYPOTHETICAL = re.compile(
    r"^(?:if|suppose|supposing|imagine|assuming|assume|what if|in case|let's say|hypothetically|say)\b"
    r"|\b(?:if I (?:ever|were|was|had|won|could|get|got)|what if|I wish|wish I|if only|would have|could have"
    r"|should have|would've|could've|should've|one day I'd|someday I'd)\b",
    re.IGNORECASE,
)
_WH = re.compile(r"^(?:what|what's|whats|when|where|where's|who|who's|whom|whose|why|how|how's|which)\b", re.IGNORECASE)
# an auxiliary first asks ("does insulin mean…", "is it ok to…"); "do not …", "don't …" instruct
_INVERTED = re.compile(
    r"^(?:is|are|am|was|were|do|does|did|can|could|would|will|should|shall|have|has|had|may|might|isn't|aren't"
    r"|doesn't|didn't|can't|won't|wouldn't|shouldn't)\s+(?!not\b|ever\b|forget\b)\w+",
    re.IGNORECASE,
)
_ASKS = re.compile(
    r"^(?:any (?:idea|ideas|tips|thoughts)|(?:i )?wonder(?:ing)?|remind me (?:what|who|where|when|how|which|of)"
    r"|tell me (?:what|who|where|when|how|which|about)|do you (?:know|remember|think)|you know what|is it (?:ok|okay"
    r"|weird|normal|bad|worth|true)|would it|what about|how about|which one|not sure (?:what|how|if|whether))\b",
    re.IGNORECASE,
)
# one-off work for the assistant; "remind me to …" and "remember …" are not here (they keep something)
_REQUEST = re.compile(
    r"^(?:(?:hey|ok|okay|so|and|also|now|right|oh|pls|please|just|quick(?:ly)?|first|then|maybe|could|can|would"
    r"|will|you)[,\s]+)*"
    r"(?:(?:can|could|would|will) you\b|please\b|pls\b|plz\b|help me\b|i need you to\b|i want you to\b|i'd like you to\b"
    r"|let's\b|lets\b|give me\b|make me\b|get me\b|send\b|write\b|draft\b|create\b|generate\b|plan\b|find\b|book\b"
    r"|suggest\b|recommend\b|list\b|show\b|tell me\b|explain\b|summari[sz]e\b|translate\b|fix\b|check\b|review\b"
    r"|compare\b|add\b|convert\b|calculate\b|rewrite\b|proofread\b|edit\b|look up\b|search\b|google\b|sort\b"
    r"|organi[sz]e\b|put together\b|come up with\b|brainstorm\b|outline\b|shorten\b|polish\b|format\b|turn\b"
    r"|remove\b|keep it\b|make it\b|map out\b)",
    re.IGNORECASE,
)
# how to reach the user or someone of theirs: said to "you", and a memory all the same
_CONTACT = re.compile(r"\b(?:reach|contact|call|text|email|e-mail|message|ring|find)\s+(?:me|him|her|them|us|my \w+"
                      r"(?: \w+)?)\s+(?:at|on|via)\b", re.IGNORECASE)
_STANDING = re.compile(
    r"\b(?:always|never|from now on|going forward|in future|in the future|every time|whenever|each time|by default"
    r"|even when|even if|as a rule|for future|for all|all my|any time)\b",
    re.IGNORECASE,
)
_KEEPS = re.compile(r"^(?:(?:please|pls|can you|could you|and|also)\s+)*(?:remind me(?! (?:what|who|where|when|how"
                    r"|which|of)\b)|remember|note that|don't forget|keep in mind)\b", re.IGNORECASE)
_WEATHER = re.compile(r"\b(?:rain(?:ing|y)?|pouring|snow(?:ing|y)?|sunny|windy|cloudy|foggy|humid|freezing|boiling"
                      r"|scorching|weather|hot out|cold out)\b", re.IGNORECASE)
_ONE_OFF_PAST = re.compile(r"\b(?:last night|this morning|yesterday|today|tonight)\b", re.IGNORECASE)
_GENERIC_SUBJECT = re.compile(r"^(?:lots of|many|most|some|a lot of)?\s*(?:people|everyone|everybody|nobody else|folks"
                              r"|kids these days|young people)\b", re.IGNORECASE)
_PASSING_TIME = re.compile(
    r"\b(?:today|tonight|this (?:morning|afternoon|evening)|right now|rn|atm|at the moment|just now|lately|these days"
    r"|this week|all day|since this morning|last night)\b",
    re.IGNORECASE,
)
_PASSING_STATE = re.compile(
    r"\b(?:tired|exhausted|wrecked|knackered|shattered|sleepy|drained|burnt out|burned out|sick|ill|poorly|unwell"
    r"|a cold|the flu|a fever|headache|migraine attack|hungover|stressed|anxious|bored|hungry|starving|grumpy|cranky"
    r"|annoyed|bitter|sad|upset|excited|nervous|mood|dying|killing me|fried|slammed|swamped|busy|on call"
    r"|running on|hours of sleep|no sleep|can't sleep|couldn't sleep|jet ?lag(?:ged)?|sore|aching|a mess|frazzled"
    r"|fighting off|coming down with|feel(?:ing)? (?:like|so|really|a bit|kinda|awful|terrible|great|good|bad|rough)"
    r"|buzzing|freaking out|battery|hungover|stuffed|knackered|sunburnt|jet lag|too much \w+ (?:last night|yesterday)"
    r"|stuck in|got cancell?ed|delayed|late for|running late|on my way|waiting for|so excited|can't wait)\b",
    re.IGNORECASE,
)
_DURABLE_STATE = re.compile(r"\b(?:always|chronic|for years|since (?:i was|childhood)|every|diagnosed|allergic)\b",
                            re.IGNORECASE)
_HEDGED = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|not sure|i guess|i suppose|hopefully|i wonder|kinda thinking"
    r"|thinking about|thinking of|considering|someday|one day|if only)\b",
    re.IGNORECASE,
)
# about the assistant or the conversation itself ("all that yaml you wrote me is useless now", "sorry for the
# typos"); a piece that only addresses "you" ("any venue you suggest needs step-free access") may still hold a memory
_ABOUT_CHAT = re.compile(
    r"\byou(?:'re| are)\s+(?:a |the |so |such a |too |really |very )*(?:star|great|best|amazing|awesome|right|wrong"
    r"|genius|lifesaver|legend|kind|helpful|funny|sweet|good|welcome)\b"
    r"|\byou (?:just )?(?:wrote|said|gave|sent|made|mentioned|suggested|told|did|forgot|missed|got)\b"
    r"|\byour (?:answer|reply|suggestion|email|draft|plan|list|code|advice|idea|tips?|version|help)\b"
    r"|\bthank(?:s| you)\b|\bsorry\b|\bapologi[sz]e|\bthis (?:chat|conversation)\b|\bnever ?mind\b"
    r"|\bas you (?:said|know)\b|\bdid you\b|\byou know what\b|\blong time no (?:see|chat|talk)\b",
    re.IGNORECASE,
)
_REACTION = re.compile(
    r"^(?:(?:ha+|haha+|lol|lmao|ugh|omg|wow|yay|yes+|yeah|yep|nope|no|ok|okay|oh|ah|hmm+|right|well|so|cool|nice|great"
    r"|perfect|amazing|awesome|brilliant|lovely|fab|sweet|fair|true|exactly|totally|obviously|sure|thanks|thank you"
    r"|cheers|ta|noted|got it|makes sense|sounds good|love it|love that|will do|will try|fine|whatever|damn|dang"
    r"|phew|oops|argh|meh|idk|same|good|bad|weird|funny|crazy|wild|yikes)[\s,.!?~]*)+$",
    re.IGNORECASE,
)
# laughter, greetings and interjections before an opinion of what was said: "hahaha that's brilliant", "lol fair enough"
_LEADING_NOISE = re.compile(r"^(?:(?:ha|haha+|hahaha+|lol|lmao|hehe|omg|wow|ugh|hey there|hey|hi|hello|oh|ah|ok|okay"
                            r"|yes|yeah|nah|no)[,!.\s]+)+", re.IGNORECASE)
_EMPTY_OF_MEANING = re.compile(r"^(?:fair enough|no worries|all good|sounds good|good to know|makes sense|got it"
                               r"|long time no (?:see|chat|talk)|never mind|same here|me too|will do)\b", re.IGNORECASE)
_OPINION_OF_IT = re.compile(
    r"^(?:it|that|this|which)(?:'s| is| was| looks| sounds| seems| feels)\s+(?:so |really |very |super |too |pretty "
    r"|kinda |a bit |just |actually )*(?:good|great|perfect|amazing|awesome|nice|helpful|useful|fine|ok|okay|cool|lovely"
    r"|brilliant|fab|funny|weird|wild|crazy|hilarious|sad|annoying|a shame|a pity|true|right|fair|spot on|exactly"
    r"|interesting|wonderful|fantastic|excellent|terrible|awful|bad|worse|better|so true|sacred|the best|the worst"
    r"|gold|genius|hilarious|a relief|a lot|too much|useless|wrong)\b",
    re.IGNORECASE,
)
_EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf\ufe0f]+")


_APPOSITION = re.compile(r"^(?:the|a|an|my|our|his|her|their|who|which)\b(?:\s+\S+){0,5}$", re.IGNORECASE)
# a short piece with no subject of its own goes on with the one before ("…: supervisor, director and finance",
# "Physio is down to once a week, Thursdays only")
_SHORT_TAIL = re.compile(r"^(?!(?:I|I'm|my|we|our|you|he|she|they|it|it's|that|this|there|can|could|please|pls)\b)"
                         r"\S+(?:\s+\S+){0,3}$", re.IGNORECASE)
_LEADING_PHRASE = re.compile(r"^(?:in|on|at|for|with|by|as|during|after|before|at work|here|there)\b(?:\s+\S+){0,3}$",
                             re.IGNORECASE)


def pieces(sentence: str) -> list[str]:
    """The sentence cut at punctuation and at conjunctions before a new subject; an
    apposition ("…, the VP of engineering") stays with the piece before it and a
    leading phrase ("In our group, …") with the piece after it."""
    text = _EMOJI.sub(" ", normalise(sentence))
    raw = [p.strip(" ,.;:!?-–—") for p in _BREAK.split(text) if p and p.strip(" ,.;:!?-–—")]
    out: list[str] = []
    lead = ""
    for piece in (_INTRO.sub("", p) or p for p in raw):
        if _LEADING_PHRASE.match(piece) and not out:
            lead = f"{lead}{piece}, "
        elif out and (_APPOSITION.match(piece) or _SHORT_TAIL.match(piece)) \
                and why_not(piece, ends_with_question=False) is None:
            out[-1] = f"{out[-1]}, {piece}"
        else:
            out.append(lead + piece)
            lead = ""
    return out + ([lead.rstrip(", ")] if lead else [])


def content_words(piece: str) -> int:
    return sum(1 for w in _WORD.findall(piece) if w.lower().strip(".") not in _FUNCTION_WORDS)


_CODE = re.compile(r"[{}]|[=!<>+\-*/]=|\+\+|=>|->|::|`|\b(?:func|def|return|import|const|var|let|print|select"
                   r"|from \w+ import)\b.*[(){}\[\]]|\w+\([^)]*\)\s*[{:;]|;\s*$|^\s*[\[\]{}()]", re.IGNORECASE)
_INTRO = re.compile(r"^(?:(?:ok|okay|right|so|hey|yo|well)[,.!\s]+)*(?:context for (?:future|later)(?: stuff)?|for context"
                    r"|for the record|heads up|fyi|personal news|big news|good news|bad news|news|quick update|update"
                    r"|process change|unrelated|random(?: thought)?|side note|on another note|as i (?:said|mentioned)"
                    r"|like i said|as i told you|again)\b[:!.,\s-]*",
                    re.IGNORECASE)


def why_not(piece: str, *, ends_with_question: bool) -> str | None:
    """Why this piece holds no memory, or None when it may."""
    text = _INTRO.sub("", strip_discourse(piece.strip()))
    text = _LEADING_NOISE.sub("", text) or text
    low = text.lower()
    if _CODE.search(piece):
        return "code"
    if not text or is_small_talk(text) or _REACTION.match(text):
        return "small_talk"
    if _KEEPS.match(text) or _CONTACT.search(text):
        return None
    if ends_with_question or _WH.match(text) or _INVERTED.match(text) or _ASKS.match(text):
        return "question"
    if _HYPOTHETICAL.search(text):
        return "hypothetical"
    if not _DIAGNOSED.search(text) and (_REPORTED.search(text) or _SOMEONE_SAID.search(text) or _QUOTED.search(text)
                                        or _META_NEGATION.search(text) or _THEIR_VIEW.search(text)):
        return "reported"
    if _REQUEST.match(low) and not _STANDING.search(text):
        return "request"
    if _PASSING_STATE.search(text) and not _DURABLE_STATE.search(text):
        return "temporary"
    if _PASSING_TIME.search(text) and not _STANDING.search(text) and (_first_person_now(low) or _WEATHER.search(text)
                                                                       or _ONE_OFF_PAST.search(text)):
        return "temporary"
    if _GENERIC_SUBJECT.match(text):
        return "generic"
    if _HEDGED.search(text):
        return "hedged"
    if _ABOUT_CHAT.search(text) and not _STANDING.search(text) and not _KEEPS.search(text):
        return "about_the_chat"
    if _EMPTY_OF_MEANING.match(text):
        return "small_talk"
    if _OPINION_OF_IT.match(text):
        return "about_the_chat"
    return None


_FIRST_PERSON_NOW = re.compile(r"^(?:i|i'm|i am|i've|my|me|feeling|feel|been|just|so|really|still)\b")


def _first_person_now(low: str) -> bool:
    return bool(_FIRST_PERSON_NOW.match(low))


def worded(piece: str, speaker: str | None) -> str:
    """A kept piece as a memory: discourse markers off, third person, tidy."""
    text = _INTRO.sub("", strip_discourse(piece.strip()))
    text = re.sub(r"^(?:(?:please|pls|can you|could you)\s+)?(?:remember|note)(?:\s+that)?\s+", "", text, flags=re.I)
    return tidy(third_person(text, speaker))
