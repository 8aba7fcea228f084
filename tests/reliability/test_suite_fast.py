"""Fast runs of the reliability suite (bench/reliability, docs/RELIABILITY.md): the
same scripts as the long runs, with small sizes, on both backends."""

from __future__ import annotations

import durability
import http_fuzz
import llm_faults
import lost_updates
import pii_scan
import pytest
import stateful_model
import tenant_attack


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


def test_no_cross_tenant_leak_through_any_surface(backend_name):
    result = tenant_attack.run(backend_name, rounds=1, side_documents=5)
    assert result["attempts"] > 300
    assert (result["leaks"], result["server_errors"], result["victim_records_changed"]) == (0, 0, 0), result


def test_masked_encrypted_and_forbidden_pii_never_reaches_the_database_files(backend_name):
    result = pii_scan.run(backend_name, records=8)
    if "skipped" in result:
        pytest.skip(result["skipped"])
    assert result["files_scanned"] > 0 and result["planted"]["masked"] == 16
    assert {k: v for k, v in result["found"].items() if k != "purged"} == {
        "masked": 0, "encrypted": 0, "forbidden": 0, "side": 0}, result["first_leak"]
    assert result["planted"]["side"] >= 30
    assert result["purged_left_in_db"] == 0


def test_http_fuzzing_and_hostile_bodies_get_no_5xx(backend_name):
    result = http_fuzz.run(backend_name, examples=3)
    assert result["operations"] >= 30 and result["hostile"] >= 60
    assert result["status_5xx"] == 0 and result["ok"], result["failures"]


def test_the_store_behaves_like_its_in_memory_model(backend_name):
    result = stateful_model.run(backend_name, examples=8, steps=15)
    assert result["divergences"] == 0, result["divergence"]


def test_llm_faults_end_within_the_add_budget_and_are_never_silent(backend_name):
    rows = llm_faults.run(backend_name, repeat=1, call_deadline=0.5, add_deadline=1.0)
    assert {row["fault"] for row in rows} == set(llm_faults.FAULTS)
    for row in rows:  # the seconds are the long run's figure; here: never silent, nothing stored by a fault
        assert row["events"] and all(": " in event for event in row["events"]), row
        if row["fault"].startswith("valid"):
            assert row["stored"] == 1 and row["job"] == "done", row
        else:
            assert row["stored"] == 0 and all(e.startswith("SKIPPED") for e in row["events"]), row
    drip = next(row for row in rows if row["fault"] == "slow drip")
    assert drip["events"][0].startswith("SKIPPED: extraction failed") and drip["job"] == "queued"
