"""Registers the governance commands (approvals, audit, quality, keys)."""

from __future__ import annotations

import typer

from . import approvals_cmd, audit_cmd, keys_cmd, quality_cmd


def register(app: typer.Typer) -> None:
    for module in (approvals_cmd, audit_cmd, quality_cmd, keys_cmd):
        module.register(app)
