"""Fast runs of the reliability suite (bench/reliability, docs/RELIABILITY.md): the
same scripts as the long runs, with small sizes, on both backends."""

from __future__ import annotations

import durability
import lost_updates


def test_kill_9_loses_no_acknowledged_write(backend_name):
    result = durability.run(backend_name, rounds=1, writers=2, readers=1, seconds=1.5)
    assert result["acknowledged"] > 0
    assert result["ok"], result


def test_compare_and_swap_loses_no_update_and_plain_writes_never_fail(backend_name):
    results = lost_updates.run(backend_name, threads=4, processes=2, times=4)
    assert {(r["via"], r["cas"]) for r in results} == {
        ("memory", True), ("memory", False), ("store", True), ("store", False), ("deepagents", True)}
    for result in results:
        assert result["errors"] == 0, result
        assert result["increments"] == result["threads"] * result["processes"] * 4
        if result["cas"]:
            assert result["final"] == result["increments"], result
