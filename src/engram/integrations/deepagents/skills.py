"""Skills as files: ``/skills/<name>/SKILL.md`` with YAML frontmatter (name, description).

Deep Agents' SkillsMiddleware reads them through any backend: at start it lists
the skill directories and shows only each name and description; the model reads
the full SKILL.md on demand (progressive disclosure). Deep Agents skips a skill
whose frontmatter it cannot parse with only a log line; engram refuses to store
such a file in the first place, with an error naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

import yaml

from ...errors import InvalidValueError

FRONTMATTER = re.compile(r"^---\s*\n(.*?)\n---\s*\n", re.DOTALL)  # the pattern deepagents parses with
MAX_NAME = 64
MAX_DESCRIPTION = 1024
SKILL_FILE = "SKILL.md"


class SkillFormatError(InvalidValueError):
    """A SKILL.md whose frontmatter deepagents could not load; names the file."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"invalid SKILL.md frontmatter in '{path}': {problem}")
        self.path = path
        self.problem = problem


@dataclass(frozen=True, slots=True)
class SkillInfo:
    name: str
    description: str
    path: str


def is_skill_file(path: str) -> bool:
    return PurePosixPath(path).name == SKILL_FILE


def check_skill(text: str, path: str) -> SkillInfo:
    """Validate a SKILL.md the way deepagents will read it; SkillFormatError if not."""
    match = FRONTMATTER.match(text)
    if not match:
        raise SkillFormatError(path, "the file must start with a '---' line, YAML (name, description), and '---'")
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise SkillFormatError(path, f"the frontmatter is not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise SkillFormatError(path, "the frontmatter must be a mapping with 'name' and 'description'")
    name = data.get("name")
    description = data.get("description")
    for field, value in (("name", name), ("description", description)):
        if not isinstance(value, str) or not value.strip():
            raise SkillFormatError(path, f"'{field}' is required and must be a non-empty string")
    name, description = str(name).strip(), str(description).strip()
    if len(name) > MAX_NAME:
        raise SkillFormatError(path, f"'name' is longer than {MAX_NAME} characters")
    if name.startswith("-") or name.endswith("-") or "--" in name or not all(
        c == "-" or c.isdigit() or (c.isalpha() and c.islower()) for c in name
    ):
        raise SkillFormatError(path, f"'name' {name!r} must be lowercase letters, digits and single hyphens")
    directory = PurePosixPath(path).parent.name
    if directory and name != directory:
        raise SkillFormatError(path, f"'name' {name!r} must match its directory {directory!r}")
    if len(description) > MAX_DESCRIPTION:
        raise SkillFormatError(path, f"'description' is longer than {MAX_DESCRIPTION} characters")
    return SkillInfo(name, description, path)


def skill_markdown(name: str, description: str, body: str) -> str:
    """A SKILL.md text from its parts (YAML-safe quoting of the description)."""
    front = yaml.safe_dump({"name": name, "description": description}, allow_unicode=True, sort_keys=False)
    return f"---\n{front}---\n\n{body.strip()}\n"


__all__ = ["SkillFormatError", "SkillInfo", "check_skill", "is_skill_file", "skill_markdown"]
