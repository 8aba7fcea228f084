"""Chinese pattern tables: identity, tastes and taboos, life facts, rules, tasks, decisions, events.

When two patterns overlap, the more confident wins; on a tie, the one listed first.
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
    NICKNAME,
    ORIGIN,
    RELATION_MANAGER,
    RELATION_MENTOR,
    RESIDENCE,
    SURNAME,
    TOOLS,
    Finding,
    business_slot,
    taste_slot,
)
from .zh_base import (
    CC,
    END,
    TIME,
    Builder,
    C,
    Pattern,
    about_user,
    as_said,
    deadline,
    finding,
    has_deadline,
    pattern,
    third_person,
    tidy,
    who,
)

_NAME = rf"(?:[A-Z][a-zA-Z]+(?: [A-Z][a-zA-Z]+)?|(?![了过着你他她它])[\u4e00-\u9fff·]{{2,4}}){END}"
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
    "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_NOT_NAME_END = "生人者员师家的族迷控党长总"
_START = r"(?:^|(?<=[，,]))"
# Hedges may sit between 我 and the verb ("我可能比较喜欢…"); the sentence's hedge penalty handles them.
_HEDGED = r"(?:可能|也许|或许|大概|好像|应该)?"
# Replies that start like a rule but are reassurance: "不要客气", "别担心".
_NOT_RULE = r"(?!客气|担心|着急|急|怕|谢|忘|难过|伤心|生气|介意|误会|紧张|放弃|在意|这样说)"


def _named(template: str, confidence: float, category: str = NAME) -> Builder:
    def build(match: re.Match[str], speaker: str | None) -> Finding | None:
        return finding(Kind.FACT, category, confidence, template.format(who=who(speaker), x=match.group("x")))

    return build


def _shi_name(match: re.Match[str], speaker: str | None) -> Finding | None:
    name = match.group("x")
    if name[-1] in _NOT_NAME_END:
        return None  # "我是高中生", "我是王老师的学生": a role, not a name
    return finding(Kind.FACT, NAME, 0.85, f"{who(speaker)}名叫{name}")


# Objects that point back into the chat ("喜欢你", "喜欢这样") say nothing durable.
_DEICTIC_OBJECT = re.compile(r"(?:你|您|它|他|她|这个|那个|这样|那样|了|的|上你|吃醋)")


# "以前我喜欢靠窗的座位": a taste the user had, not one they have.
_PAST_BEFORE = re.compile(r"(?:以前|之前|原来|过去|曾经|小时候|当年)[，,]?$")


def _taste(category: str, strong: float, soft: float, soft_words: str | None = None) -> Builder:
    softener = re.compile(soft_words) if soft_words else None

    def build(match: re.Match[str], speaker: str | None) -> Finding | None:
        obj = match.group("x")
        if _DEICTIC_OBJECT.match(obj) or _PAST_BEFORE.search(match.string[: match.start()]):
            return None
        confidence = soft if softener is not None and softener.search(match.group("vp")) else strong
        slot = taste_slot(obj, category)
        return finding(Kind.PREFERENCE, slot, confidence, who(speaker) + third_person(match.group("vp"), speaker))

    return build


IDENTITY_AND_TASTE: tuple[Pattern, ...] = (
    pattern("name", rf"我(?:的)?(?:名字|全名|姓名)(?:叫|是)(?P<x>{_NAME})", _named("{who}名叫{x}", 0.9)),
    pattern("jiao", rf"{_START}我叫(?!外卖|车|醒|快递|滴滴|出租|人|了|过|着|起|上|你|他|她)(?P<x>{_NAME})", _named("{who}名叫{x}", 0.9)),
    pattern("shi_name", rf"{_START}(?:你好|大家好|您好)?[，,！!]?我是(?P<x>[{_SURNAMES}][\u4e00-\u9fff]{{1,2}}){END}", _shi_name),
    pattern(
        "call_me",
        rf"(?:你|您)?(?:可以|就|都)?叫我(?P<x>[\u4e00-\u9fffA-Za-z]{{1,4}}?)(?:就(?:行|好|可以)了?)?{END}",
        _named("{who}希望被称为{x}", 0.85, NICKNAME),
    ),
    pattern("surname", rf"我姓(?P<x>[\u4e00-\u9fff]{{1,2}}){END}", _named("{who}姓{x}", 0.85, SURNAME)),
    pattern("birthday", rf"我(?P<vp>(?:的)?生日(?:是|在){C}{{2,20}})", about_user(Kind.FACT, BIRTHDAY, 0.9)),
    pattern("age", r"我(?P<vp>(?:今年)?[\d一二三四五六七八九十两]{1,3}岁)", about_user(Kind.FACT, AGE, 0.85)),
    pattern(
        "allergy",
        rf"我(?P<vp>对{C}{{1,15}}?(?:过敏|不耐受)|(?![不没]){C}{{0,8}}?(?:过敏(?:体质)?|不耐受?(?:症)?))",
        about_user(Kind.PREFERENCE, ALLERGY, 0.9),
    ),
    pattern(
        "diet",
        r"我(?:最近|今年|去年|从今年|从去年)?(?P<vp>(?:现在|目前|已经|开始|改成?)?(?:是|吃)(?:个|一个|一名)?(?:素食主义者|素食者|纯素食者|吃素的|素食|素|穆斯林|回民|清真)"
        r"|(?:现在|目前|已经)?(?:不再|不)(?:吃素|是素食主义者|是素食者)(?!的))",
        about_user(Kind.PREFERENCE, DIET, 0.85),
    ),
    pattern(
        "abstain",
        rf"我(?P<vp>{_HEDGED}(?:从来|从小|一直|平时|基本|完全|也|都|已经|现在|最近)*(?:不再|不|不能|不敢|从不|戒了)(?:吃|喝|碰|抽|沾)(?![了过素]){C}{{1,15}})",
        about_user(Kind.PREFERENCE, ABSTAIN, 0.85),
    ),
    pattern(
        "dislike",
        rf"我(?P<vp>{_HEDGED}(?:现在|目前|特别|非常|很|最|超|真的|实在|比较|有点|一直|向来|也|都)*(?:讨厌|厌恶|反感|受不了|不喜欢|不太喜欢"
        rf"|不怎么喜欢|不再喜欢|不爱|烦)(?P<x>{C}{{1,20}}))",
        _taste("dislike", 0.85, 0.8, "有点|不太|不怎么"),
    ),
    pattern(
        "switched_taste",
        rf"我(?:最近|已经|现在|目前)*(?P<vp>改(?:成|为)?(?:吃|喝)(?!了){C}{{1,10}}?)了?{END}",
        about_user(Kind.PREFERENCE, "like", 0.85),
    ),
    pattern(
        "favorite",
        rf"我(?P<vp>(?:最|最最)(?:喜欢|爱)的{C}{{0,8}}?是(?P<x>{C}{{1,15}}))",
        _taste("like", 0.85, 0.85),
    ),
    pattern(
        "like",
        rf"我(?P<vp>{_HEDGED}(?:现在|目前|平时|平常|一直|也|还|都|特别|非常|很|最|超|真的|比较|挺|蛮|更|超级|就)*(?:喜欢|爱(?![人情])|热爱|偏好"
        rf"|偏爱|习惯|钟爱|喜爱|享受|迷上了?|爱上了?|(?:的)?爱好是)(?P<x>{C}{{1,25}}))",
        _taste("like", 0.8, 0.8),
    ),
)

_JOBS = (
    "工程师|程序员|设计师|经理|老师|教师|医生|护士|律师|会计|学生|研究生|博士生|博士|本科生|大学生|高中生|初中生|小学生|作家"
    "|记者|编辑|销售|产品经理|运营|司机|厨师|警察|公务员|创业者|老板|主管|总监|分析师|顾问|研究员|架构师|实习生|自由职业者"
    "|全职妈妈|全职爸爸|家庭主妇|歌手|演员|画家|摄影师|翻译|客服|HR|CEO|CTO|教授|科学家|军人|农民|工人|快递员|外卖员"
)
_REL = (
    "老公|老婆|丈夫|妻子|太太|先生|爱人|男朋友|女朋友|男友|女友|对象|未婚夫|未婚妻|儿子|女儿|孩子|闺女|小孩|宝宝"
    "|爸爸|妈妈|父亲|母亲|爸妈|父母|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|家人|老爸|老妈|爸|妈|哥(?!们)|姐|弟|妹"
)
_PETS = "猫|狗|柯基|泰迪|金毛|哈士奇|柴犬|布偶|英短|美短|橘猫|鹦鹉|仓鼠|兔子|乌龟|宠物"
# When a move happened, between the subject and the verb: "我们家上个月搬去了成都".
_MOVE_WHEN = "上个?月|上周|去年|今年|前几天|前阵子|最近|年初|年底|上半年|下半年"


_BOSS = "直属上级|直属领导|顶头上司|上级|上司|领导|老板|经理|主管|组长|总监|leader|Leader"
_MENTOR = "导师|师傅"
# The names that follow a pet or children in the next clauses: "，叫大橘", "，大的叫乐乐，小的叫安安".
_THEIR_NAMES = rf"(?:[，,]{C}{{0,6}}?(?:叫|名叫|名字叫|名字是|取名叫?){C}{{1,8}})*"
# Where the boss sits: "我们部门经理叫赵磊", "我的项目经理是孙涛".
_UNIT = "(?:部门|团队|项目组?|组里?|公司|小组|实验室)?的?"
# A name, with the title people add to it: "周立新教授", "吴国平老师".
_TITLED_NAME = (
    rf"(?:[A-Z][a-zA-Z]+(?: [A-Z][a-zA-Z]+)?|(?![了过着你他她它])[\u4e00-\u9fff·]{{2,4}}?)"
    rf"(?:教授|老师|博士|医生|律师|先生|女士|总监|经理)?{END}"
)
# Not a name after 是: "我的领导是个好人", "我的老板是很严格的人".
_NOT_A_NAME = "(?![个一很非特比挺真太位名])"


def _work_relation(match: re.Match[str], speaker: str | None) -> Finding | None:
    """"我的直属上级是王建国": who the user reports to (one slot: a new manager replaces the old)."""
    role = match.group("role")
    category = RELATION_MENTOR if re.fullmatch(_MENTOR, role) else RELATION_MANAGER
    unit = (match.group("unit") or "").rstrip("的")
    return finding(Kind.FACT, category, 0.85, f"{who(speaker)}的{unit}{role}是{match.group('name')}")


def _relative(match: re.Match[str], speaker: str | None) -> Finding | None:
    phrase = third_person(match.group("vp"), speaker)
    joiner = "" if phrase.startswith("的") else "的"
    return finding(Kind.FACT, "family", 0.8, who(speaker) + joiner + phrase)


_EMPLOYED = re.compile(r"工作|上班|实习|任职|就职")
_LIVES = re.compile(r"生活|定居|安家")
_PAST = re.compile(r"^(?:之前|以前|曾经|原来|过去)")


def _work_at(match: re.Match[str], speaker: str | None) -> Finding | None:
    """"在腾讯工作" names an employer; "在字节跳动做产品经理", "在医院当护士" a job; "之前在百度工作" neither, now."""
    category = EMPLOYER if _EMPLOYED.fullmatch(match.group("v")) else JOB
    if _PAST.match(match.group("vp")):
        category = "work"
    elif _LIVES.search(match.group("vp")):
        category = RESIDENCE  # "在杭州工作和生活": where the user lives
    return finding(Kind.FACT, category, 0.85, who(speaker) + third_person(match.group("vp"), speaker))


_MOVED = re.compile(r"^(?:现在|目前|一直|常年|也|已经|刚|刚刚)*(?:搬到了?|搬去了?|搬回了?|搬家到了?|迁到了?)")
_PLACE_END = re.compile(r"(?:去|来|住|生活|定居)?了?$")
# A new home that names no place says nothing of where the user lives: "搬到新家了".
_NO_PLACE = re.compile(r"^(?:新家|新房子?|新公寓|新的?地方|这里|那里|这边|那边|这儿|那儿|隔壁|楼上|楼下|宿舍|家里)$")


def _home(match: re.Match[str], speaker: str | None) -> Finding | None:
    """Where the user lives; a move says where they live now ("搬到杭州了" -> "用户住在杭州")."""
    vp = match.group("vp")
    moved = _MOVED.match(vp)
    if moved is not None:
        where = _PLACE_END.sub("", tidy(vp[moved.end() :]))
        if _NO_PLACE.match(where):
            return finding(Kind.FACT, RESIDENCE, 0.85, who(speaker) + third_person(vp, speaker), change="搬家")
        return finding(Kind.FACT, RESIDENCE, 0.85, f"{who(speaker)}住在{third_person(where, speaker)}", change="搬家")
    return finding(Kind.FACT, RESIDENCE, 0.85, who(speaker) + third_person(vp, speaker))


def _plan(match: re.Match[str], speaker: str | None) -> Finding | None:
    confidence = 0.8 if match.group("v") in {"打算", "计划", "准备"} else 0.6  # 想: a wish, not a plan
    return finding(Kind.FACT, "plan", confidence, who(speaker) + third_person(match.group("vp"), speaker))


_DEVICE = "手机|电脑|笔记本|平板|编辑器|浏览器|输入法|邮箱|IDE|ide"
_TOOL_VERB_LEAD = "(?:现在|目前|平时|平常|一般|主要|一直|都|也|基本|日常|写代码|编程|开发|做开发|办公|记笔记|画图|做图)*"


def _tool(match: re.Match[str], speaker: str | None) -> Finding | None:
    """"我平时写代码主要用Python", "我手机用的是iPhone 15": a named product the user works with."""
    if "了" in match.group("rest"):
        return None  # "我用Python写了个脚本" is something done once
    return finding(Kind.FACT, TOOLS, 0.85, who(speaker) + third_person(match.group("vp"), speaker))


LIFE_FACTS: tuple[Pattern, ...] = (
    pattern(
        "tool",
        rf"我(?P<vp>(?:的)?(?:{_DEVICE})?{_TOOL_VERB_LEAD}用(?:的是|的)?\s*[A-Za-z][A-Za-z0-9.+#-]*(?: [A-Z0-9][A-Za-z0-9.+#-]*)*(?P<rest>{C}{{0,12}}))",
        _tool,
    ),
    pattern(
        "work_relation",
        rf"(?:我的|我们的?|我)(?P<unit>{_UNIT})(?P<role>{_BOSS}|{_MENTOR})(?:现在|目前|就|也)?(?:是|叫|换成了?){_NOT_A_NAME}"
        rf"(?P<name>{_TITLED_NAME})",
        _work_relation,
    ),
    pattern(
        "work_at",
        rf"我(?P<vp>(?:现在|目前|之前|以前|一直|也)?(?:在|于)(?!家|家里|宿舍|路上|床上){C}{{1,15}}?(?P<v>当|做|担任|工作|上班|实习|任职"
        rf"|就职|负责){C}{{0,15}})",
        _work_at,
    ),
    pattern(
        # greedy up to the last job word: "是销售部的经理" is a manager, not "销售"
        "job",
        rf"我(?P<vp>(?:现在|目前|也|已经)?(?:是|当)(?:一[名个位]|个)?{C}{{0,8}}(?:{_JOBS}))",
        about_user(Kind.FACT, JOB, 0.85),
    ),
    pattern("job_is", rf"我(?P<vp>(?:的)?(?:工作|职业|职位|岗位)(?:现在)?是{C}+)", about_user(Kind.FACT, JOB, 0.85)),
    pattern("trade", rf"我(?P<vp>(?:是)?(?:做|搞|干){C}{{1,8}}?(?:的|工作|行业)){END}", about_user(Kind.FACT, JOB, 0.75)),
    pattern(
        "home",
        rf"(?:我|我们家|我们一家|我们全家|我家)(?:{_MOVE_WHEN})?(?P<vp>(?:现在|目前|一直|常年|也|已经|刚|刚刚)*(?:不再|不)?"
        rf"(?:住在|住|定居在|定居|生活在|搬到了?|搬去了?|搬回了?|搬家到了?|迁到了?){C}{{2,15}}"
        rf"|在(?!家|这|那){C}{{2,8}}?(?:生活|定居|安家)(?:和工作)?{END})",
        _home,
    ),
    pattern("hometown", rf"我(?P<vp>(?:的)?(?:老家|家乡|籍贯)(?:在|是){C}{{2,12}})", about_user(Kind.FACT, ORIGIN, 0.85)),
    pattern(
        "origin",
        rf"我(?P<vp>是(?!一个|个|好|坏|男|女|成年|年轻|老|有钱|穷|普通|外星|聪明|懒|客)[\u4e00-\u9fff]{{2,4}}人){END}",
        about_user(Kind.FACT, ORIGIN, 0.85),
    ),
    pattern(
        "relative",
        rf"我(?P<vp>(?:的)?(?:{_REL})(?:今年|现在|已经|也|还|刚|才|很|特别|一直)*(?:是|在|叫|有|住|做|当|上|读|喜欢|爱|学|养"
        rf"|[\d一二三四五六七八九十两]+岁|刚){C}{{1,20}})",
        _relative,
    ),
    pattern(
        "children",
        rf"我(?P<vp>(?:有|生了|养了)(?:一|两|二|三|四|五|\d)(?:个|位|名){C}{{0,4}}?(?:孩子|儿子|女儿|闺女|兄弟|姐妹|哥哥|姐姐"
        rf"|弟弟|妹妹|娃|宝宝){C}{{0,15}}{_THEIR_NAMES})",
        about_user(Kind.FACT, "family", 0.85),
    ),
    pattern(
        "marital",
        r"我(?P<vp>(?:已经|刚)?(?:结婚|离婚|订婚|单身|怀孕|当妈妈|当爸爸|当妈|当爸)了?)",
        about_user(Kind.FACT, "family", 0.85),
    ),
    pattern(
        "pet",
        rf"我(?P<vp>(?:家)?(?:养了|养着|养|有){C}{{0,10}}?(?:{_PETS}){C}{{0,10}}{_THEIR_NAMES})",
        about_user(Kind.FACT, "pet", 0.85),
    ),
    pattern(
        "study",
        rf"我(?P<vp>(?:现在|目前)?(?:在|正在)?(?:读|念|上|学){C}{{1,15}}?(?:专业|研究生|博士|本科|大学|大一|大二|大三|大四|高中"
        rf"|初中|小学|硕士|MBA){C}{{0,8}})",
        about_user(Kind.FACT, "education", 0.85),
    ),
    pattern(
        "school",
        rf"我(?P<vp>(?:是|毕业于|从){C}{{2,12}}?(?:大学|学院)(?:毕业|的学生)?{C}{{0,6}})",
        about_user(Kind.FACT, "education", 0.85),
    ),
    pattern(
        "habit",
        rf"我(?P<vp>(?:每天|每周|每个?月|每晚|每早|平时|平常|经常|常常|通常|一般|每年|周末)(?!的|都?(?:在想|想|觉得|以为)){C}{{2,20}})",
        about_user(Kind.FACT, "habit", 0.8),
    ),
    pattern(
        "duration",
        rf"我(?P<vp>{C}{{1,10}}?(?:已经|有)[\d一二三四五六七八九十两几半]+多?(?:年|个月)多?了?)",
        about_user(Kind.FACT, "hobby", 0.8),
    ),
    pattern("plan", rf"我(?:们)?(?P<vp>(?:明年|今年|下个月|下周)?(?P<v>打算|计划|准备|想要|想){C}{{2,25}})", _plan),
)

# --- rules, business rules, tasks, decisions, events ---------------------------------------

_DURABLE = re.compile(r"以后|今后|往后|每次|每天|每周|总是|始终|一直|永远|所有|从现在开始|不要再|别再")
_TALK_OR_SELF = re.compile(r"我(?!的)|再说|再聊|见|聊")
_ANY_TIME = re.compile(TIME)
_BUSINESS_NOUN = re.compile(
    "审批|批准|审核|签字|签署|预算|报销|流程|制度|规定|政策|标准|上限|下限|合同|请假|入职|离职|采购|差旅|住宿|加班|考勤|打卡"
    "|发票|付款|报价|折扣|代码评审|评审|上线|权限|合规|绩效|工资|薪资|奖金|补贴|额度|费用|经费|员工|供应商|开支"
)
_NORMATIVE = re.compile(
    r"需要|需|须|必须|要求|应当|应该|不得|不能|不可|禁止|不允许|只能|至少|最多|不超过|超过|以上|以下|以内|采用|实行|执行|实施"
    r"|控制在|由|要|[是为][\d一二三四五六七八九十两百千万]"
    # a rule that changes: "改成两级审批流程", "预算调整为八万", "不再需要总经理签字"
    r"|改成|改为|换成|变成|变为|调整为|调整成|调整到|改用|降到|降为|降至|提高到|提高为|提高至|增加到|减少到|上调|下调|不再"
)
# "以后报销改为部门经理审批": the rule is what follows the marker, which is kept as the change.
_CHANGE_LEAD = re.compile(r"^(?:以后|今后|往后|从现在开始|从现在起|从今天开始|从今天起|从下个?月(?:开始|起)|从明年(?:开始|起))[，,]?")
_AUTHORITY = re.compile(
    r"公司|部门|团队|单位|集团|我司|本司|制度|规定|政策|流程|审批|批准|\d|[一二三四五六七八九十两百千万]+(?:元|块|万|天|人|级)"
)


_STYLE = re.compile(r"简洁|简短|精简|简单|简明|详细|具体|详尽|长一|短一|太长|太短|一页|图表|要点|分点|列表|条理|口语|正式"
                    r"|[Mm]arkdown|表格|字数")
_PLEASE_LEAD = re.compile(r"^(?:请你?|麻烦你?|你)?把?|(?<=[\u4e00-\u9fff])请(?=[写用做给把按])")


def style_wish(text: str, speaker: str | None) -> Finding | None:
    """How the user wants reports or answers, said as an instruction ("以后报告请写得详细一些")
    is the same preference as "我喜欢详细的报告": one slot, so a change supersedes it."""
    slot = taste_slot(text, "")
    if not slot or not _STYLE.search(text):
        return None
    body = tidy(_PLEASE_LEAD.sub("", text.lstrip("，,")))
    return finding(Kind.PREFERENCE, slot, 0.85, f"{who(speaker)}希望{third_person(body, speaker)}")


# "以后请多指教", "今后多多关照": a courtesy, not an instruction.
_COURTESY = re.compile(r"^(?:请|还请|也请)?(?:多多|多|继续)?(?:指教|关照|指点|照顾|包涵|支持|指导|联系)")


def _prefixed_rule(match: re.Match[str], speaker: str | None) -> Finding | None:
    rest = match.group("x")
    if _TALK_OR_SELF.match(rest) or _COURTESY.match(rest):
        return None  # "以后我想…" is the user's plan; "以后再说" is talk
    wish = style_wish(rest, speaker)
    if wish is not None:
        return wish
    business = business_rule_of(rest, speaker, change=match.group("m"))
    if business is not None:
        return business  # "以后报销改为部门经理审批" is a business rule that changed, not an order to the assistant
    return finding(Kind.RULE, "instruction", 0.85, third_person(match.group(0).lstrip("，,"), speaker))


def _prohibition(match: re.Match[str], speaker: str | None) -> Finding | None:
    confidence = 0.9 if "再" in match.group("v") else 0.85
    return finding(Kind.RULE, "instruction", confidence, third_person(match.group("x"), speaker))


def _polite(match: re.Match[str], speaker: str | None) -> Finding | None:
    if _COURTESY.match("请" + match.group("x")):
        return None
    wish = style_wish(match.group("x"), speaker)
    if wish is not None:
        return wish
    confidence = 0.85 if _DURABLE.search(match.group("x")) else 0.6  # "请用中文" may be for this turn only
    return finding(Kind.RULE, "instruction", confidence, third_person(match.group("x"), speaker))


def business_rule_of(text: str, speaker: str | None, change: str | None = None) -> Finding | None:
    lead = _CHANGE_LEAD.match(text)
    if lead is not None:
        text, change = text[lead.end() :], lead.group(0).rstrip("，,")
    if not _BUSINESS_NOUN.search(text) or not _NORMATIVE.search(text) or has_deadline(text):
        return None
    confidence = 0.85 if _AUTHORITY.search(text) else 0.75
    return finding(Kind.RULE, business_slot(text), confidence, third_person(text, speaker), change=change)


def _business_rule(match: re.Match[str], speaker: str | None) -> Finding | None:
    return business_rule_of(match.group("x"), speaker)


def _task(prefix: str) -> Builder:
    def build(match: re.Match[str], speaker: str | None) -> Finding | None:
        task = match.group("x")
        content = who(speaker) + "需要" + third_person(task, speaker)
        return finding(Kind.TODO, "reminder", 0.9 if prefix else 0.85, content, deadline=deadline(task))

    return build


def _must(match: re.Match[str], speaker: str | None) -> Finding | None:
    phrase = match.group("vp")
    confidence = 0.85 if _ANY_TIME.search(match.group(0)) else 0.6  # undated "我要…" is mostly the moment
    content = who(speaker) + third_person(phrase, speaker)
    return finding(Kind.TODO, "task", confidence, content, deadline=deadline(phrase))


ACTIONS: tuple[Pattern, ...] = (
    pattern("remind", rf"{_START}(?:请你?|麻烦你?)?提醒(?:一下)?我(?P<x>{CC}+)", _task("remind")),
    pattern("remember_to", rf"{_START}(?:请|你要|要)?(?:记得|别忘了|不要忘了|不要忘记|别忘记|千万别忘了)(?P<x>{CC}+)", _task("")),
    pattern(
        "dated",
        rf"^(?P<x>{CC}*?(?:{TIME}(?:之前|以前|前|为止|截止)|截止(?:日期|时间)?(?:是|为|在|定在)){CC}*)",
        as_said(Kind.TODO, "deadline", 0.85),
    ),
    pattern("must", rf"我(?P<vp>(?:今天|明天|后天|下周|这周|本周|周[一二三四五六日末])?(?:要|得|需要|必须|还要|还得){C}{{2,30}})", _must),
    pattern(
        "conclusion",
        rf"(?P<x>(?:最终|最后的?)?(?:结论|总结|共识)(?:是|为|：|:|就是){CC}+)",
        as_said(Kind.CONCLUSION, "decision", 0.85),
    ),
    pattern(
        "decided",
        rf"^(?P<x>{CC}*?(?:决定|商定|敲定|拍板|定下来|一致同意|都同意"
        rf"|(?:会上|最后|最终|已经|大家|我们)定(?:了|下来了?)){CC}*)",
        as_said(Kind.CONCLUSION, "decision", 0.85),
    ),
    pattern(
        "settled",
        rf"^(?P<x>{CC}*?(?:方案|决定|选择|选型)(?:定为|定了|是|为|：|:){CC}+)",
        as_said(Kind.CONCLUSION, "decision", 0.85),
    ),
    pattern("cause", rf"^(?P<x>{CC}*?(?:根本原因|主要原因|原因|根因)(?:是|在于){CC}+)", as_said(Kind.CONCLUSION, "decision", 0.8)),
    pattern(
        "from_now_on",
        rf"{_START}(?P<m>以后|今后|往后|从现在开始|从现在起|从今天开始|从今天起|以后都|下次)[，,]?(?P<x>{CC}+)",
        _prefixed_rule,
    ),
    pattern(
        "prohibition",
        rf"{_START}(?P<x>(?:{C}{{0,12}}?(?:的时候|时候|时))?(?:请|千万|一定)?(?P<v>不要再|别再|再也不要|不要|别|不许|不准|禁止|请勿|勿"
        rf"|不用再|不必再){_NOT_RULE}{CC}{{1,40}})",
        _prohibition,
    ),
    pattern(
        "prohibition_to_me",
        rf"{_START}(?P<x>{C}{{0,10}}?(?P<v>不要再|别再|不要|别){C}{{0,8}}?(?:给我|帮我|对我|跟我|和我|替我|让我|叫我|找我|打扰我){C}*)",
        _prohibition,
    ),
    pattern(
        "standing_order",
        rf"{_START}(?P<x>(?:每次|每天|每周[一二三四五六日天]?|每个?月|每晚|每早|总是|一律|始终|务必|一定要|请务必|请始终|请一直|都要)"
        rf"{CC}*?(?:给我|帮我|为我|替我|提醒我|跟我|用|回复|回答){CC}*)",
        as_said(Kind.RULE, "instruction", 0.85),
    ),
    pattern("polite", rf"^请(?!问|教|假)(?P<x>{CC}{{2,40}})", _polite),
    pattern("business_rule", rf"^(?!我(?!们|司))(?P<x>{CC}+?)[。！!；;\s]*$", _business_rule),
    pattern(
        "team_routine",
        rf"^(?P<x>(?:我们|我司|本司)?(?:公司|部门|团队|小组|组里|项目组){C}{{0,6}}?(?:每|定期){CC}+?)[。！!；;\s]*$",
        as_said(Kind.RULE, "business_rule", 0.8),
    ),
    pattern(
        "team_convention",
        rf"^(?P<x>(?:我们|我司|本司)?(?:公司|部门|团队|小组|组里|组|项目组)(?:的|里)?{C}{{1,20}}?"
        rf"(?:统一|一律|都必须|必须|一定要|都要|都得|不允许|不准|禁止){CC}*?)[。！!；;\s]*$",
        as_said(Kind.RULE, "business_rule", 0.8),
    ),
    pattern(
        "episode",
        rf"(?P<x>(?:(?:昨天|前天|上周末?|上个?月|上星期|刚才|刚刚|前几天|去年|前阵子|今天(?:早上|上午|下午)?|上次|前段时间)[，,]?我"
        rf"|我(?:昨天|前天|上周末?|上个?月|上星期|刚才|刚刚|刚|前几天|去年|前阵子|今天(?:早上|上午|下午)?|上次|终于|最近))"
        rf"{C}{{0,6}}?[\u4e00-\u9fff]了{C}{{1,20}})",
        as_said(Kind.EPISODE, "event", 0.75),
    ),
)

# Shared with rules_zh_changes, which words its statements like these.
BUSINESS_NOUN = _BUSINESS_NOUN
JOBS = _JOBS
NAME_PATTERN = _NAME
