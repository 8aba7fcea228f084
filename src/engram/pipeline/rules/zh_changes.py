"""Chinese statements of change: a fact that replaces an older one of the same slot.

"我改名叫张三丰了", "我跳槽到阿里巴巴了", "我升职成部门总监了", "我们现在换成钉钉了":
each is kept as the state it leads to, worded and categorised like the first
statement of that slot ("用户名叫张三丰", "用户在阿里巴巴工作", "用户是部门总监",
"团队用钉钉"), so that reconcile sees the same slot and supersedes the old memory.
The cue is kept in metadata as ``change``. Moves ("我搬到杭州了") and diets
("我现在不吃素了") are read with the facts they change (rules_zh_patterns), and
so are business rules that change ("公司现在改成两级审批流程了").
"""

from __future__ import annotations

import re

from ...model import Kind
from .common import ABSTAIN, EMPLOYER, JOB, NAME, TOOLS, Finding
from .zh_base import END, C, Pattern, finding, pattern, third_person, tidy, who
from .zh_patterns import BUSINESS_NOUN, JOBS, NAME_PATTERN, business_rule_of

# When it happened, between "我" and the verb: "我上个月跳槽到了阿里".
_WHEN = r"(?:上个?月|上周|去年|今年|前几天|前阵子|最近|年初|年底|刚刚|刚|已经|终于|现在|目前)*"
_ORG_END = re.compile(r"(?:去|来)?(?:上班|工作|任职)?了?$")
# Where one goes to work, not who one works for: "我去公司上班了".
_NOT_AN_EMPLOYER = re.compile(r"^(?:新|别的|其他|另一家|一家新)?(?:公司|单位|办公室|学校|工地|店里|厂里|家里?|外地|外面|那边|这边)$")


def _name_change(match: re.Match[str], speaker: str | None) -> Finding | None:
    return finding(Kind.FACT, NAME, 0.9, f"{who(speaker)}名叫{match.group('x')}", change="改名")


def _new_employer(match: re.Match[str], speaker: str | None) -> Finding | None:
    org = _ORG_END.sub("", tidy(match.group("x")))
    if len(org) < 2 or _NOT_AN_EMPLOYER.match(org):
        return None
    return finding(Kind.FACT, EMPLOYER, 0.85, f"{who(speaker)}在{third_person(org, speaker)}工作", change=match.group("v"))


def _left_employer(match: re.Match[str], speaker: str | None) -> Finding | None:
    org = tidy(match.group("x"))
    return finding(Kind.FACT, EMPLOYER, 0.85, f"{who(speaker)}已从{org}{match.group('v')}", change=match.group("v"))


_ENDS_WITH_JOB = re.compile(rf"(?:{JOBS})$")


def _new_role(match: re.Match[str], speaker: str | None) -> Finding | None:
    role = tidy(match.group("x"))
    if len(role) < 2:
        return None
    verb = "是" if match.group("v") in {"升职", "晋升", "升", "提拔", "提升"} or _ENDS_WITH_JOB.search(role) else "做"
    return finding(Kind.FACT, JOB, 0.85, f"{who(speaker)}{verb}{third_person(role, speaker)}", change=match.group("v"))


_SUBJECT = {"我们公司": "公司", "我司": "公司", "公司": "公司", "我们团队": "团队", "团队": "团队", "我们部门": "部门",
            "部门": "部门", "我们组": "团队", "我们": "团队"}
_SWITCH = frozenset({"改用", "换用", "换成", "换成了", "换到", "改成", "改成用", "切换到", "切换成", "迁移到", "转到", "转用", "不再用", "不再使用"})
_NOT_A_TOOL = re.compile(r"^(?:了|过|完|掉|光|着|这|那|哪|什么|的|得|上|下|心|力|功)")
_LATIN = re.compile(r"[A-Za-z]")


def _team_tool(match: re.Match[str], speaker: str | None) -> Finding | None:
    tool = tidy(match.group("x"))
    if len(tool) < 2 or _NOT_A_TOOL.match(tool):
        return None  # "我们用了三天", "我们用这个"
    if BUSINESS_NOUN.search(tool) and business_rule_of(match.string, speaker) is not None:
        return None  # "改成两级审批流程" is a business rule; "用钉钉打卡" is still a tool
    subject, verb = match.group("s"), match.group("v")
    changed = verb.rstrip("了") in _SWITCH or bool(match.group("lead")) or bool(match.group("old"))
    if not changed and subject == "我们" and not _LATIN.search(tool):
        return None  # a bare "我们用…" is too often not a tool: only named products ("我们用Slack")
    if subject == "我":
        return _own_switch(match, tool, speaker) if changed else None  # a plain "我用…" is a habit, not a switch
    action = "不再用" if verb.startswith("不再") else "用"
    content = f"{_SUBJECT.get(subject, '团队')}{action}{third_person(tool, speaker)}"
    cue = (match.group("lead") or "").rstrip("，,") or verb
    return finding(Kind.FACT, TOOLS, 0.8 if changed else 0.75, content, change=cue.rstrip("了") if changed else None,
                   replaces=match.group("old"))


def _own_switch(match: re.Match[str], tool: str, speaker: str | None) -> Finding | None:
    """"我最近从Java转到主要写Go了": the user's own tools changed (never a move)."""
    old = match.group("old")
    if old is None or not (_LATIN.search(old) or _LATIN.search(tool)):
        return None  # "我从销售转到产品" is a career change, not a tool
    verb = match.group("v").rstrip("了")
    content = f"{who(speaker)}从{third_person(old, speaker)}{verb}{third_person(tool.rstrip('了'), speaker)}"
    return finding(Kind.FACT, TOOLS, 0.8, content, change=verb, replaces=old)


def _can_again(match: re.Match[str], speaker: str | None) -> Finding | None:
    vp = match.group("vp")
    return finding(Kind.PREFERENCE, ABSTAIN, 0.8, who(speaker) + third_person(vp, speaker), change=match.group("v"))


CHANGES: tuple[Pattern, ...] = (
    pattern(
        # "我现在能吃辣了": a taboo that no longer holds, in the taboo's slot
        "can_again",
        rf"我{_WHEN}(?P<vp>(?:又|也)?(?P<v>能|可以|敢|开始)(?:吃|喝|碰|沾)(?!饭|东西|素|荤)(?P<x>{C}{{1,8}}?))了{END}",
        _can_again,
    ),
    pattern(
        "name_change",
        rf"我{_WHEN}(?:改(?:了)?名(?:字)?(?:叫|为|成)了?|的?名字{_WHEN}改(?:成|为|叫)了?)(?P<x>{NAME_PATTERN})",
        _name_change,
    ),
    pattern(
        "new_employer",
        rf"我{_WHEN}(?P<v>跳槽到了?|跳槽去了?|跳到了?|入职了?|加盟了?)(?P<x>{C}{{2,15}})",
        _new_employer,
    ),
    pattern(
        "goes_to_work_at",
        rf"我{_WHEN}(?P<v>去|到|进)了?(?P<x>{C}{{2,12}}?)(?:上班|工作|任职)了?{END}",
        _new_employer,
    ),
    pattern(
        "left_employer",
        rf"我{_WHEN}从(?P<x>{C}{{2,12}}?)(?P<v>离职|辞职|退休)了?{END}",
        _left_employer,
    ),
    pattern(
        "new_role",
        rf"我{_WHEN}被?(?P<v>升职|晋升|升|提拔|提升|转岗|转行|改行|换岗)(?:成|为|到|做|当)了?(?P<x>{C}{{1,12}})",
        _new_role,
    ),
    pattern(
        "team_tool",
        r"^(?P<lead>(?:以后|今后|从现在开始|从现在起|从今天开始|从今天起)[，,]?)?"
        r"(?P<s>我们公司|我们团队|我们部门|我们组|我们|我司|公司|团队|部门|我)"
        r"(?:现在|目前|已经|以后|今后|也|都|全部|统一|一直|最近|去年|今年|上个?月|刚|刚刚)*"
        rf"(?:从(?P<old>{C}{{1,12}}?))?"
        rf"(?P<v>不再使用|不再用|改用|换用|换成了?|换到了?|改成用?|切换到了?|切换成了?|迁移到了?|转到了?|转用|使用|用)(?P<x>{C}{{2,20}})",
        _team_tool,
    ),
)

