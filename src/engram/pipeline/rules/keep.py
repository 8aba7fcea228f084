"""The keeper: the user's own statements, kept unless they are plainly not a memory.

Patterns that recognise how a fact is said meet new phrasing on every new user
("MOVED IN. Ancoats!", "we finally killed circle, everything is on GitLab CI now").
The keeper turns the problem around: what is *not* a memory is a small, closed class
— questions, one-off requests, passing states, chatter, hedges, hypotheticals and
reported speech, remarks about the conversation — so each sentence is cut into
pieces, every piece none of those recognisers claims is kept, and adjacent kept
pieces are one statement, lightly reworded in the third person (keep_en.py,
keep_zh.py). A statement gets a kind from its words (a to-do, a standing rule, a
preference, else a fact) and says whether it reports a change ("moved", "no longer",
"现在改成") or adds to something said before ("also", "还", "补充"), which
reconciliation reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from types import MappingProxyType

from ...model import Kind
from . import keep_en, keep_zh
from .common import Finding, is_chinese, split_sentences

KEEP_CONFIDENCE = 0.75  # above the gate's 0.7: the user said it; below what a firm pattern earns
NOTE = "note"

_EN_TODO = re.compile(r"^(?:remind me|i need to|i have to|i must|i've got to|i gotta|need to|have to|don't forget"
                      r"|do not forget)\b|\b(?:deadline|due (?:on|by)|by the end of)\b", re.IGNORECASE)
_EN_RULE = re.compile(r"\b(?:always|never|from now on|going forward|in future|every time|whenever|by default|must"
                      r"|mustn't|should|shouldn't|needs? (?:to be|\w+ approvals?)|required?|policy|rule|approvals?"
                      r"|sign-?off|not allowed|only allowed|at most|no more than|cap(?:ped)?|limit)\b", re.IGNORECASE)
_EN_TASTE = re.compile(r"\b(?:prefers?|preferred|likes?|loves?|enjoys?|hates?|dislikes?|can't stand|cannot stand"
                       r"|favou?rite|fan of|rather|into|fond of|obsessed with|not a fan)\b", re.IGNORECASE)
_ZH_TODO = re.compile(r"提醒我|到时候提醒|要在.{0,12}(?:前|之前|以前)|得在.{0,12}(?:前|之前)|截止|待办|记得.{0,8}(?:交|报|买|去|做|打)")
_ZH_RULE = re.compile(r"以后|每次|每回|一律|都要|都得|必须|规定|要求|流程|审批|不要再|别再|不许|禁止|不能超过|不超过|上限|最多|标准")
_ZH_TASTE = re.compile(r"喜欢|爱吃|爱喝|爱看|爱玩|偏好|更喜欢|讨厌|受不了|偏爱|最爱|钟意|不感冒|反感")

CHANGE = re.compile(
    r"\b(?:now|no longer|not any ?more|anymore|any more|switched|switching|moved|moving|relocated|changed|new|started"
    r"|stopped|quit|left|leaving|joined|joining|got the job|starting at|start(?:ing)? on|instead|used to|not anymore"
    r"|these days|since|became|promoted|transferred|replaced|dropped|gave up|back to|again|finally|killed|sold"
    r"|gone|ended|broke up|divorced|married|engaged|retired|graduated|already|done|finished|booked|pushed"
    r"|postponed|rescheduled|moved to|extended|cancell?ed|raised|increased|reduced|lowered|went up|went down"
    r"|not .{1,30} but|here|over here|at the new|from (?:next|this) (?:week|month|year|quarter)|starting (?:next"
    r"|this|on|in|from)|as of|going forward|hired|promoted|is over|retired)\b"
    r"|现在|目前|如今|改成|改为|改用|换成|换了|换到|搬|调到|调去|卖掉|出掉|脱单|不再|不用.{0,6}了|已经不|离职|辞职|跳槽|入职|转岗|升职"
    r"|分手|离婚|结婚|订婚|退休|毕业|卖了|没了|停了|戒了|开始|重新|又开始|以前.{0,10}现在|已经.{0,10}了|推到|推迟|改到"
    r"|延到|延期|提前到|挪到|回去|定了|最后定|决定|这边|新的|涨到|涨了|降到|降了|取消",
    re.IGNORECASE,
)
ADDITION = re.compile(
    r"^(?:also|and|plus|oh and|btw|on the \w+ thing|to add|one more thing|actually it's|it's also)\b"
    r"|\b(?:too|as well|also|on top of that|in addition|not only)\b"
    r"|^(?:还有|另外|而且|并且|补充|对了|还|也)|补充|不只|不仅|而且|另外|也会|还会|还得|也要|还要",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Statement:
    text: str  # the piece(s) as the user said them
    content: str  # as a memory: third person, tidy, without what a change says is over
    kind: Kind
    change: bool
    addition: bool
    language: str
    ends: tuple[str, ...] = ()  # what a change names as over: "from Boston", "不考武大了" → ("Boston",), ("武大",)


# What a change names as over, and the words to drop so the memory says only what holds now.
# Each pattern's group "old" is the value that ended; the whole match leaves the content.
_EN_ENDED = (
    re.compile(r"\bfrom (?:the )?(?P<old>[A-Z][\w'.&-]*(?: [A-Z][\w'.&-]*)*)(?=(?: \w+){0,2} to\b)"),
    re.compile(r",?\s*\b(?:instead of|rather than|not) (?:the |a |an )?(?P<old>[\w'.&-]+(?: [\w'.&-]+){0,2})"
               r"(?:,| anymore| any more)?(?=\s*(?:[,.;!]|$))", re.IGNORECASE),
    re.compile(r"^(?:I'm |I am |we're |we are |I've |we've |I |we )?(?:finally |just )?(?:left|quit|leaving|ditched"
               r"|dropped|killed|moved (?:out of|away from)|no longer (?:at|with|in|use|using|on)|stopped using|gave up(?: on)?"
               r"|no more"
               r"|switched (?:away )?from|moved off|got rid of)\s+(?:the |my |our )?(?P<old>[\w'.&-]+(?: [\w'.&-]+){0,3})"
               r"\s*(?:,|;| and | so |$)", re.IGNORECASE),
    # "we're not buying from Maine Grains anymore", "the dinosaur phase is OVER", "R is retired for me"
    re.compile(r"^(?:[^,;]*?\b(?:not|no longer|n't)\b[^,;]*?\b(?:from|at|with|on|in|using|use|to)\s+)?(?:the )?"
               r"(?P<old>[A-Z][\w'.&-]*(?: [A-Z][\w'.&-]*)*)\b[^,;]*?\b(?:anymore|any more|is over|are over|is retired"
               r"|is done|is gone|gave (?:his|her|their) notice|has left|quit)\b[^,;]*(?=[,;]|$)"),
)
_ZH_ENDED = (
    re.compile(r"从(?P<old>[^，,。从]{1,12}?)(?:那边|那儿|这边|那里|这里)?(?=(?:搬|调|换|转|跳槽|改|离职|辞职))"),
    re.compile(r"(?:已经?|刚)?从(?P<old>[^，,。]{1,12}?)(?:离职|辞职|走人|出来)了?[，,]"),
    re.compile(r"(?:现在)?不(?:再)?(?:考|去|用|在|做|挤|坐|住|跳|上)(?P<old>[^，,。了]{1,10})了[，,]"),
    re.compile(r"^(?P<old>[^，,。不]{1,10}?)(?:那个|那家)?(?:兼职|工作|店|账号)?(?:我|用户)?(?:也|都|已经)?"
               r"(?:不(?:考|去|用|做|学|练|开|住|干|跑|续)了|不让用了?|卖掉了|卖了|没了|退了|停了|黄了|关了|辞掉了|辞了|到期了"
               r"|不干了|不做了|不跑了|结束了)(?=[，,]|$)"),
    re.compile(r"(?:之前|以前|原来|本来)(?:是|在|用|住|做)?(?P<old>[^，,。]{1,12})[，,](?=.)"),
)

def statements(text: str, speaker: str | None = None) -> list[Statement]:
    """Every statement of one message that is not plainly something else."""
    return [s for sentence in _joined_sentences(text) for s in _from_sentence(sentence, speaker)]


def sentences(text: str) -> list[str]:
    """The message's sentences as the keeper reads them (a fragment too short to say anything
    joined to the next): the units the judge reads."""
    return list(_joined_sentences(text))


def standing(sentence: str) -> bool:
    """The sentence asks for something from now on ("from now on keep it short", "以后报告写简洁点"):
    a standing instruction, a memory, however much it reads like a request."""
    language = keep_zh if is_chinese(sentence) else keep_en
    return language._STANDING.search(sentence) is not None


def passing(sentence: str) -> bool:
    """Every piece of the sentence is plainly not a memory (a question, a request, a passing
    state, chatter…) — as opposed to merely too short to keep."""
    language = keep_zh if is_chinese(sentence) else keep_en
    parts = language.pieces(sentence)
    asks = sentence.rstrip().endswith(("?", "？"))
    return bool(parts) and all(language.why_not(p, ends_with_question=asks and i == len(parts) - 1) is not None
                               for i, p in enumerate(parts))


def _joined_sentences(text: str) -> Iterator[str]:
    """Sentences, a fragment too short to say anything ("MOVED IN.", "Ancoats!") joined to the next."""
    pending = ""
    for sentence in split_sentences(text):
        language = keep_zh if is_chinese(sentence) else keep_en
        short = (language.content_chars(sentence) < 4 if language is keep_zh
                 else keep_en.content_words(sentence) < 2)
        asks = sentence.rstrip().endswith(("?", "？"))
        if short and not asks:
            pending = f"{pending} {sentence}".strip()
            continue
        yield f"{pending} {sentence}".strip() if pending else sentence
        pending = ""
    if pending:
        yield pending


def _from_sentence(sentence: str, speaker: str | None) -> list[Statement]:
    zh = is_chinese(sentence)
    language = keep_zh if zh else keep_en
    parts = language.pieces(_MATERIAL.sub("", sentence))
    asks = sentence.rstrip().endswith(("?", "？"))
    reasons = [language.why_not(piece, ends_with_question=asks and i == len(parts) - 1) for i, piece in enumerate(parts)]
    for i in range(1, len(parts)):
        # what follows a piece that is not a memory, with no subject of its own, goes on with it:
        # "那个演员叫啥来着 就演狂飙里那个", "今天加班到十一点 整个人都麻了", "summarise this, three points"
        carried = reasons[i - 1] == "hypothetical" or not _OWN_SUBJECT.match(parts[i])  # "If I were rich, I'd …"
        if reasons[i] is None and reasons[i - 1] in _CARRIES_ON and carried:
            reasons[i] = reasons[i - 1]
    # "今天生理期第一天 肚子疼死了 啥也不想干", "stuck in traffic, I'll be late for everything today": it all
    # passes — half the pieces in English, more than half in Chinese (cut finer, at every space)
    passing_pieces = reasons.count("temporary") * 2
    if (passing_pieces > len(parts) if zh else passing_pieces >= len(parts)) and not _DURABLE.search(sentence):
        return []
    runs: list[list[str]] = []
    for piece, why in zip(parts, reasons):
        if why is not None:
            if runs and runs[-1]:
                runs.append([])
        elif not runs or not runs[-1] or _says_enough(piece, zh):
            runs.append([piece])
        else:
            runs[-1].append(piece)  # too short to stand alone ("三岁了"): it goes with the piece before
    said = [("，" if zh else ", ").join(run) for run in runs if run]
    said = [text for text in said if _says_enough(text, zh, alone=len(parts) == 1)]
    # a change is read from the whole sentence ("卡罗拉卖掉了，换了辆理想L6": the old value is in
    # one piece, the new in the next); the piece that only names what ended is not kept
    whole, ends = _without_what_ended(("，" if zh else ", ").join(said), zh)
    changed = bool(ends) or bool(CHANGE.search(" ".join(said)))
    out = []
    for text in said:
        current, _ = _without_what_ended(text, zh) if ends else (text, ())
        if ends and (not _says_enough(current, zh) or (len(said) > 1 and current == text and text not in whole)):
            continue  # the piece only named what ended ("卡罗拉卖掉了")
        statement = _statement(text, language.worded(current, speaker), "zh" if zh else "en")
        # a sentence that says something changed is a change in each of its pieces ("big change. Dr
        # Halvorsen is moving to Uppsala, so Prof. Adebayo is taking over": measured better on the dev
        # scenarios than flagging only the pieces with a cue, docs/OUTCOME.md)
        out.append(replace(statement, change=changed, ends=ends))
    return out


def _without_what_ended(said: str, zh: bool) -> tuple[str, tuple[str, ...]]:
    """The statement without the part that names what is over, and what that was —
    unless nothing would be left (then "left Stripe" stays as it was said)."""
    ends: list[str] = []
    text = said
    for pattern in _ZH_ENDED if zh else _EN_ENDED:
        match = pattern.search(text)
        if match is None:
            continue
        rest = (text[: match.start()] + text[match.end():]).strip(" ,，;；")
        if _says_enough(rest, zh):
            ends.append(match.group("old").strip())
            text = rest
    return text, tuple(ends)


# "translate this into French: I love cats", "帮我把这句翻成英文：会议推迟到周三": after the colon of a
# request comes the material to work on, not something the user says about themselves
_MATERIAL = re.compile(r"^(?P<ask>(?:(?:please|pls|can you|could you|hey)[,\s]+)*(?:translate|rewrite|rephrase|proofread"
                       r"|summari[sz]e|correct|fix|polish|shorten|explain|format|convert|edit)\b[^:：]{0,60}[:：]|"
                       r"(?:请|麻烦)?(?:帮我|给我)?(?:把|将)?[^：:]{0,20}(?:翻译|翻成|翻下|翻一下|改写|润色|总结|纠正|改一下|检查|解释)[^：:]{0,20}[：:])"
                       r".*$", re.IGNORECASE | re.DOTALL)
_DURABLE = re.compile(r"\b(?:always|never|every|allergic|since|for years)\b|一直|从来|每天|每周|过敏|以后", re.IGNORECASE)
_CARRIES_ON = frozenset({"question", "request", "temporary", "reported", "hypothetical", "code"})
_OWN_SUBJECT = re.compile(r"^(?:我|用户|咱|(?:I|I'm|my|we|our|we're)\b)", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:I|my|we|our)\b", re.IGNORECASE)


def _says_enough(text: str, zh: bool, *, alone: bool = False) -> bool:
    """Enough words to mean something outside the chat ("veggie btw" said on its own does)."""
    if zh:
        return keep_zh.content_chars(text) >= 4
    words = keep_en.content_words(text)
    return words >= 2 or (words == 1 and (alone or bool(_FIRST_PERSON.search(text))))


def _statement(said: str, content: str, language: str) -> Statement:
    return Statement(said, content, kind_of(said, language), bool(CHANGE.search(said)), bool(ADDITION.search(said)),
                     language)


def kind_of(text: str, language: str) -> Kind:
    todo, rule, taste = (_ZH_TODO, _ZH_RULE, _ZH_TASTE) if language == "zh" else (_EN_TODO, _EN_RULE, _EN_TASTE)
    if todo.search(text):
        return Kind.TODO
    if rule.search(text):
        return Kind.RULE
    if taste.search(text):
        return Kind.PREFERENCE
    return Kind.FACT


_WHEN = re.compile(
    r"\b(?:last|next|this|past|coming)\s+(?:week(?:end)?|month|year|summer|winter|spring|autumn|fall|time)\b"
    r"|\b(?:yesterday|today|tomorrow|recently|lately|ago|earlier|soon)\b|\b\d+\s+(?:days?|weeks?|months?|years?)\b"
    r"|[上下这本今去明前后]{1,2}(?:个)?(?:月|周|星期|礼拜|年)|昨天|今天|明天|最近|刚刚|前几天|上次",
    re.IGNORECASE,
)


def without_cues(text: str) -> str:
    """The statement without the words that only say something changed or when ("moved",
    "搬到", "now", "last month")."""
    return _WHEN.sub(" ", CHANGE.sub(" ", text))


def flagged(hit: Finding, statement: Statement) -> Finding:
    """A pattern's finding inside a statement carries what the statement says of change."""
    metadata = dict(hit.metadata)
    if statement.change:
        metadata["change"] = metadata.get("change") or "1"
    if statement.ends:
        metadata["ends"] = statement.ends
    return replace(hit, metadata=MappingProxyType(metadata))


def as_finding(statement: Statement) -> Finding:
    metadata: dict[str, object] = {"change": "1"} if statement.change else {}
    if statement.addition:
        metadata["addition"] = "1"
    if statement.ends:
        metadata["ends"] = statement.ends
    return Finding(statement.kind, statement.content[:300], KEEP_CONFIDENCE, NOTE, (0, len(statement.text)),
                   f"{statement.language}.keep", MappingProxyType(metadata))
