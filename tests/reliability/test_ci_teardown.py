"""Issue 21 item 10: stopping a test's PostgreSQL server never raises. pgserver's cleanup
could find the postmaster still exiting after ``pg_ctl stop -w`` returned, try to stop it
again and raise psutil's NoSuchProcess (from ``ProcessLookupError: [Errno 3] No such
process``) out of the fixture's teardown, turning `.ci/run` red before ruff and mypy ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import pgtools


class FakeGoneServerHandle:
    """FAKE pgserver handle: its cleanup fails as pgserver's does when the postmaster
    exits between its is_running() check and its terminate()."""

    pgdata = Path("/nonexistent/engram-test-pgdata")
    system_user = None
    _postmaster_info = None

    def __init__(self) -> None:
        self.cleaned = 0

    def cleanup(self) -> None:
        import psutil

        self.cleaned += 1
        try:
            raise ProcessLookupError(3, "No such process")
        except ProcessLookupError as err:
            raise psutil.NoSuchProcess(2**22 + 7) from err


def test_stop_survives_a_postmaster_that_exits_under_pgservers_cleanup():
    handle = FakeGoneServerHandle()
    server = pgtools.PgServer(url="postgresql://unused", handle=handle)
    server.stop()  # raised NoSuchProcess before
    assert handle.cleaned == 1 and server.handle is None
    server.stop()  # and again: nothing left to stop


def test_a_real_server_restarted_then_stopped_leaves_nothing_running():
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    import psutil

    server = pgtools.start_pgserver()
    server.restart()
    pid = server.handle._postmaster_info.pid if server.handle._postmaster_info else None
    data = server.handle.pgdata
    server.stop()
    assert not data.exists()
    assert pid is None or not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
