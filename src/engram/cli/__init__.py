"""The `engram` command line: thin over the public API."""

from __future__ import annotations

from .app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
