"""What every reliability script shares: a database of either backend, the options
that choose it, and how a result is printed.

A target is a SQLite file in a scratch directory, or a fresh schema on PostgreSQL:
the server named by ``--pg-url`` / ``ENGRAM_TEST_PG_URL``, else one started with
pgserver (PostgreSQL 16 + pgvector) in a temporary directory for the run.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

os.environ.setdefault("ENGRAM_CACHE_DIR", tempfile.gettempdir())

BACKENDS = ("sqlite", "postgres")


@dataclass
class Target:
    """One empty engram database."""

    backend: str
    url: str  # what Memory.open / open_store take
    workdir: Path
    pgdata: Path | None = None  # the PostgreSQL data directory when this run started the server
    admin_url: str | None = None
    schema: str | None = None
    _cleanups: list = field(default_factory=list)

    def files(self) -> Iterator[Path]:
        """Every file that may hold this database's bytes (for byte scans)."""
        if self.backend == "sqlite":
            for suffix in ("", "-wal", "-shm", "-journal"):
                path = Path(self.url + suffix)
                if path.exists():
                    yield path
            return
        if self.pgdata is not None:
            yield from (p for p in self.pgdata.rglob("*") if p.is_file())

    def admin_sql(self, statement: str) -> list[tuple]:
        import psycopg

        assert self.admin_url is not None
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            cur = conn.execute(statement)
            return cur.fetchall() if cur.description else []

    def close(self) -> None:
        for cleanup in reversed(self._cleanups):
            cleanup()
        self._cleanups.clear()


_SERVER: dict[str, Any] = {}


def _pg_server(pg_url: str | None) -> tuple[str, Path | None]:
    """(superuser URL, data directory or None) of the server to use, started once per process."""
    pg_url = pg_url or os.environ.get("ENGRAM_TEST_PG_URL")
    if pg_url:  # its data directory, when known (ENGRAM_TEST_PG_DATA), is scanned by pii_scan
        data = os.environ.get("ENGRAM_TEST_PG_DATA")
        return pg_url, Path(data) if data else None
    if "url" not in _SERVER:
        import logging
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver

        logging.getLogger("pgserver").setLevel(logging.WARNING)
        tmpdir = tempfile.mkdtemp(prefix="engram-rel-pg-")
        handle = pgserver.get_server(Path(tmpdir) / "data", cleanup_mode="delete")
        _SERVER.update(url=handle.get_uri(), handle=handle, tmpdir=tmpdir, pgdata=Path(tmpdir) / "data")
        import psycopg

        with psycopg.connect(_SERVER["url"], autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        atexit.register(_stop_server)
    return _SERVER["url"], _SERVER["pgdata"]


def _stop_server() -> None:
    handle = _SERVER.pop("handle", None)
    if handle is not None:
        try:
            handle.cleanup()
        except Exception:  # the run is over; a server already gone is fine
            pass
    shutil.rmtree(_SERVER.pop("tmpdir", ""), ignore_errors=True)
    _SERVER.clear()


def new_target(backend: str, *, pg_url: str | None = None, workdir: Path | None = None) -> Target:
    if backend not in BACKENDS:
        raise SystemExit(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    scratch = Path(workdir or tempfile.mkdtemp(prefix=f"engram-rel-{backend}-"))
    scratch.mkdir(parents=True, exist_ok=True)
    if backend == "sqlite":
        target = Target("sqlite", str(scratch / "memory.db"), scratch)
        target._cleanups.append(lambda: shutil.rmtree(scratch, ignore_errors=True))
        return target
    admin, pgdata = _pg_server(pg_url)
    schema = "rel_" + uuid.uuid4().hex[:12]
    parts = urlsplit(admin)
    query = parts.query + ("&" if parts.query else "") + urlencode({"engram_schema": schema})
    target = Target("postgres", urlunsplit(parts._replace(query=query)), scratch, pgdata, admin, schema)

    def drop() -> None:
        try:
            target.admin_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        except Exception:  # the server may be gone at exit
            pass
        shutil.rmtree(scratch, ignore_errors=True)

    target._cleanups.append(drop)
    return target


def parser(description: str) -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    out.add_argument("--backend", choices=(*BACKENDS, "both"), default="sqlite")
    out.add_argument("--pg-url", help="a PostgreSQL superuser URL (default: ENGRAM_TEST_PG_URL, else pgserver)")
    out.add_argument("--json", dest="json_out", help="also write the result as JSON to this file")
    return out


def backends_of(args: argparse.Namespace) -> tuple[str, ...]:
    return BACKENDS if args.backend == "both" else (args.backend,)


def report(name: str, results: list[dict[str, Any]], json_out: str | None) -> int:
    """Print one line per result; exit status 1 when any result failed its check."""
    failed = False
    for result in results:
        ok = result.get("ok", True)
        failed |= not ok
        shown = {k: v for k, v in result.items() if k not in ("ok", "details")}
        print(f"{name} [{'ok' if ok else 'FAIL'}] " + json.dumps(shown, ensure_ascii=False, default=str))
    if json_out:
        Path(json_out).write_text(json.dumps(results, ensure_ascii=False, indent=2, default=str))
    return 1 if failed else 0


def engram_env() -> dict[str, str]:
    """The environment for child processes: this checkout's sources first."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": src + (os.pathsep + path if path else "")}


PYTHON = sys.executable
