"""``manage_memory`` and ``search_memory``: LangChain tools over ``engram.Memory``.

The namespace is a template, as in LangMem: ``("users", "{user_id}")`` is filled,
on every call, from what the application put in the run — the run context
(``agent.invoke(..., context={"user_id": ...})``), the run config
(``configurable.user_id``) or LangGraph Platform auth (the user's identity). The
model never names a tenant, user or namespace: the tools have no such argument,
and arguments a tool does not declare are dropped, so a model cannot reach another
user's memories; an id from elsewhere answers "not found".

``search_past_conversations`` searches the run's past conversations (threads of
turns) the same way: the user comes from the run, never from the model.
"""

from __future__ import annotations

import asyncio
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig, ensure_config
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field

from ...errors import EngramError, InvalidValueError, PermissionDeniedError
from ...memory import Memory
from ...model import Scope, Source
from ...shapes import hit_brief, record_brief
from ...shapes.episodes import excerpt_data

NamespaceTemplate = Sequence[str]
DEFAULT_NAMESPACE: tuple[str, ...] = ("users", "{user_id}")
ACTOR = "agent"
KindName = Literal["fact", "preference", "rule", "conclusion", "todo"]

MANAGE_DESCRIPTION = (
    "Save, change or delete a long-term memory about the user you are talking with. "
    "Create one for durable facts, preferences, rules, conclusions and to-dos the user states "
    "(not for small talk). To change or delete one, give its id (from search_memory). "
    "action: create (needs content), update (needs id and content), delete (needs id)."
)
SEARCH_DESCRIPTION = (
    "Search the long-term memories about the user you are talking with, best match first. "
    "Use it before answering when earlier conversations may matter."
)

PAST_DESCRIPTION = (
    "Search your past conversations with this user (earlier threads, not just remembered facts), "
    "best match first: each result is the matching turns with their neighbours, the thread id and the time. "
    "Use it to recall how a problem was solved before or what was said in an earlier session."
)


class ManageMemoryArgs(BaseModel):
    action: Literal["create", "update", "delete"] = Field("create", description="What to do")
    content: str | None = Field(None, description="The memory, one self-contained statement")
    id: str | None = Field(None, description="The memory to update or delete")
    kind: KindName = Field("fact", description="What sort of memory it is")
    reason: str | None = Field(None, description="Why it changes (kept in its history)")


class SearchMemoryArgs(BaseModel):
    query: str = Field(description="What to look for, in the user's words")
    limit: int = Field(5, ge=1, le=50, description="How many memories at most")
    kind: KindName | None = Field(None, description="Only memories of this kind")


class SearchPastArgs(BaseModel):
    query: str = Field(description="What to look for, in the user's words")
    limit: int = Field(3, ge=1, le=20, description="How many conversations at most")


# -- the scope of a run ------------------------------------------------------------------


def scope_from_run(tenant: str, namespace: NamespaceTemplate, config: RunnableConfig | None = None) -> Scope:
    """The scope for this run: each ``{name}`` in the template is read from the run
    context, then ``configurable``, then (``user_id``) LangGraph Platform auth.
    PermissionDeniedError when one is missing: nothing is read or written."""
    values = _RunValues(ensure_config(config))
    try:
        labels = tuple(label.format_map(values) for label in namespace)
    except KeyError as exc:
        name = exc.args[0]
        raise PermissionDeniedError(
            f"no {name} in the run: pass context={{'{name}': ...}} or "
            f"config={{'configurable': {{'{name}': ...}}}} when invoking the agent"
        ) from None
    return Scope(tenant, labels)


class _RunValues(Mapping[str, str]):
    """``{name}`` → the application's value for this run, looked up lazily."""

    def __init__(self, config: RunnableConfig) -> None:
        self._configurable = config.get("configurable") or {}
        self._runtime = _current_runtime()

    def __getitem__(self, name: str) -> str:
        for value in (self._from_context(name), self._configurable.get(name), self._from_auth(name)):
            if value is not None and str(value).strip():
                return str(value)
        raise KeyError(name)

    def _from_context(self, name: str) -> Any:
        context = getattr(self._runtime, "context", None)
        if context is None:
            return None
        return context.get(name) if isinstance(context, Mapping) else getattr(context, name, None)

    def _from_auth(self, name: str) -> Any:
        if name != "user_id":
            return None
        user = getattr(getattr(self._runtime, "server_info", None), "user", None)
        return getattr(user, "identity", None) or self._configurable.get("langgraph_auth_user_id")

    def __iter__(self):  # format_map only looks names up
        return iter(())

    def __len__(self) -> int:
        return 0


def _current_runtime() -> Any:
    try:
        from langgraph.runtime import get_runtime

        return get_runtime()
    except (ImportError, RuntimeError, KeyError):
        return None


def _check_template(namespace: NamespaceTemplate) -> tuple[str, ...]:
    if isinstance(namespace, str) or not namespace:
        raise InvalidValueError("namespace must be a non-empty tuple of labels, e.g. ('users', '{user_id}')")
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidValueError(f"namespace labels must be strings, got {label!r}")
        list(string.Formatter().parse(label))  # a malformed template fails here, not on the first call
    return tuple(namespace)


# -- the tools ---------------------------------------------------------------------------


def create_manage_memory_tool(
    memory: Memory, *, tenant: str = "default", namespace: NamespaceTemplate = DEFAULT_NAMESPACE,
    name: str = "manage_memory", actor: str = ACTOR,
) -> StructuredTool:
    """A tool that creates, updates (a new version) or deletes (forgets; history kept)
    one memory in the run's scope."""
    template = _check_template(namespace)

    def manage_memory(config: RunnableConfig, action: str = "create", content: str | None = None,
                      id: str | None = None, kind: str = "fact", reason: str | None = None) -> dict[str, Any]:
        scope = scope_from_run(tenant, template, config)
        thread = (config.get("configurable") or {}).get("thread_id")
        if action == "create":
            record = memory.remember(_needed(content, "content", action), scope, kind=kind, actor=actor,
                                     source=Source(actor=actor, thread_id=str(thread) if thread else None))
        elif action == "update":
            record = memory.update(_needed(id, "id", action), scope, content=_needed(content, "content", action),
                                   reason=reason, actor=actor)
        else:
            record = memory.forget(_needed(id, "id", action), scope, reason=reason, actor=actor)
        return {"action": action, "memory": record_brief(record)}

    return _tool(manage_memory, name, MANAGE_DESCRIPTION, ManageMemoryArgs)


def create_search_memory_tool(
    memory: Memory, *, tenant: str = "default", namespace: NamespaceTemplate = DEFAULT_NAMESPACE,
    name: str = "search_memory", include_descendants: bool = False,
) -> StructuredTool:
    """A tool that searches the run's scope (hybrid retrieval, scored)."""
    template = _check_template(namespace)

    def search_memory(config: RunnableConfig, query: str, limit: int = 5, kind: str | None = None) -> dict[str, Any]:
        scope = scope_from_run(tenant, template, config)
        hits = memory.search(query, scope, k=limit, kinds=kind, include_descendants=include_descendants)
        return {"memories": [hit_brief(h) for h in hits]}

    return _tool(search_memory, name, SEARCH_DESCRIPTION, SearchMemoryArgs)


def create_search_past_conversations_tool(
    memory: Memory, *, tenant: str = "default", namespace: NamespaceTemplate = DEFAULT_NAMESPACE,
    name: str = "search_past_conversations", include_descendants: bool = False, window: int = 1,
) -> StructuredTool:
    """A tool that searches the past conversations of the run's scope (the user from
    the run context, config or auth; ``include_descendants`` with an org template, e.g.
    ``("orgs", "{org_id}")``, lets the application open a whole org's threads)."""
    template = _check_template(namespace)

    def search_past_conversations(config: RunnableConfig, query: str, limit: int = 3) -> dict[str, Any]:
        scope = scope_from_run(tenant, template, config)
        found = memory.threads.search(query, scope, k=limit, window=window,
                                      include_descendants=include_descendants)
        return {"conversations": [excerpt_data(e) for e in found]}

    return _tool(search_past_conversations, name, PAST_DESCRIPTION, SearchPastArgs)


ToolFactory = Callable[..., StructuredTool]
# The tools memory_tools() builds.
TOOL_FACTORIES: tuple[ToolFactory, ...] = (create_manage_memory_tool, create_search_memory_tool,
                                           create_search_past_conversations_tool)


def memory_tools(memory: Memory, *, tenant: str = "default",
                 namespace: NamespaceTemplate = DEFAULT_NAMESPACE) -> list[StructuredTool]:
    """Every memory tool, bound to one namespace template."""
    return [factory(memory, tenant=tenant, namespace=namespace) for factory in TOOL_FACTORIES]


def _needed(value: str | None, what: str, action: str) -> str:
    if value is None or not str(value).strip():
        raise InvalidValueError(f"{action} needs {what}")
    return value


def _tool(func: Callable[..., dict[str, Any]], name: str, description: str,
          schema: type[BaseModel]) -> StructuredTool:
    """engram errors come back to the model as the tool's answer (it can correct itself);
    the async twin runs the same code in a worker thread."""

    def run(config: RunnableConfig, **kwargs: Any) -> dict[str, Any]:
        try:
            return func(config, **kwargs)
        except EngramError as exc:
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc

    async def arun(config: RunnableConfig, **kwargs: Any) -> dict[str, Any]:
        return await asyncio.to_thread(run, config, **kwargs)

    return StructuredTool.from_function(func=run, coroutine=arun, name=name, description=description,
                                        args_schema=schema, handle_tool_error=True)
