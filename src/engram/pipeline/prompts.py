"""Prompts and answer schemas for LLM extraction and reconciliation, in English and Chinese.

The prompt language follows the conversation's dominant script; either way the
model is told to write memories in the user's own language.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from ..model import MemoryRecord, Message
from ..slots import SINGLE_VALUED, Slot
from .candidate import Candidate

Language = Literal["zh", "en"]

EXTRACTABLE_KINDS = ("fact", "preference", "rule", "conclusion", "todo")
RECONCILE_EVENTS = ("ADD", "UPDATE", "SUPERSEDE", "NOOP")

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def dominant_language(texts: Iterable[str]) -> Language:
    """Chinese when Han characters are at least as many as Latin words (one Han character ≈ one word)."""
    han = latin = 0
    for text in texts:
        han += len(_HAN.findall(text))
        latin += len(_LATIN_WORD.findall(text))
    return "zh" if han > 0 and han >= latin else "en"


# -- extraction ---------------------------------------------------------------

EXTRACTION_SCHEMA: dict[str, Any] = {
    "title": "engram_extraction",
    "type": "object",
    "properties": {
        "memories": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": list(EXTRACTABLE_KINDS)},
                    "content": {"type": "string"},
                    "confidence": {"type": "number"},
                    "importance": {"type": "number"},
                    "source_ids": {"type": "array", "items": {"type": "string"}},
                    "subject": {"type": "string"},
                    "slot": {"type": ["string", "null"], "enum": [*(s.value for s in Slot), None]},
                },
                "required": ["kind", "content", "confidence", "importance", "source_ids", "subject", "slot"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["memories"],
    "additionalProperties": False,
}

EXTRACT_SYSTEM: dict[Language, str] = {
    "en": """You extract long-term memories about the user and their organisation from a conversation.
Keep only durable information that will still matter in future conversations:
- fact: names, identities, roles, relationships, places, stable circumstances
- preference: likes, dislikes, habits, preferred style
- rule: taboos, things to always or never do, business rules and policies
- todo: tasks, deadlines, appointments (with the date if one is given)
- conclusion: decisions and conclusions the user reached or agreed to
Ignore small talk, one-off requests, questions (with or without a question mark), passing
states ("I'm tired today"), hypotheticals, and the assistant's own suggestions unless the user
accepted them. A request to forget something ("forget that", "don't keep my address") is not a
memory: leave it out (engram carries it out itself). Never invent or guess anything.
For each memory give:
- kind: one of fact, preference, rule, conclusion, todo
- content: one self-contained sentence that names its subject (e.g. "The user's manager is
  Li Wei"), understandable without the conversation, written in the language the user wrote in;
  turn relative dates into absolute ones when the message time is shown
- confidence: 0 to 1, how sure you are the user said and meant it
- importance: 0 to 1, how much it matters for future conversations
- source_ids: the ids of the messages it comes from, exactly as shown in brackets, e.g. ["m2"]
- subject: whom it is about: "user", "team" (their team, company or organisation), or "other:" and
  the person's relation and/or name for anyone else, e.g. "other:colleague ravi", "other:wife sarah";
  the content of another person's fact names them ("The user's colleague Ravi is allergic to peanuts")
- slot: what it sets, one of {slots}, or null when none fits; {single} hold one
  value at a time (a new one replaces the old), the others accumulate
Answer with JSON only: {"memories": [...]}. If nothing is worth remembering, answer {"memories": []}.""",
    "zh": """你的任务是从对话中提取关于用户及其所在组织的长期记忆。
只保留在以后的对话中仍然有用的持久信息：
- fact（事实）：姓名、身份、职务、人际关系、地点、稳定的状况
- preference（偏好）：喜欢、不喜欢、习惯、偏好的风格
- rule（规则）：禁忌、必须做或绝不能做的事、业务规则和制度
- todo（待办）：任务、截止日期、约定（有日期时写明日期）
- conclusion（结论）：用户得出或同意的决定和结论
忽略寒暄、一次性请求、提问（有没有问号都算）、一时的状态（“今天好累”）、假设，以及用户没有接受的助手建议。
让你忘掉某事的请求（“别记这个”“忘掉我的地址”）不是记忆，不要输出（engram 会自己执行）。不要编造或猜测任何内容。
每条记忆给出：
- kind：fact、preference、rule、conclusion、todo 之一（保持英文取值）
- content：一句不依赖上下文、点明主语的完整陈述（例如“用户的上级是李伟”），使用用户所用的语言书写；
  若显示了消息时间，把“明天”等相对日期换算成具体日期
- confidence：0 到 1，你有多确定用户确实这样说、这样想
- importance：0 到 1，这条信息对以后的对话有多重要
- source_ids：信息来源消息的编号，与方括号中的编号完全一致，例如 ["m2"]
- subject：这条记忆是关于谁的："user"（用户本人）、"team"（用户的团队、公司或组织），
  或 "other:" 加上对方的关系和/或名字，例如 "other:同事 小王"、"other:老婆"；
  关于别人的记忆要在 content 里写明是谁（“用户的同事小王对花生过敏”）
- slot：它设定的是哪一项，取值 {slots} 之一，都不合适时为 null；
  其中 {single} 同一时间只有一个值（新值取代旧值），其余可以并存
只用 JSON 回答：{"memories": [...]}。如果没有值得记住的内容，回答 {"memories": []}。""",
}

_SLOTS = ", ".join(s.value for s in Slot)
_SINGLE = ", ".join(s.value for s in Slot if s in SINGLE_VALUED)
EXTRACT_SYSTEM = {language: text.replace("{slots}", _SLOTS).replace("{single}", _SINGLE)
                  for language, text in EXTRACT_SYSTEM.items()}

_CONVERSATION_HEADER: dict[Language, str] = {"en": "Conversation:", "zh": "对话："}


def render_conversation(messages: Sequence[Message], ids: Sequence[str], language: Language) -> str:
    lines = [_CONVERSATION_HEADER[language]]
    for temp_id, message in zip(ids, messages, strict=True):
        speaker = f"{message.role} ({message.name})" if message.name else message.role
        when = f" {message.at.isoformat(timespec='minutes')}" if message.at else ""
        lines.append(f"[{temp_id}] {speaker}{when}: {message.content}")
    return "\n".join(lines)


# -- reconciliation -----------------------------------------------------------

RECONCILE_SCHEMA: dict[str, Any] = {
    "title": "engram_reconcile",
    "type": "object",
    "properties": {
        "event": {"type": "string", "enum": list(RECONCILE_EVENTS)},
        "target_id": {"type": ["string", "null"]},
        "content": {"type": "string"},
        "reason": {"type": "string"},
    },
    "required": ["event", "target_id", "content", "reason"],
    "additionalProperties": False,
}

RECONCILE_SYSTEM: dict[Language, str] = {
    "en": """You keep a user's long-term memory consistent. Compare a NEW memory with the EXISTING
memories shown with ids in brackets and decide one event:
- ADD: the new memory is new information; target_id is null
- UPDATE: it refines or adds detail to one existing memory without contradicting it;
  target_id is that memory and content merges both into one sentence
- SUPERSEDE: it contradicts or replaces one existing memory (e.g. the user moved, changed
  their mind); target_id is the memory it replaces and content is the new statement
- NOOP: it says nothing beyond an existing memory; target_id is that memory
Keep the language the memories are written in, and never add information that is in neither.
Answer with JSON only: {"event": ..., "target_id": ..., "content": ..., "reason": ...}
where reason is one short sentence.""",
    "zh": """你负责让用户的长期记忆保持一致。把一条新记忆与方括号中带编号的已有记忆比较，选择一个操作：
- ADD：新记忆是新的信息；target_id 为 null
- UPDATE：新记忆补充或细化某条已有记忆，且不矛盾；target_id 为该记忆编号，content 把两者合并成一句话
- SUPERSEDE：新记忆与某条已有记忆矛盾或取代它（例如用户搬家、改变了主意）；target_id 为被取代的记忆编号，
  content 为新的陈述
- NOOP：新记忆没有超出某条已有记忆的内容；target_id 为该记忆编号
保持记忆原来使用的语言，不要加入两者都没有的信息。
只用 JSON 回答：{"event": ..., "target_id": ..., "content": ..., "reason": ...}，reason 为一句简短说明。""",
}

_RECONCILE_LABELS: dict[Language, tuple[str, str]] = {
    "en": ("NEW memory", "EXISTING memories"),
    "zh": ("新记忆", "已有记忆"),
}


def render_reconcile(candidate: Candidate, similar: Sequence[MemoryRecord], language: Language) -> str:
    new_label, existing_label = _RECONCILE_LABELS[language]
    lines = [f"{new_label} ({candidate.kind.value}): {candidate.content}", "", f"{existing_label}:"]
    for temp_id, record in enumerate(similar):
        updated = record.updated_at.date().isoformat()
        lines.append(f"[{temp_id}] ({record.kind.value}, {updated}) {record.content}")
    return "\n".join(lines)
