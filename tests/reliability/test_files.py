"""Issue 21 item 8: database files as they are found (bench/reliability/files_check.py).
A database on a read-only mount opens read-only and serves every read (closed cleanly, or
with its -wal and -shm); an empty (0-byte) or damaged file is refused with a typed error
and never written; several processes opening a store whose terms are stale rebuild them
once."""

from __future__ import annotations

import random

import files_check
import pytest


@pytest.mark.parametrize("left", ["clean", "wal"])
def test_a_database_on_a_read_only_mount_serves_every_read(tmp_path, left):
    answers = files_check.read_only_mount(tmp_path, left)
    if "skipped" in answers:
        pytest.skip(answers["skipped"])
    assert answers.pop("write", None) == "refused", answers
    assert answers and answers == dict.fromkeys(answers, True), answers


def test_an_empty_file_is_refused_and_never_written(tmp_path):
    assert files_check.empty_file(tmp_path) == {"refused": "NotAnEngramDatabaseError", "bytes_after": 0}


def test_a_damaged_file_is_refused_and_never_written(tmp_path):
    rng = random.Random(3)
    outcomes = [files_check.damaged_file(tmp_path, rng) for _ in range(4)]
    damaged = [o for o in outcomes if o["damaged"]]
    assert damaged, outcomes
    assert all(o["outcome"] == "CorruptDatabaseError" and o["unchanged"] for o in damaged), damaged


def test_processes_opening_a_store_with_stale_terms_rebuild_them_once(tmp_path):
    result = files_check.stale_terms(tmp_path, processes=3, records=3000)
    assert not result["failed"], result
    assert result["reindex_versions"] == result["records"] and result["stale_left"] == 0, result
    assert sum(result["rebuilt_by_each"]) == result["records"], result
