"""The memory graph waits for a person: a fact an approval rule holds stops the graph
with interrupt(); Command(resume=...) approves, edits or rejects it — also from a
second process after the first one exited (SqliteSaver on a file). Answers are linked
to the recall that served them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph.checkpoint.sqlite")

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from engram import FakeHashEmbedder, InvalidValueError, Kind, Memory, Operation, Scope
from engram.approval_rules import ApprovalRule, ApprovalRules
from engram.integrations.langgraph import build_memory_graph, default_checkpointer
from engram.integrations.langgraph.checkpoint import close_checkpointer
from engram.integrations.langgraph.scripted import ScriptedChatModel
from engram.values.governance import PendingStatus

RULES = ApprovalRules((ApprovalRule("preferences", kinds=(Kind.PREFERENCE,)),))
ALICE = Scope("default", ("users", "alice"))


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread, "user_id": "alice"}}


@pytest.fixture
def governed(tmp_path):
    memory = Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder(), approvals=RULES)
    yield memory
    memory.close()


def _graph(memory, *replies, **options):
    model = ScriptedChatModel(script=[AIMessage(r) for r in replies])
    return build_memory_graph(model, memory, checkpointer=options.pop("checkpointer", InMemorySaver()), **options)


def test_a_held_fact_interrupts_and_an_approval_resumes_the_turn(governed):
    graph = _graph(governed, "Noted!")
    state = graph.invoke({"messages": [("user", "I live in Lisbon and I prefer green tea over coffee.")]}, cfg("t1"))
    [stop] = state["__interrupt__"]
    assert stop.value["type"] == "engram.approval"
    [held] = stop.value["pending"]
    assert held["changes"][0]["content"] == "Prefers green tea over coffee" and held["rule"].startswith("preferences")
    assert [r.content for r in governed.list(ALICE).items] == ["Lives in Lisbon"]  # the rest was written
    done = graph.invoke(Command(resume={"action": "approve", "reviewer": "maria", "reason": "user said so"}),
                        cfg("t1"))
    assert "Prefers green tea over coffee" in done["remembered"] and done["awaiting"] == []
    assert done["reviewed"][0]["decision"] == "approved" and done["reviewed"][0]["by"] == "maria"
    approve = governed.audit.list(ALICE, operation=Operation.APPROVE)[0]
    assert approve.actor == "maria" and approve.detail["reason"] == "user said so"


def test_edit_and_reject_by_pending_id(governed):
    graph = _graph(governed, "Ok.")
    state = graph.invoke({"messages": [("user", "I prefer tea. I prefer window seats.")]}, cfg("t2"))
    ids = [p["id"] for p in state["__interrupt__"][0].value["pending"]]
    assert len(ids) == 2
    done = graph.invoke(Command(resume={"decisions": {
        ids[0]: {"action": "edit", "content": "Prefers black tea"}, ids[1]: "reject"}}), cfg("t2"))
    assert [o["decision"] for o in done["reviewed"]] == ["approved", "rejected"]
    assert [r.content for r in governed.list(ALICE).items] == ["Prefers black tea"]
    assert governed.approvals.get(ids[1], ALICE).status is PendingStatus.REJECTED


def test_queue_mode_ends_the_turn_and_leaves_the_change_to_reviewers(governed):
    graph = _graph(governed, "Ok.", approvals="queue")
    state = graph.invoke({"messages": [("user", "I prefer tea.")]}, cfg("t3"))
    assert "__interrupt__" not in state and len(state["awaiting"]) == 1
    assert governed.approvals.list(ALICE)[0].id == state["awaiting"][0]["id"]
    with pytest.raises(InvalidValueError):
        build_memory_graph(ScriptedChatModel(script=[]), governed, checkpointer=InMemorySaver(), approvals="later")


def test_a_bad_resume_value_is_refused_and_the_change_stays_pending(governed):
    graph = _graph(governed, "Ok.")
    state = graph.invoke({"messages": [("user", "I prefer tea.")]}, cfg("t4"))
    pending_id = state["__interrupt__"][0].value["pending"][0]["id"]
    with pytest.raises(InvalidValueError):
        graph.invoke(Command(resume={"action": "perhaps"}), cfg("t4"))
    assert governed.approvals.get(pending_id, ALICE).status is PendingStatus.PENDING


def test_the_answer_is_linked_to_the_recall_that_served_it(tmp_path):
    memory = Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder())
    try:
        memory.remember("Prefers green tea", ALICE, kind="preference")
        graph = _graph(memory, "You like green tea, so try a sencha.")
        state = graph.invoke({"messages": [("user", "What tea should I buy?")]}, cfg("t5"))
        answer_id = state["messages"][-1].id
        [trace] = memory.audit.answer(answer_id, ALICE)
        assert trace.recall.id == state["recall_id"] and trace.recall.thread_id == "t5"
        assert [(m.record.content, m.used) for m in trace.memories] == [("Prefers green tea", True)]
    finally:
        memory.close()


FIRST_PROCESS = """
import json, sys
sys.path.insert(0, {tests!r})
from langchain_core.messages import AIMessage
from engram.integrations.langgraph.scripted import ScriptedChatModel
from engram import FakeHashEmbedder, Kind, Memory
from engram.approval_rules import ApprovalRule, ApprovalRules
from engram.integrations.langgraph import build_memory_graph, default_checkpointer
rules = ApprovalRules((ApprovalRule("preferences", kinds=(Kind.PREFERENCE,)),))
memory = Memory.open({db!r}, embedder=FakeHashEmbedder(), approvals=rules)
graph = build_memory_graph(ScriptedChatModel(script=[AIMessage("Noted.")]), memory,
                           checkpointer=default_checkpointer(memory))
state = graph.invoke({{"messages": [("user", "I prefer green tea over coffee.")]}},
                     {{"configurable": {{"thread_id": "t-restart", "user_id": "alice"}}}})
print(json.dumps([i.value for i in state["__interrupt__"]]))
"""


def test_the_interrupt_survives_a_process_restart(tmp_path):
    db = str(tmp_path / "m.db")
    script = FIRST_PROCESS.format(tests=str(Path(__file__).parent), db=db)
    env = {**os.environ, "ENGRAM_CACHE_DIR": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert first.returncode == 0, first.stderr
    [stop] = json.loads(first.stdout.strip().splitlines()[-1])
    pending_id = stop["pending"][0]["id"]
    memory = Memory.open(db, embedder=FakeHashEmbedder(), approvals=RULES)
    saver = default_checkpointer(memory)
    try:
        assert memory.approvals.get(pending_id, ALICE).status is PendingStatus.PENDING
        graph = build_memory_graph(ScriptedChatModel(script=[]), memory, checkpointer=saver)  # no model call now
        done = graph.invoke(Command(resume="approve"), cfg("t-restart"))
        assert done["remembered"] == ["Prefers green tea over coffee"]
        assert [m.content for m in done["messages"]] == ["I prefer green tea over coffee.", "Noted."]
        [record] = memory.list(ALICE).items
        assert memory.history(record.id, ALICE)[0].actor == "langgraph:reviewer"
    finally:
        close_checkpointer(saver)
        memory.close()
