"""The profile: what an agent always needs about the user, whatever the query's words.

Context has two parts (the source article's "必带信息" and "按需检索信息"): what must
always be in the prompt, and what a query recalls. Relevance cannot find the first
part — "book me a table for Friday" shares neither words nor meaning with "allergic
to peanuts" — so ``context()`` gives the profile first, within a share of its
budget, and fills the rest by relevance.

A memory belongs to the profile when it says who the user is or what holds for them
until further notice. Its tier orders the profile when the budget cannot hold it
all (constraints first: a missing allergy hurts more than a missing hobby):

0. pinned — the application put it there (``MemoryRecord.pinned is True``);
1. constraints — health, allergies, diet, accessibility, budgets and limits;
2. identity — name, where they live, work, family, pets, languages;
3. standing rules and preferences — how the user wants things done;
4. other durable facts about the user.

What is recalled on demand instead: to-dos, plans and events, conclusions, episodes,
files, and anything ``pinned is False``. The tier is read from the kind, the
category (the rule extractor's slots, "identity:name", "taboo:allergy", …) and, for
memories stored without one, the words they use (English and Chinese).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import IntEnum

from ..model import Kind, MemoryRecord, Scope, Status
from ..store.base import RecordFilter, Store


class Tier(IntEnum):
    PINNED = 0
    CONSTRAINT = 1
    IDENTITY = 2
    STANDING = 3
    DURABLE = 4


PROFILE_KINDS = (Kind.FACT, Kind.PREFERENCE, Kind.RULE)

# category groups (the part before ":") of the embedded extractor and common app taxonomies
_CONSTRAINT_GROUPS = frozenset({"taboo", "health", "diet", "allergy", "medical", "accessibility", "budget"})
_IDENTITY_GROUPS = frozenset({"identity", "location", "work", "family", "relation", "work_relation", "pet",
                              "education", "language"})
_STANDING_GROUPS = frozenset({"instruction", "business_rule", "style", "tools", "like", "dislike", "habit",
                              "hobby", "preference", "rule"})
_ON_DEMAND_GROUPS = frozenset({"event", "plan", "planning", "reminder", "task", "deadline", "decision", "todo",
                               "episode"})
_SLOT_CONSTRAINTS = frozenset({"business_rule:budget"})

_CONSTRAINT_WORDS = re.compile(
    r"allerg|intoleran|anaphyla|epipen|celiac|coeliac|gluten|lactose|\bvegan\b|vegetarian|pescatarian|\bhalal\b"
    r"|\bkosher\b|diabet|insulin|pregnan|asthma|epilep|migraine|\bmedication|\bmeds\b|prescri|wheelchair"
    r"|crutches|disabilit|\bdeaf|hard of hearing|hearing aid|\bblind\b|low vision|colou?r.?blind|dyslex|adhd"
    r"|\bautis|\binjur|surgery|\bback pain|blood pressure|\bcan(?:no|')t (?:eat|drink|have|walk|stand)"
    r"|\b(?:do|does)(?:n't| not) (?:eat|drink)|\bnever (?:eat|drinks?)|\bsober\b|\bno (?:alcohol|pork|beef|meat)"
    r"|\bbudget|\bcap\b|\bcapped|\blimit\b|\bat most\b|\bno more than\b|\bmax(?:imum)?\b|\bup to [$€£¥]"
    r"|过敏|忌口|不吃|不能吃|不能喝|不喝酒|吃素|素食|清真|乳糖|麸质|糖尿病|高血压|血糖|怀孕|孕期|备孕|哮喘|癫痫|偏头痛"
    r"|药|轮椅|残疾|听力|视力|色弱|色盲|受伤|手术|预算|上限|不超过|最多|限额|额度|标准是",
    re.IGNORECASE,
)
_IDENTITY_WORDS = re.compile(
    r"\bname is\b|\bnamed\b|\bcalled\b|\bgoes by\b|\blives? in\b|\bliving in\b|\bmoved to\b|\bbased in\b"
    r"|\bworks? (?:at|for|as|in)\b|\bemploy|\bjob\b|\bengineer|\bnurse|\bteacher|\bdoctor"
    r"|\bmanager\b|\bstudent|\bretired|\bwife\b|\bhusband\b|\bpartner\b|\bboyfriend|\bgirlfriend|\bfianc"
    r"|\bdaughter|\bson\b|\bsons\b|\bkids?\b|\bchildren\b|\bbaby\b|\bmother\b|\bfather\b|\bmom\b|\bdad\b"
    r"|\bparents?\b|\bsister|\bbrother|\bcat\b|\bdog\b|\bpuppy|\bkitten|\byears? old\b|\bborn\b|\bbirthday"
    r"|\bspeaks?\b|\bnative\b|\bnationality"
    r"|名叫|叫做|名字|我叫|用户叫|住在|住|搬到|搬家|家在|老家|工作|上班|公司|单位|入职|离职|跳槽|职位|岗位|当护士|当老师"
    r"|工程师|程序员|医生|护士|老师|学生|退休|老婆|老公|妻子|丈夫|媳妇|男朋友|女朋友|对象|女儿|儿子|闺女|孩子|娃|宝宝"
    r"|父母|妈妈|爸爸|老妈|老爸|婆婆|姐姐|妹妹|哥哥|弟弟|猫|狗|岁|生日|出生|籍贯|母语",
    re.IGNORECASE,
)
_STANDING_WORDS = re.compile(
    r"\bprefers?\b|\bprefer(?:red|ence)\b|\blikes?\b|\bloves?\b|\bhates?\b|\bdislikes?\b|\bfavou?rite\b"
    r"|\balways\b|\bnever\b|\busually\b|\bevery (?:day|week|morning|month)|\bwants? (?:answers|replies|reports)"
    r"|\bstyle\b|\bformat\b|\bapproval|\bpolicy\b|\brequire|\bmust\b|\buses\b|\bswitched to\b"
    r"|喜欢|偏好|更喜欢|爱吃|讨厌|不喜欢|习惯|每天|每周|每次|总是|一般|通常|风格|格式|审批|流程|规定|要求|必须|用的是|改用",
    re.IGNORECASE,
)


def tier(record: MemoryRecord) -> Tier | None:
    """The record's profile tier, or None when it is recalled on demand only."""
    if record.pinned is not None:
        return Tier.PINNED if record.pinned else None
    if record.kind not in PROFILE_KINDS:
        return None
    category = (record.category or "").lower()
    group = category.split(":", 1)[0]
    if category in _SLOT_CONSTRAINTS or group in _CONSTRAINT_GROUPS:
        return Tier.CONSTRAINT
    if group in _ON_DEMAND_GROUPS:
        return None
    text = record.content
    if _CONSTRAINT_WORDS.search(text):
        return Tier.CONSTRAINT
    if group in _IDENTITY_GROUPS or _IDENTITY_WORDS.search(text):
        return Tier.IDENTITY
    if record.kind is not Kind.FACT or group in _STANDING_GROUPS or _STANDING_WORDS.search(text):
        return Tier.STANDING
    return Tier.DURABLE


@dataclass(frozen=True, slots=True)
class ProfileEntry:
    record: MemoryRecord
    tier: Tier
    relevance: float  # the record's score for this query (0 when the query did not recall it)


def rank_profile(records: Sequence[MemoryRecord], relevance: Mapping[str, float]) -> list[ProfileEntry]:
    """The profile members of ``records``, best first: tier, then relevance to the
    query, then importance, then the newest."""
    entries = []
    for record in records:
        found = tier(record)
        if found is not None:
            entries.append(ProfileEntry(record, found, relevance.get(record.id, 0.0)))
    entries.sort(key=lambda e: (e.tier, -e.relevance, -e.record.importance, -e.record.valid_from.timestamp(),
                                e.record.id))
    return entries


def profile_members(store: Store, scope: Scope, moment: datetime, *, scan: int, as_of: bool = False,
                    ) -> list[MemoryRecord]:
    """The scope's memories that may be profile: every pinned one (up to ``scan``), then
    the ``scan`` most important, that hold at ``moment`` (``as_of``: also those superseded
    or expired since). Pinned ones are read apart so that a pin of low importance stays
    in the profile however many memories outrank it."""
    statuses = (Status.ACTIVE, Status.SUPERSEDED, Status.EXPIRED) if as_of else (Status.ACTIVE,)
    where = RecordFilter(namespace=scope.namespace, statuses=statuses, valid_at=None if as_of else moment)
    pinned = store.query(scope.tenant, replace(where, pinned=True), order="importance", limit=scan)
    records = list({r.id: r for r in (*pinned, *store.query(scope.tenant, where, order="importance",
                                                             limit=scan))}.values())
    return [r for r in records if tier(r) is not None and (r.held_at(moment) if as_of else True)]
