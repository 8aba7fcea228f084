"""Registers the governance commands (approvals, audit, review, metrics, keys, reveal)."""

from __future__ import annotations

import typer

from . import approvals_cmd, audit_cmd, keys_cmd, metrics_cmd, review_cmd


def register(app: typer.Typer) -> None:
    for module in (approvals_cmd, audit_cmd, review_cmd, metrics_cmd, keys_cmd):
        module.register(app)
