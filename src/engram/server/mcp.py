"""An MCP server over one Memory, for one user fixed when it starts.

    engram mcp --user alice [--tenant acme] [--agent support] [--db memory.db]

Tools: remember, search, context, add, search_past_conversations, forget, history, answered (and, for a reviewer,
pending_approvals, approve, reject: mcp_governance.py); resource ``engram://memory``
(the user's memories as a block). No tool takes a tenant, user or namespace: the
scope is the one given at start, so the model cannot reach another user's memories,
and a record id from another scope answers "not found"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import MCPServerError, ResourceError, ToolError

from .. import __version__
from ..errors import EngramError
from ..memory import Memory
from ..model import Scope, Source, Status
from ..shapes import add_data, hit_brief, memory_block, record_brief, version_brief
from ..shapes.episodes import excerpt_data
from .mcp_governance import add_governance_tools, recall_note
from .requests import MessageIn

ACTOR = "mcp"
BLOCK_LIMIT = 200  # memories listed in the engram://memory resource
KindName = Literal["fact", "preference", "rule", "conclusion", "todo", "episode", "file"]
T = TypeVar("T")

INSTRUCTIONS = (
    "Long-term memory about the user you are talking with. Call `context` (or `search`) "
    "before answering when earlier conversations may matter; call `remember` for a durable "
    "fact, preference or rule the user states, or `add` with the recent turns to let engram "
    "extract and reconcile them; `search_past_conversations` to recall what was said or done in an "
    "earlier conversation; `forget` when the user asks you to. After answering with recalled "
    "memories, call `answered` with the recall id they came with."
)


def create_mcp_server(
    memory: Memory, scope: Scope, *, name: str = "engram", actor: str = ACTOR, reviewer: str | None = None,
) -> MCPServer:
    """Tools bound to ``scope``. The caller keeps ownership of ``memory`` (and closes it).
    ``reviewer`` (the person deciding) adds the approval tools."""
    if not isinstance(scope, Scope):
        raise TypeError(f"scope must be an engram.Scope, got {type(scope).__name__}")
    server: MCPServer = MCPServer(name, instructions=INSTRUCTIONS, version=__version__)

    @server.tool()
    def remember(
        content: str, kind: KindName = "fact", importance: float = 0.5, tags: list[str] | None = None,
        category: str | None = None,
    ) -> dict[str, Any]:
        """Store one memory as given: a durable fact, preference, rule, conclusion or to-do
        about the user. importance is in [0, 1]."""
        return record_brief(_call(lambda: memory.remember(content, scope, kind=kind, importance=importance, tags=tags,
                                                      category=category, source=Source(actor=actor),
                                                      actor=actor)))

    @server.tool()
    def search(query: str, k: int = 5, kinds: list[KindName] | None = None) -> dict[str, Any]:
        """Find the user's memories relevant to a query, best first, with scores."""
        found = _call(lambda: memory.recall(query, scope, k=k, kinds=kinds, actor=actor))
        return {"hits": [hit_brief(h) for h in found.hits], "recall_id": found.id}

    @server.tool()
    def context(query: str, budget_tokens: int = 800) -> str:
        """The block of the user's memories relevant to a query, grouped by kind and within
        a token budget, ready to read before answering."""
        block = _call(lambda: memory.context(query, scope, budget_tokens=budget_tokens, actor=actor))
        return (block.text or "(no relevant memories)") + recall_note(block.recall_id)

    @server.tool()
    def add(messages: list[MessageIn], thread_id: str | None = None) -> dict[str, Any]:
        """Give engram recent conversation turns ({role, content}); it extracts durable
        memories, reconciles them with what it knows (add, update, supersede or skip a
        duplicate) and reports what it did."""
        turns = [m.model_dump() for m in messages]
        return add_data(_call(lambda: memory.add(turns, scope, thread_id=thread_id, force=True, actor=actor)))

    @server.tool()
    def search_past_conversations(query: str, k: int = 3, window: int = 1) -> dict[str, Any]:
        """Search your past conversations with the user (earlier threads, not only remembered
        facts): the matching turns with their neighbours, the thread id and the time, best first.
        Use it to recall how a problem was solved before."""
        found = _call(lambda: memory.threads.search(query, scope, k=k, window=window))
        return {"conversations": [excerpt_data(e) for e in found]}

    @server.tool()
    def forget(memory_id: str, reason: str | None = None) -> dict[str, Any]:
        """Forget one of the user's memories (it leaves search; its history is kept)."""
        return record_brief(_call(lambda: memory.forget(memory_id, scope, reason=reason, actor=actor)))

    @server.tool()
    def history(memory_id: str) -> dict[str, Any]:
        """Every version of one of the user's memories: what changed, when and why."""
        versions = _call(lambda: memory.history(memory_id, scope))
        return {"versions": [version_brief(v) for v in versions]}

    @server.tool()
    def profile() -> dict[str, Any]:
        """What is always true of the user and always worth knowing, best first: constraints
        (health, diet, budgets), who they are (name, home, work, family), standing rules and
        preferences. context() includes it whatever the query."""
        return {"memories": [record_brief(r) for r in _call(lambda: memory.profile(scope))]}

    @server.resource("engram://profile", name="profile", mime_type="text/markdown",
                     description="The user's profile: what every answer should take into account")
    def profile_resource() -> str:
        return memory_block(_call(lambda: memory.profile(scope), ResourceError))

    @server.resource("engram://memory", name="memory", mime_type="text/markdown",
                     description="What engram remembers about this user, grouped by kind")
    def memory_resource() -> str:
        page = _call(lambda: memory.list(scope, limit=BLOCK_LIMIT, statuses=(Status.ACTIVE,)), ResourceError)
        return memory_block(list(page.items))

    add_governance_tools(server, memory, scope, reviewer=reviewer)
    return server


def _call(action: Callable[[], T], error: type[MCPServerError] = ToolError) -> T:
    """engram errors become tool (or resource) errors the model can read and act on."""
    try:
        return action()
    except EngramError as exc:
        raise error(f"{type(exc).__name__}: {exc}") from exc
