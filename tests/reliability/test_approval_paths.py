"""Issue 21 item 5: an approval rule on a Deep Agents path matches the path the agent
writes (``/memories/hr/*`` for ``/memories/hr/salaries.md`` through the ``/memories/``
route), as well as the path inside the route (``/hr/*``); the documented ``/policies/*``
holds files under a ``/policies/`` route; the reviewer sees the agent's path."""

from __future__ import annotations

import approval_paths
import pytest

pytest.importorskip("deepagents")

from deepagents.backends import CompositeBackend, StateBackend

from engram import FakeHashEmbedder, Memory, Settings
from engram.approval_rules import ApprovalRule, ApprovalRules
from engram.integrations._approval import summary
from engram.integrations.deepagents import EngramBackend


@pytest.mark.parametrize(("route", "path", "pattern"), [
    ("/memories/", "/memories/hr/salaries.md", "/memories/hr/*"),
    ("/memories/", "/memories/hr/salaries.md", "/hr/*"),
    ("/policies/", "/policies/refunds.md", "/policies/*"),
])
def test_a_rule_holds_the_path_the_agent_writes(tmp_path, route, path, pattern):
    rules = ApprovalRules((ApprovalRule("gated", paths=(pattern,)),))
    with Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False),
                     approvals=rules) as memory:
        files = EngramBackend(memory, namespace=("agents", "helper", "files"), mount=route, approvals="queue")
        composite = CompositeBackend(default=StateBackend(), routes={route: files})
        result = composite.write(path, "Alice: 100\n")
        assert result.error and "needs approval" in result.error
        assert files.read_text(path[len(route) - 1:]) is None
        pending = memory.approvals.list(files.scope())
        assert len(pending) == 1 and summary(pending[0])["changes"][0]["path"] == path


def test_a_rule_for_another_directory_lets_the_write_through(tmp_path):
    rules = ApprovalRules((ApprovalRule("gated", paths=("/memories/finance/*",)),))
    with Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False),
                     approvals=rules) as memory:
        files = EngramBackend(memory, namespace=("agents", "helper", "files"), mount="/memories/", approvals="queue")
        composite = CompositeBackend(default=StateBackend(), routes={"/memories/": files})
        assert composite.write("/memories/hr/salaries.md", "Alice: 100\n").error is None
        assert files.read_text("/hr/salaries.md") == "Alice: 100\n"


def test_every_route_and_path(backend_name):
    result = approval_paths.run(backend_name)
    assert result["cases"] >= 60 and result["wrong"] == 0, result["first_wrong"]
