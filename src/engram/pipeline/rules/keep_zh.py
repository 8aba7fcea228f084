"""Chinese: what in a user's sentence is NOT a memory, and how a kept piece is worded.

As on the English side (keep_en.py), the recognisers name the small, closed classes
— questions (with or without "？": 叫啥来着、报了没、住哪儿), one-off requests
(帮我…、翻译…), passing states (今天好累、这两天感冒), chatter, hedges and
hypotheticals, words about the conversation — and everything else a user says
about themselves may be kept.
"""

from __future__ import annotations

import re

from .common import is_small_talk
from .zh import _META_NEGATION, _REPORTED, strip_discourse
from .zh_base import about_someone_else, carry_subject, third_person, tidy

# "找房子的话…" marks a topic, not a supposition: 的话 alone is not a hypothetical here
_HYPOTHETICAL = re.compile(r"如果|假如|要是|假设|万一|倘若|若是|假使|设想|哪天.{0,6}的话|以后.{0,6}的话")
# someone else's words or opinion: "我老板觉得我该学Go", "我妈非让我考公" — but what a doctor finds is a
# fact about the user ("医生说我是痛风": see _ABOUT_ME)
_PEOPLE = (r"(?:闺蜜|室友|对象|男友|女友|男朋友|女朋友|老师|医生|大夫|领导|上司|老板|经理|主管|同事|朋友|同学|客户|邻居|亲戚|家里人"
           r"|我妈|我爸|老妈|老爸|我哥|我姐|我弟|我妹|老公|老婆|婆婆|公公|岳母|丈母娘|师傅|他|她|人家|网上|新闻)")
_REPORTED_BY = re.compile(_PEOPLE + r"(?:跟我|和我|对我)?(?:说|讲)(?!我|让我|叫我|要我|用户)"
                          r"|" + _PEOPLE + r"(?:一直|总|老是|非|非要|总是)?(?:觉得|认为|建议|提议|劝|让我|叫我|要我|逼我|催我|想让)")
_ABOUT_ME = re.compile(r"(?:说|讲|诊断|查出)(?:我|让我|叫我|要我)")  # "医生说我是痛风": said of the user, a fact about them
# commas, and spaces between Chinese words ("我吃素的 蛋奶素"), not inside a Latin phrase ("commit message")
_BREAK = re.compile(r"[，,；;：:、]+|(?<=[\u3400-\u9fff])\s+|\s+(?=[\u3400-\u9fff])|\.\.+|…+|——+|~+|～+")
# a piece that goes on with the subject of the one before ("我哥叫李明，在深圳当医生": the brother is the doctor)
_GOES_ON = re.compile(r"^(?:在|是|当|做|住|已经|刚|现在|目前|今年|平时|一直|也|还|又|都|就|特别|比较|很|挺|最|有|会|能|要|得|去|来|每天|每周)")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z0-9]{2,}")

# a question word used as a question ("叫啥", "住哪儿"), not as "any" ("啥都吃", "什么也不想", "没什么")
_ASKING_WORD = re.compile(
    r"(?<!没)(?:什么|啥|神马|哪儿|哪里|哪个|哪些|哪家|哪位|哪天|哪年|哪|谁|几点|几号|几个|几岁|几天|几次|多少|多久|多大|多长"
    r"|怎么|咋|怎样|怎么样|为什么|为啥|如何|是否|是不是|有没有|能不能|可不可以|会不会|要不要|对不对|好不好|行不行"
    r"|算不算|该不该|用不用|需不需要|值不值)(?![都也])"
)
_QUESTION_TAIL = re.compile(r"(?:吗|来着|了没有?|了吗|不成|对吧|是吧|对不|是不|的不|好不|行不)[呀啊哈哦\s]*$")
_ASKS = re.compile(r"^(?:你知道|你觉得|你说|请问|问一下|问下|想问|我想问|不知道|不清楚|求问|帮我看看|帮我想想)")
_REQUEST = re.compile(
    r"^(?:那|那就|你|请|麻烦你?|能不能|可以|可不可以|能|再|先|快|赶紧|直接)*"
    r"(?:帮我|帮忙|给我|替我|帮个忙|帮一下|帮咱|翻译|解释|计算|算一下|查一下|查查|搜一下|搜搜|总结|整理|写一?[个篇段份封首]|写下"
    r"|起个|列一?个|列出|推荐|介绍|讲讲|说说|讲一下|说一下|改一下|改改|润色|优化|生成|做一?个|做个|画|设计一?个|规划一?下"
    r"|安排一?下|订|约|找个|找一?家|找找|出个|来个|来一?份|给个|看看|看一下|想想|想个|分析|比较|对比|提供|模拟|扮演)"
)
_STANDING = re.compile(r"以后|今后|往后|每次|每回|一律|都要|都得|都用|都按|从现在开始|从今天起|不要再|别再|默认|统一|记得.*[都每]"
                       r"|别用|不要用|别写|不要写|别加|不要加|别给我|不要给我|别超过|不要超过|不能超过|别发|不要发")
_KEEPS = re.compile(r"^(?:请你?|麻烦你?|你)?(?:帮我)?(?:记住|记着|记一下|记下|备注|提醒我|到时候提醒|记得提醒)")
_PASSING_TIME = re.compile(r"今天|今晚|今早|刚才|刚刚|现在有点|这会儿|此刻|这两天|这几天|最近几天|昨晚|昨天晚上|今儿|这周(?:有点|好|太)"
                           r"|刚[^，,搬调换入离]{0,4}完")
_PASSING_STATE = re.compile(
    r"累|困|乏|饿|渴|烦|郁闷|难受|不舒服|头疼|头痛|牙疼|肚子疼|感冒|发烧|咳嗽|嗓子|生理期|姨妈|失眠|没睡好|熬夜|加班加|心情|崩溃|emo"
    r"|焦虑|紧张|激动|开心死|高兴|无聊|生气|气死|忙死|忙疯|累死|困死|饿死|烦死|疼死|好热|好冷|眼睛好|腰疼|腿疼|浑身"
    r"|有点(?:软|晕|累|困|饿|烦|难受|不舒服|冷|热|疼|痛|懵|慌)|心态崩|崩了|忙成|累成|困成|不想动|不想干|啥也不想"
    r"|吵死|吵得|多到爆|挤死|堵死|堵车|热死|冷死"
)
_DURABLE_STATE = re.compile(r"一直|常年|长期|老毛病|慢性|从小|每次|每天|每周|一到|过敏|确诊|诊断")
_HEDGED = re.compile(r"可能|也许|或许|大概|好像|似乎|说不定|不确定|不一定|还没想好|估计|应该会|看情况|再说吧|考虑考虑")
_ABOUT_CHAT = re.compile(r"你(?!们公司|们单位)|您|不好意思|抱歉|刚才说的|上面那个|这个回答|你说的")
_REACTION = re.compile(
    r"^(?:哈+|呵+|嘿+|嘻+|嗯+|哦+|噢+|喔+|啊+|呀|哇+|诶|唉|哎+|额+|呃+|好的?|好吧|好嘞|好哒|行吧?|可以+|对+|是的|没错|确实|牛|绝了"
    r"|太好了|不错|挺好|真好|完美|厉害|谢谢|谢啦|多谢|感谢|辛苦|收到|明白|懂了|知道了|了解|ok|OK|哈哈哈|笑死|无语|服了|算了"
    r"|帮了大忙|帮大忙了|太有用|很有用|有用|太棒|棒|赞|好用|学到了|受教|就这么办|就这样|那就这样|多指教|请多指教|多多关照|多关照"
    r"|还行|一般|凑合|也是|有道理|原来如此|这样啊|这样|真的|是吗|不是吧|天哪|我去|卧槽|绝绝子|yyds|nb|6+"
    r"|了|呀|呢|吧|嘛|啦|喽|哒|吗)+$",
    re.IGNORECASE,
)
_OPINION_OF_IT = re.compile(r"^(?:这个|那个|这|那|它)(?:挺|还|真|太|也|不|好|很|蛮|超)")
_EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf\ufe0f]+|\\[[^\\]]{1,6}\\]")  # emoji and [捂脸]-style stickers
_TAIL_PARTICLES = re.compile(r"[哈啊呀哦噢呢嘛吧啦呗哇嘿呜~～]+$")


def pieces(sentence: str) -> list[str]:
    """The sentence cut at commas and spaces; a piece too short to say anything alone
    ("三岁了", "对") joins the one before it."""
    text = _EMOJI.sub(" ", carry_subject(sentence.strip()))
    raw = [p for p in _BREAK.split(text) if p and p.strip()]
    out: list[str] = []
    for piece in raw:
        piece = piece.strip("。！!？?")
        if not piece:
            continue
        if out and (content_chars(piece) < 3 or (_GOES_ON.match(piece) and _not_the_users(out[-1]))) \
                and not _ASKING_WORD.search(piece):
            out[-1] = f"{out[-1]}，{piece}"
        else:
            out.append(piece)
    return out


def _not_the_users(piece: str) -> bool:
    """The piece's subject is not the user (what follows it without a subject goes on with it)."""
    return not piece.startswith("我") or about_someone_else(piece)  # "我家猫叫团子，是只英短"


def content_chars(piece: str) -> int:
    return len(_HAN.findall(piece)) + 2 * len(_LATIN_WORD.findall(piece))


_TELLING = re.compile(r"^(?:跟你说(?:个事儿?|一下|下)?|告诉你|和你说|给你说|同你讲|跟你讲|你知道吗|说个事儿?)[，,！!：:\s]*")


def _told(text: str) -> str:
    """Without "跟你说", "告诉你": how news is announced, not what it is."""
    return _TELLING.sub("", strip_discourse(text.strip()).strip("，, "))


_GENERIC = re.compile(r"^(?:现在)?(?:很多人|大家|好多人|不少人|有些人|有人|年轻人|现在的人|一般人|别人|人们|现在很多)")
_WEATHER = re.compile(r"下雨|下雪|天气|好热|好冷|太热|太冷|阴天|晴天|刮风|雾霾|闷热")


def why_not(piece: str, *, ends_with_question: bool) -> str | None:
    """Why this piece holds no memory, or None when it may."""
    text = _told(piece)
    if _GENERIC.match(text):
        return "generic"
    if _WEATHER.search(text) and not _DURABLE_STATE.search(text):
        return "temporary"
    bare = _TAIL_PARTICLES.sub("", text)
    if not bare or is_small_talk(text) or _REACTION.match(bare):
        return "small_talk"
    if _KEEPS.match(text):
        return None
    if (ends_with_question or _QUESTION_TAIL.search(text) or _ASKS.match(text)) or _ASKING_WORD.search(text):
        return "question"
    if _HYPOTHETICAL.search(text):
        return "hypothetical"
    if (_REPORTED.search(text) and not _ABOUT_ME.search(text)) or _REPORTED_BY.search(text) or _META_NEGATION.search(text):
        return "reported"
    if _REQUEST.match(text) and not _STANDING.search(text):
        return "request"
    if _PASSING_STATE.search(text) and not _DURABLE_STATE.search(text):
        return "temporary"
    if _PASSING_TIME.search(text) and not _STANDING.search(text) and not _DURABLE_STATE.search(text):
        return "temporary"
    if _HEDGED.search(text):
        return "hedged"
    if _ABOUT_CHAT.search(text) and not _STANDING.search(text):
        return "about_the_chat"
    if _OPINION_OF_IT.match(text):
        return "about_the_chat"
    return None


def worded(piece: str, speaker: str | None) -> str:
    """A kept piece as a memory: discourse markers and tail particles off, 我 → 用户."""
    text = _told(piece)
    text = re.sub(r"^(?:请你?|麻烦你?|你)?(?:帮我)?(?:记住|记着|记一下|记下|备注)[：:，,\s]*", "", text)
    text = _TAIL_PARTICLES.sub("", tidy(third_person(text, speaker)))
    subject = speaker or "用户"
    return text if text.startswith(subject) or _STARTS_WITH_OWNER.match(text) else f"{subject}：{text}"


_STARTS_WITH_OWNER = re.compile(r"^(?:公司|团队|部门|单位|家里|老家|医院|学校|孩子|女儿|儿子|老公|老婆)")
