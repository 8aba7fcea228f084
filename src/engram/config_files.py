"""Configuration given as JSON text or as a path to a .json / .toml file (the PII
policy, approval rules, consolidation schedules): read the same way everywhere, with
a ConfigError that says which setting and what was wrong."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from .errors import ConfigError


def read_config(source: str, what: str) -> Any:
    """``source`` is JSON text (starting with ``{`` or ``[``) or a file path; ``what``
    names the setting in errors ("PII policy configuration")."""
    text = source.strip()
    if text.startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{what} is not valid JSON: {exc}") from None
    path = Path(text).expanduser()
    if not path.is_file():
        raise ConfigError(f"{what}: no file {path}")
    try:
        if path.suffix == ".toml":
            return tomllib.loads(path.read_text(encoding="utf-8"))
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{what} in {path} cannot be parsed: {exc}") from None
