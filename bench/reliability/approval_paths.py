"""Approval rules on Deep Agents paths (issue 21 item 5): for every route an engram
backend is mounted on (``/memories/``, ``/policies/``, ``/skills/``, a deeper
``/team/notes/``) and every file path below it, a rule written with the path the agent
writes (``/memories/hr/*``) and a rule written with the path inside the route
(``/hr/*``) must both hold the write, and a rule for a sibling directory must not.
Each write goes through Deep Agents' CompositeBackend as an agent's tool call does.

    python bench/reliability/approval_paths.py --backend both
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from engram import FakeHashEmbedder, Memory, Settings
from engram.approval_rules import ApprovalRule, ApprovalRules

ROUTES = ("/memories/", "/policies/", "/skills/", "/team/notes/")
FILES = ("/hr/salaries.md", "/hr/2024/bonus.md", "/readme.md", "/deep/a/b/c.txt")


def _cases() -> list[tuple[str, str, str, bool]]:
    """(route, file inside it, rule pattern, whether the rule must hold the write)."""
    out = []
    for route in ROUTES:
        for inner in FILES:
            directory = inner.rsplit("/", 1)[0] or ""
            written = route.rstrip("/") + inner
            out += [(route, inner, route.rstrip("/") + directory + "/*", True),  # the agent's path
                    (route, inner, (directory or "") + "/*", True),  # the path inside the route
                    (route, inner, route.rstrip("/") + "/elsewhere/*", False),
                    (route, inner, written, True)]
    return out


def run(backend: str, *, pg_url: str | None = None) -> dict[str, Any]:
    from deepagents.backends import CompositeBackend, StateBackend

    from engram.integrations.deepagents import EngramBackend

    target = _common.new_target(backend, pg_url=pg_url)
    wrong: list[str] = []
    cases = _cases()
    try:
        for number, (route, inner, pattern, held) in enumerate(cases):
            rules = ApprovalRules((ApprovalRule(f"rule {number}", paths=(pattern,)),))
            with Memory.open(target.url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False),
                             approvals=rules) as memory:
                files = EngramBackend(memory, namespace=("cases", f"c{number}"), mount=route, approvals="queue")
                composite = CompositeBackend(default=StateBackend(), routes={route: files})
                written = route.rstrip("/") + inner
                result = composite.write(written, "the file\n")
                pending = memory.approvals.list(files.scope())
                was_held = bool(pending) and files.read_text(inner) is None
                shown = pending[0].record.metadata if pending else {}
                if was_held != held or (was_held and result.error is None):
                    wrong.append(f"{pattern} on {written}: held={was_held}, expected {held}")
                elif was_held and route.rstrip("/") + shown.get("path", "") != written:
                    wrong.append(f"{pattern} on {written}: the pending change names {shown}")
    finally:
        target.close()
    return {"backend": backend, "cases": len(cases), "wrong": len(wrong), "first_wrong": wrong[:3],
            "ok": not wrong}


def main() -> int:
    parser = _common.parser(__doc__ or "")
    args = parser.parse_args()
    results = [run(b, pg_url=args.pg_url) for b in _common.backends_of(args)]
    return _common.report("approval_paths", results, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
