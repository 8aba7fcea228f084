"""The `engram` command line: thin over the public API."""

from __future__ import annotations

from ..benchmark import command as bench_cmd
from . import (
    chat_cmd,
    data_cmds,
    eval_cmd,
    governance_cmds,
    mcp_cmd,
    pipeline_cmds,
    serve_cmd,
    threads_cmd,
)
from .app import app

data_cmds.register(app)
pipeline_cmds.register(app)
chat_cmd.register(app)
serve_cmd.register(app)
mcp_cmd.register(app)
bench_cmd.register(app)
eval_cmd.register(app)
governance_cmds.register(app)
threads_cmd.register(app)


def main() -> None:
    app()


__all__ = ["app", "main"]
