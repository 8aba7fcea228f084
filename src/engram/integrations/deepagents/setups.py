"""Ready-made backends for the setups the Deep Agents memory documentation describes.

- agent-scoped memory: one namespace per assistant            (``agent_files``)
- user-scoped memory: one namespace per user, the user id read from the runtime,
  never from anything the model supplies                         (``user_files``)
- organisation policies: read-only for agents, written by the app (``org_policies``)
- several agents in one deployment: by default they share each user's memories
  (``users/<uid>``, what ``Memory.add``, the memory graph, HTTP, MCP and the mem0 layer
  write); ``per_agent=True`` keeps one agent's memories of a user apart
  (``agents/<aid>/users/<uid>``, as ``Scope.for_user(..., agent=aid)``)   (``user_files(per_agent=True)``)
- skills: ``/skills/<name>/SKILL.md``                             (``skills_files``)
- all of it as CompositeBackend routes                           (``memory_backend``)
- seeding files and skills from application code                 (``seed_files``, ``seed_skill``)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import InvalidValueError, PermissionDeniedError
from ...memory import Memory
from .backend import EngramBackend
from .skills import check_skill, skill_markdown


def user_id_from_runtime(runtime: Any) -> str:
    """The caller's user id, from (in order) LangGraph Platform auth
    (``runtime.server_info.user.identity``), the run context (``context.user_id``)
    or the run config (``configurable.user_id``). All three are set by the
    application, not by the model. PermissionDeniedError when none is set."""
    user = getattr(getattr(runtime, "server_info", None), "user", None)
    identity = getattr(user, "identity", None)
    if identity:
        return str(identity)
    found = _from_context(getattr(runtime, "context", None), "user_id") or _from_config("user_id")
    if found:
        return found
    raise PermissionDeniedError(
        "no user identity in the runtime: pass context={'user_id': ...} (or a context object with .user_id) "
        "or config={'configurable': {'user_id': ...}} when invoking the agent"
    )


def assistant_id_from_runtime(runtime: Any, default: str | None = None) -> str:
    server = getattr(runtime, "server_info", None)
    found = (getattr(server, "assistant_id", None) or _from_context(getattr(runtime, "context", None), "assistant_id")
             or _from_config("assistant_id") or default)
    if not found:
        raise PermissionDeniedError("no assistant id: pass assistant_id=... or set it in the run config")
    return str(found)


def agent_files(memory: Memory, assistant_id: str, *, tenant: str = "default", mount: str = "/memories/",
                **options: Any) -> EngramBackend:
    """Memory shared by every user of one assistant: ("agents", id, "files")."""
    return EngramBackend(memory, namespace=("agents", assistant_id, "files"), tenant=tenant, mount=mount,
                         actor=f"agent:{assistant_id}", **options)


def user_files(memory: Memory, *, tenant: str = "default", assistant_id: str | None = None,
               per_agent: bool = False, mount: str = "/memories/", profile: str | None = "/profile.md",
               **options: Any) -> EngramBackend:
    """Memory private to the calling user: ("users", uid, "files"), shared by every agent
    of the deployment, beside the memories ``Memory.add(…, Scope.for_user(tenant, uid))``
    writes; ``assistant_id`` names the agent in the audit trail. ``per_agent=True`` (with
    an ``assistant_id``) keeps this agent's memory of the user apart:
    ("agents", aid, "users", uid, "files"), the profile read from
    ``Scope.for_user(tenant, uid, agent=aid)``. ``profile``: a read-only file
    (``/memories/profile.md``) holding the user's profile from their memories (None: no file)."""
    if per_agent and assistant_id is None:
        raise InvalidValueError("per_agent=True needs an assistant_id: whose memories of the user to keep apart")

    def namespace(runtime: Any) -> tuple[str, ...]:
        user = user_id_from_runtime(runtime)
        if not per_agent:
            return ("users", user, "files")
        return ("agents", str(assistant_id), "users", user, "files")

    def actor(runtime: Any) -> str:
        return f"agent:{assistant_id}" if assistant_id else "agent"

    return EngramBackend(memory, namespace=namespace, tenant=tenant, mount=mount, actor=actor, profile=profile,
                         **options)


def org_policies(memory: Memory, org_id: str, *, tenant: str = "default", mount: str = "/policies/",
                 **options: Any) -> EngramBackend:
    """Organisation-wide files agents can read but never write: ("orgs", org, "policies").
    Write them with ``seed_files(backend, {...})`` from application code."""
    options.setdefault("read_only", True)
    return EngramBackend(memory, namespace=("orgs", org_id, "policies"), tenant=tenant, mount=mount, **options)


def skills_files(memory: Memory, *, tenant: str = "default", assistant_id: str | None = None,
                 org_id: str | None = None, mount: str = "/skills/", read_only: bool = True,
                 **options: Any) -> EngramBackend:
    """Skills in ("agents", aid, "skills"), ("orgs", org, "skills") or ("skills",);
    read-only for agents by default (the app seeds them)."""
    if assistant_id is not None:
        namespace: tuple[str, ...] = ("agents", assistant_id, "skills")
    elif org_id is not None:
        namespace = ("orgs", org_id, "skills")
    else:
        namespace = ("skills",)
    return EngramBackend(memory, namespace=namespace, tenant=tenant, mount=mount, read_only=read_only, **options)


def memory_routes(memory: Memory, *, assistant_id: str, tenant: str = "default", user_scoped: bool = True,
                  per_agent: bool = False, org_id: str | None = None, skills: bool = True,
                  **options: Any) -> dict[str, EngramBackend]:
    """CompositeBackend routes: /memories/ (per user, or per agent), /skills/ and,
    with an org id, /policies/ (read-only). Per user, the user's memories are shared by
    the deployment's agents (``users/<uid>``) unless ``per_agent=True``."""
    routes: dict[str, EngramBackend] = {}
    if user_scoped:
        routes["/memories/"] = user_files(memory, tenant=tenant, assistant_id=assistant_id, per_agent=per_agent,
                                          **options)
    else:
        routes["/memories/"] = agent_files(memory, assistant_id, tenant=tenant, **options)
    if skills:
        routes["/skills/"] = skills_files(memory, tenant=tenant, assistant_id=assistant_id)
    if org_id is not None:
        routes["/policies/"] = org_policies(memory, org_id, tenant=tenant)
    return routes


def memory_backend(memory: Memory, *, assistant_id: str, default: Any = None, **options: Any) -> Any:
    """A CompositeBackend: engram routes (see ``memory_routes``) over ``default``
    (deepagents' StateBackend when None) for scratch files."""
    from deepagents.backends import CompositeBackend, StateBackend

    return CompositeBackend(default=default if default is not None else StateBackend(),
                            routes=dict(memory_routes(memory, assistant_id=assistant_id, **options)))


def seed_files(backend: EngramBackend, contents: Mapping[str, str], *, read_only: bool = False,
               overwrite: bool = True) -> list[str]:
    """Write files from application code (policies, starter memories)."""
    return backend.seed(contents, read_only=read_only, overwrite=overwrite)


def seed_skill(backend: EngramBackend, name: str, description: str, body: str, *,
               extra_files: Mapping[str, str] | None = None, read_only: bool = False) -> str:
    """Write ``/<name>/SKILL.md`` (and helper files beside it) into a skills backend;
    SkillFormatError (naming the file) when the frontmatter would not load."""
    path = f"/{name}/SKILL.md"
    text = skill_markdown(name, description, body)
    check_skill(text, backend.mount.rstrip("/") + path)
    contents = {path: text, **{f"/{name}/{rel.lstrip('/')}": t for rel, t in (extra_files or {}).items()}}
    backend.seed(contents, read_only=read_only)
    return path


def _from_context(context: Any, name: str) -> str | None:
    if context is None:
        return None
    value = context.get(name) if isinstance(context, Mapping) else getattr(context, name, None)
    return str(value) if value else None


def _from_config(name: str) -> str | None:
    try:
        from langgraph.config import get_config

        value = (get_config().get("configurable") or {}).get(name)
    except (ImportError, RuntimeError, KeyError):
        return None
    return str(value) if value else None
