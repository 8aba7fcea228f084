"""What a memory is about: its subject, the slot it sets, and whether that slot holds one
value at a time.

A statement about a person sets a *slot* of a *subject*: "we moved to Denver" sets where
the user lives; "my wife Sarah is allergic to shellfish" adds to Sarah's allergies. A new
value of a single-valued slot of the same subject ends the older one (reconciliation by
structure, not by words); a many-valued slot accumulates.

This module is the shared vocabulary (the learned judge, reconciliation, the block, the
outcome benchmark and the training data all use these names). It imports nothing of
engram.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

USER = "user"  # the speaker
TEAM = "team"  # the user's team, company or organisation
OTHER_PREFIX = "other:"  # another person: "other:wife", "other:son Leo", "other:colleague Ravi"


def other(relation: str) -> str:
    """The subject string for another person, by relation and/or name."""
    relation = " ".join(relation.split()).lower()
    if not relation:
        raise ValueError("another person's subject needs a relation or a name")
    return OTHER_PREFIX + relation


def is_other(subject: str) -> bool:
    return subject.startswith(OTHER_PREFIX)


class Slot(StrEnum):
    # single-valued: a new value ends the old one
    NAME = "name"
    AGE = "age"
    BIRTHDAY = "birthday"
    RESIDENCE = "residence"  # city / neighbourhood / home the subject lives in
    HOMETOWN = "hometown"
    EMPLOYER = "employer"
    JOB_TITLE = "job_title"
    MANAGER = "manager"
    WORK_HOURS = "work_hours"  # schedule, shifts, days worked
    WORK_MODE = "work_mode"  # remote / office / hybrid, where the desk is
    DIET = "diet"  # vegetarian, vegan, keto, halal, ...
    RELATIONSHIP = "relationship"  # single / dating / married / divorced (+ partner's name)
    COMMUTE = "commute"
    TIMEZONE = "timezone"
    REPLY_LANGUAGE = "reply_language"  # the language the user wants answers in
    REPLY_STYLE = "reply_style"  # how the user wants answers written (concise, formal, bullet points)
    BUDGET = "budget"  # a spending cap or limit
    SCHOOL = "school"  # school / university / programme currently attended
    PHONE = "phone"
    EMAIL = "email"
    VEHICLE = "vehicle"
    # many-valued: values accumulate
    ALLERGIES = "allergies"
    HEALTH = "health"  # conditions, medications, injuries, accessibility needs
    CHILDREN = "children"
    PETS = "pets"
    FAMILY = "family"  # other relatives (siblings, parents)
    TOOLS = "tools"  # software, languages, stack, devices used
    LANGUAGES = "languages"  # languages the subject speaks
    HOBBIES = "hobbies"
    LIKES = "likes"  # food, music, places, things liked
    DISLIKES = "dislikes"
    SKILLS = "skills"
    GOALS = "goals"  # plans, projects, ambitions
    RULES = "rules"  # standing rules and processes (approval flow, policies)
    OTHER = "other"  # a durable fact that fits no slot above


SINGLE_VALUED: frozenset[Slot] = frozenset({
    Slot.NAME, Slot.AGE, Slot.BIRTHDAY, Slot.RESIDENCE, Slot.HOMETOWN, Slot.EMPLOYER, Slot.JOB_TITLE,
    Slot.MANAGER, Slot.WORK_HOURS, Slot.WORK_MODE, Slot.DIET, Slot.RELATIONSHIP, Slot.COMMUTE, Slot.TIMEZONE,
    Slot.REPLY_LANGUAGE, Slot.REPLY_STYLE, Slot.BUDGET, Slot.SCHOOL, Slot.PHONE, Slot.EMAIL, Slot.VEHICLE,
})


def single_valued(slot: str | None) -> bool:
    """Whether ``slot`` holds one value at a time (an unknown slot never does)."""
    return slot in SINGLE_VALUED


class Utterance(StrEnum):
    """What a user turn (or one sentence of it) does."""

    FACT = "fact"  # states something durable about a subject
    CHANGE = "change"  # states a new value that replaces an older one ("we moved to Denver")
    PASSING = "passing"  # a state that will not last ("tired today", "in Paris this week")
    CHATTER = "chatter"  # reactions, greetings, thanks, "brb", small talk, weather
    QUESTION = "question"  # asks something, with or without "?"
    REQUEST = "request"  # asks the assistant to do something (orders, documents, code, calendars)
    FORGET = "forget"  # asks the assistant to forget something it remembers
    PASTED = "pasted"  # quoted or pasted text (an e-mail, a document), not the user's own statement


DURABLE: frozenset[Utterance] = frozenset({Utterance.FACT, Utterance.CHANGE})


@dataclass(frozen=True, slots=True)
class Judgement:
    """What the judge reads from one statement."""

    utterance: Utterance
    subject: str  # USER, TEAM or other(...)
    slot: str | None  # a Slot value, or None when the statement sets none
    confidence: float = 1.0  # the judge's probability of ``utterance``

    @property
    def durable(self) -> bool:
        return self.utterance in DURABLE

    @property
    def single(self) -> bool:
        return single_valued(self.slot)
