"""Deep Agents integration (``pip install 'engram-agentmem[deepagents]'``): memory as files.

    from deepagents import create_deep_agent
    from engram.integrations.deepagents import EngramMemoryMiddleware, memory_backend

    backend = memory_backend(memory, assistant_id="helper", org_id="acme")
    agent = create_deep_agent(model, backend=backend, skills=["/skills/"],
                              middleware=[EngramMemoryMiddleware(backend=backend, sources=["/memories/AGENTS.md"])])
"""

from __future__ import annotations

from .backend import EngramBackend
from .conversations import ConversationMiddleware
from .middleware import EngramMemoryMiddleware
from .policies import FilePolicy, FileWriteIntent, forbid_patterns, rate_limit, require_approval
from .setups import (
    agent_files,
    assistant_id_from_runtime,
    memory_backend,
    memory_routes,
    org_policies,
    seed_files,
    seed_skill,
    skills_files,
    user_files,
    user_id_from_runtime,
)
from .skills import SkillFormatError, SkillInfo, check_skill, skill_markdown

__all__ = [
    "ConversationMiddleware",
    "EngramBackend",
    "EngramMemoryMiddleware",
    "FilePolicy",
    "FileWriteIntent",
    "SkillFormatError",
    "SkillInfo",
    "agent_files",
    "assistant_id_from_runtime",
    "check_skill",
    "forbid_patterns",
    "memory_backend",
    "memory_routes",
    "org_policies",
    "rate_limit",
    "require_approval",
    "seed_files",
    "seed_skill",
    "skill_markdown",
    "skills_files",
    "user_files",
    "user_id_from_runtime",
]
