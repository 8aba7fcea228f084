"""The `engram` command line: thin over the public API."""

from __future__ import annotations

from . import chat_cmd, pipeline_cmds
from .app import app

pipeline_cmds.register(app)
chat_cmd.register(app)


def main() -> None:
    app()


__all__ = ["app", "main"]
