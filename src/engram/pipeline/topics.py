"""Topics a change can be about, read from the words of a memory (English and Chinese).

A change rarely repeats the words of the fact it ends: "we moved to Leith" ends "lives
in Marchmont", "搬浑南去了" ends "住铁西这边", and their meanings are far apart to a
sentence embedding (cosine 0.2). What they share is the topic — where the user lives.
These are the topics whose facts change often and matter most; reconciliation lets a
statement that says something changed end an older memory of the same topic.
"""

from __future__ import annotations

import re

_TOPICS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "residence": r"\b(?:live[sd]?|living|moved|moving|move|flat|apartment|house|home|studio|renting|rent"
                     r"|neighbou?rhood|relocat\w*|address)\b|住|搬|家在|租房|房子|小区|公寓|地址",
        "work": r"\b(?:job|jobs|employer|company|joined|joining|quit|hired|position|role|promoted|office|colleagues?"
                r"|work(?:s|ed|ing)? (?:at|for|as|in)|start(?:s|ing)? at|new team|contract)\b"
                r"|公司|上班|工作|入职|离职|辞职|跳槽|单位|岗位|职位|同事|转岗|调到|科室|部门",
        "study": r"\b(?:school|university|uni|college|degree|course|exams?|thesis|phd|major|studying|studies"
                 r"|semester|classes)\b|学校|大学|考研|专业|考试|读研|读博|论文|课程|上课|复习|择校",
        "diet": r"\b(?:eats?|eating|ate|vegan|vegetarian|pescatarian|diet|meat|fish|dairy|gluten|food|drinks?"
                r"|alcohol|coffee|formula)\b|吃|素|饮食|忌口|奶粉|喝|戒",
        "health": r"\b(?:medication|meds|pills?|tablets?|dose|prescri\w*|mg|insulin|physio\w*|therapy|doctor|gp"
                  r"|surgery|operation|appointment|clinic|hospital|injur\w*|diagnos\w*)\b"
                  r"|药|剂量|医生|复查|手术|理疗|康复|体检|确诊|毛病|病|癌|肿瘤|住院|化疗|血压|血糖",
        "schedule": r"\b(?:shifts?|schedule|rota|hours|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?"
                    r"|sundays?|weekdays|weekends?|days a week|nights|mornings|afternoons|evenings|bedtime|meets?)\b"
                    r"|排班|班次|白班|夜班|大夜|小夜|周[一二三四五六日末]|礼拜|每周|作息|睡觉时间|几点",
        "commute": r"\b(?:commute|commuting|bus|train|drives?|driving|bike|cycles?|cycling|car|subway|metro|tube"
                   r"|walks? to)\b|地铁|公交|BRT|骑车|开车|打车|通勤|电动车",
        "partner": r"\b(?:partner|boyfriend|girlfriend|husband|wife|dating|married|engaged|divorced|fianc\w*)\b"
                   r"|\bsingle\b|男朋友|女朋友|对象|老公|老婆|结婚|离婚|分手|订婚|单身|脱单",
        "tools": r"\b(?:uses?|using|switched|tool|tools|app|software|ci|pipelines?|editor|ide|stack|framework"
                 r"|language|platform)\b|用的是|改用|换成|软件|工具|平台|框架",
        "money": r"\b(?:budget|cap|capped|limit|rate|rates|price|prices|charges?|per hour|salary|pay|paid|fee|fees"
                 r"|deposit|upfront)\b|[$€£¥]\s?\d|预算|上限|报价|价格|工资|薪|元|块钱|费用|定金|尾款",
        "dates": r"\b(?:deadline|due|date|booked|scheduled|postponed|moved to|rescheduled|submission)\b"
                 r"|截止|日期|改期|推迟|延期|提前|定在|约在",
        "medication": r"\b(?:medication|meds|pills?|tablets?|dose|mg|insulin|inhaler|prescri\w*|statin|metformin)\b"
                      r"|药|片|剂量|胰岛素|打针",
        "vehicle": r"\b(?:car|cars|drives? a|motorbike|scooter|e-?bike|tesla|toyota|honda|bmw)\b|车|开的是|驾照",
        "pets": r"\b(?:cat|cats|dog|dogs|puppy|kitten|pet|pets|vet)\b|猫|狗|宠物",
        "school_kids": r"\b(?:daycare|nursery|kindergarten|preschool|teacher|class)\b"
                       r"|托班|幼儿园|早教|班主任|学校|年级",
        "approval": r"\b(?:approvals?|approve[sd]?|sign-?offs?|review(?:s|ers?)?|codeowners)\b|审批|审核|签字|approve",
    }.items()
}


def topics(text: str) -> frozenset[str]:
    return frozenset(name for name, pattern in _TOPICS.items() if pattern.search(text))


# Topics that hold one value at a time, and the words that say it changed: a move ends where the
# user lived however unlike the two sentences are ("搬到集美了" / "用户住曾厝垵": cosine 0.1).
_SLOT_CHANGES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        # "moved to Leeds", "moved from Boston to Denver" — not "moved from Java to mostly writing Go"
        "residence": r"\bmoved (?:to|into|in|out|back|house|flats|away)\b(?! (?:mostly )?(?:writing|using|working))"
                     r"|\bmoved from [A-Z]\w+ to [A-Z]|\b(?:relocated|new (?:flat|place|house|apartment)|we're in"
                     r"|now live|live in \w+ now)\b|搬(?:到|去|来|家|回)|住到|换了?(?:房子|个房)|新家",
        "work": r"\b(?:new job|got the job|joined|joining|started at|starting at|left my job|quit my job|promoted"
                r"|laid off|hired (?:me|by))\b"
                r"|入职|跳槽|换工作|离职|辞职|新公司|升职|提了?(?:副|正)?(?:科长|处长|经理|主管|总监)|调去|调到",
        "medication": r"\b(?:switched to|took me off|put me on|now on|changed (?:my|the) (?:meds|medication|dose)"
                      r"|stopped taking)\b|换成|改(?:打|吃|用)|停了|停药|加量|减量",
    }.items()
}


def slot_changes(text: str) -> frozenset[str]:
    """The single-valued topics ``text`` says changed."""
    return frozenset(name for name, pattern in _SLOT_CHANGES.items() if pattern.search(text))
