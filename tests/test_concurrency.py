"""Several processes on one SQLite file: no acknowledged write lost, no lock error.

Bounded by call counts (and a generous time cap); nothing here asserts on speed.
"""

from __future__ import annotations

from engram.benchmark.concurrency import ConcurrencyConfig, run_concurrency


def test_writers_and_readers_share_one_file_without_losing_writes(tmp_path):
    config = ConcurrencyConfig(
        writers=3, readers=3, seconds=120.0, batch=2, users=3, embedder="fake-hash",
        path=str(tmp_path / "shared.db"), max_calls=40,
    )
    result = run_concurrency(config)

    assert result["crashed_processes"] == []
    assert result["missing_reports"] == 0
    assert result["acknowledged_writes"] > 0
    assert result["lost_writes"] == 0
    assert result["wrong_content"] == 0
    assert result["lock_errors"] == 0
    assert result["other_errors"] == 0, result["error_samples"]
    assert result["reads"] > 0


def test_every_acknowledged_write_is_counted(tmp_path):
    config = ConcurrencyConfig(
        writers=2, readers=1, seconds=120.0, batch=3, users=2, embedder="fake-hash",
        path=str(tmp_path / "shared.db"), max_calls=10,
    )
    result = run_concurrency(config)

    # each writer stops after max_calls calls, so all of them were acknowledged
    assert result["acknowledged_writes"] == 2 * 10 * 3
    assert result["write_calls"] == 2 * 10
    assert result["lost_writes"] == 0 and result["lock_errors"] == 0
