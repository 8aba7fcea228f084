"""The CI teardown flake (issue 21 item 10), as a long run: what the recovery tests do
to their own PostgreSQL server — start, restart (pg_ctl), stop with a read still
waiting, start again — repeated, each time stopped with the tests' ``PgServer.stop``.
Counts every exception a teardown raised (before the fix: psutil's NoSuchProcess from
``ProcessLookupError`` when the postmaster exited under pgserver's cleanup).

    python bench/reliability/ci_teardown.py --rounds 20
"""

from __future__ import annotations

import sys
import threading
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

import _common


def run(backend: str = "postgres", *, rounds: int = 10, pg_url: str | None = None) -> dict[str, Any]:
    from conformance import pgtools

    if pgtools.SKIP_REASON:
        return {"backend": "postgres", "skipped": pgtools.SKIP_REASON, "ok": True}
    raised: list[str] = []
    left: list[str] = []
    for number in range(rounds):
        server = pgtools.start_pgserver()
        data = server.handle.pgdata
        try:
            if number % 2:
                server.restart()
            else:  # stopped, and started again from another thread, as the outage test does
                server.pg_ctl("-m", "fast", "stop")
                started = threading.Thread(target=server.handle.ensure_postgres_running)
                started.start()
                started.join(60)
        finally:
            try:
                server.stop()
            except BaseException:  # every exception out of a teardown is the finding
                raised.append(traceback.format_exc(limit=3)[-300:])
        if data.exists():
            left.append(str(data))
    return {"backend": "postgres", "rounds": rounds, "teardown_raised": len(raised),
            "first": raised[0] if raised else None, "data_left": len(left), "ok": not raised and not left}


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    return _common.report("ci_teardown", [run(rounds=args.rounds, pg_url=args.pg_url)], args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
