"""A real Deep Agent writing a file an approval rule holds: the agent waits (interrupt),
a person approves, edits or rejects with Command(resume=...), and the tool reports
the outcome to the model. Queue mode answers at once that the change awaits review."""

from __future__ import annotations

import pytest

pytest.importorskip("deepagents")

from deepagents import create_deep_agent
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from engram import FakeHashEmbedder, Memory, Operation, Scope
from engram.approval_rules import ApprovalRule, ApprovalRules
from engram.integrations.deepagents import EngramBackend
from engram.integrations.langgraph.scripted import ScriptedChatModel
from engram.integrations.langgraph.scripted import calls_tools as tools
from engram.integrations.langgraph.scripted import tool_call as call
from engram.values.governance import PendingStatus

RULES = ApprovalRules((ApprovalRule("policy files", paths=("/policies/*",), actors=("agent*",)),))
FILES = Scope("default", ("agents", "helper", "files"))
CONFIG = {"configurable": {"thread_id": "t1", "user_id": "ana"}}


@pytest.fixture
def governed(tmp_path):
    memory = Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder(), approvals=RULES)
    yield memory
    memory.close()


def _agent(backend, checkpointer, *replies):
    script = [tools(call("write_file", file_path="/policies/refunds.md", content="Refunds within 30 days.\n")),
              *(AIMessage(r) for r in replies)]
    return create_deep_agent(model=ScriptedChatModel(script=script), backend=backend, checkpointer=checkpointer)


def _tool_messages(state) -> list[str]:
    return [str(m.content) for m in state["messages"] if isinstance(m, ToolMessage)]


def test_a_held_file_write_waits_for_a_person_and_is_written_on_approval(governed):
    backend = EngramBackend(governed, namespace=FILES.namespace)
    saver = InMemorySaver()
    state = _agent(backend, saver, "Saved the policy.").invoke({"messages": [("user", "write the policy")]}, CONFIG)
    [stop] = state["__interrupt__"]
    [held] = stop.value["pending"]
    assert held["changes"][0]["path"] == "/policies/refunds.md" and held["proposed_by"] == "agent"
    assert backend.read_text("/policies/refunds.md") is None
    resumed = _agent(backend, saver, "Saved the policy.")  # another instance over the same checkpointer
    done = resumed.invoke(Command(resume={"action": "approve", "reviewer": "maria"}), CONFIG)
    assert backend.read_text("/policies/refunds.md") == "Refunds within 30 days.\n"
    assert "Updated file" in _tool_messages(done)[-1] or "refunds.md" in _tool_messages(done)[-1]
    assert [p.status for p in governed.approvals.list(FILES, status=None)] == [PendingStatus.APPROVED]  # one proposal
    assert governed.audit.list(FILES, operation=Operation.APPROVE)[0].actor == "maria"


def test_an_edited_approval_writes_the_reviewers_text_and_a_rejection_tells_the_model(governed):
    backend = EngramBackend(governed, namespace=FILES.namespace)
    saver = InMemorySaver()
    agent = _agent(backend, saver, "Done.")
    agent.invoke({"messages": [("user", "write the policy")]}, CONFIG)
    agent.invoke(Command(resume={"action": "edit", "content": "Refunds within 14 days.\n"}), CONFIG)
    assert backend.read_text("/policies/refunds.md") == "Refunds within 14 days.\n"
    other = {"configurable": {"thread_id": "t2", "user_id": "ana"}}
    again = _agent(backend, InMemorySaver(), "Understood.")
    again.invoke({"messages": [("user", "write it again")]}, other)
    state = again.invoke(Command(resume={"action": "reject", "reason": "14 days is the policy"}), other)
    assert "was rejected by deepagents:reviewer: 14 days is the policy" in _tool_messages(state)[-1]
    assert backend.read_text("/policies/refunds.md") == "Refunds within 14 days.\n"


def test_queue_mode_tells_the_model_the_change_awaits_a_reviewer(governed):
    backend = EngramBackend(governed, namespace=FILES.namespace, approvals="queue")
    state = _agent(backend, InMemorySaver(), "It awaits review.").invoke(
        {"messages": [("user", "write the policy")]}, CONFIG)
    assert "__interrupt__" not in state
    assert "needs approval" in _tool_messages(state)[-1]
    [pending] = governed.approvals.list(FILES)
    assert pending.record.metadata["path"] == "/policies/refunds.md"
    backend.as_application().seed({"/policies/other.md": "App-written.\n"})  # the app is not held by this rule
    assert backend.read_text("/policies/other.md") == "App-written.\n"
