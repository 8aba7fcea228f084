"""After ``purge_scope``, nothing of the user (issue 21 item 1). Each user gets distinctive
words, numbers and a label planted everywhere engram keeps something: content, tags,
category, metadata keys and values, update and forget reasons, kept conversations (turns,
thread ids, message ids, thread metadata), a queued background job, a pending change an
approval rule holds, a recall with its thread and answer ids, a write sample with a
review note. Half of the users are purged; then

- the queued jobs are drained, the pending changes approved and consolidation run: none
  may re-create anything in a purged scope (``resurrected``);
- the database files are searched byte for byte (SQLite: the file, ``-wal``, ``-shm``;
  PostgreSQL: the data directory after the documented ``store.vacuum(full=True)`` and a
  CHECKPOINT, ``pg_wal`` counted apart): no planted value of a purged user may be there
  (``found``), every kept user's content must still be (``kept_missing``: the scan sees);
- SQLite: a purge beside a reader holding a transaction returns within the busy timeout
  and says the WAL could not be emptied yet; once the reader ends, maintenance empties it.

    python bench/reliability/purge_scan.py --backend both --users 20
"""

from __future__ import annotations

import random
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from pii_scan import scan

from engram import FakeHashEmbedder, Memory, PendingApprovalError, Scope, Settings
from engram.approval_rules import ApprovalRule, ApprovalRules
from engram.model import Message, Source

TENANT = "forget"
RULES = ApprovalRules((ApprovalRule("gated", categories=("gated",)),))


def _open(url: str, **settings: Any) -> Memory:
    return Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False, **settings),
                       approvals=RULES)


def _word(rng: random.Random, prefix: str) -> str:
    """Letters only, so no PII detector takes it for a number and masks it away."""
    return prefix + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(10))


def _number(rng: random.Random) -> str:
    return "".join(rng.choice("23456789") for _ in range(7))


def plant(memory: Memory, scope: Scope, rng: random.Random) -> dict[str, str]:
    """Everything one user leaves in the store; {where: planted value}."""
    w = {where: _word(rng, "q") for where in (
        "content", "tag", "category", "meta_key", "meta_value", "update_reason", "forget_reason", "turn",
        "thread", "message_id", "thread_meta", "job_turn", "pending", "answer_id", "review_note", "recall_thread")}
    w["number"] = _number(rng)
    w["label"] = scope.namespace[-1]
    record = memory.remember(f"{w['content']} keeps {w['number']} apples", scope, tags=[w["tag"]],
                             category=w["category"], metadata={w["meta_key"]: w["meta_value"]},
                             source=Source(thread_id=w["thread"]))
    memory.update(record.id, scope, importance=0.7, reason=w["update_reason"])
    other = memory.remember(f"{w['content']} also likes pears", scope)
    memory.forget(other.id, scope, reason=w["forget_reason"])
    memory.add([Message("user", f"I live in {w['turn']}", id=w["message_id"])], scope, thread_id=w["thread"])
    memory.threads.record([Message("user", "and the weather is fine")], scope, thread_id=w["thread"],
                          metadata={"topic": w["thread_meta"]})
    memory.add([Message("user", f"I live in {w['job_turn']}")], scope, background=True)
    try:
        memory.remember(f"{w['pending']} is a gated fact", scope, category="gated")
    except PendingApprovalError:
        pass
    block = memory.context(f"{w['content']} apples", scope, thread_id=w["recall_thread"], answer_id=w["answer_id"])
    if block.recall_id:
        memory.audit.link_answer(block.recall_id, scope, answer_id=w["answer_id"] + "x", used=[record.id])
    for sample in memory.quality.sample(scope, n=5, seed=1):
        memory.quality.mark(sample.id, scope, "correct", reviewer="rita", note=w["review_note"])
    return w


def _files(target: _common.Target) -> tuple[list[Path], list[Path]]:
    """(database files, write-ahead log files) to scan."""
    files = list(target.files())
    wal = [p for p in files if "pg_wal" in p.parts]
    return [p for p in files if p not in wal and p.name != "log"], wal


def try_to_resurrect(memory: Memory, purged: list[Scope]) -> int:
    """Drain the jobs, approve every pending change, consolidate: records now in purged scopes."""
    memory.jobs.drain()
    for scope in purged:
        for pending in memory.approvals.list(scope, status=None):
            try:
                memory.approvals.approve(pending.id, scope, reviewer="rita")
            except Exception:  # refused: what must happen
                pass
    memory.consolidation.run(tenant=TENANT)
    memory.jobs.drain()
    return sum(len(memory.list(scope, include_descendants=True, statuses=None).items) for scope in purged) + sum(
        len(memory.threads.list(scope, include_descendants=True)) for scope in purged)


def blocked_by_a_reader(target: _common.Target, rng: random.Random, busy_timeout_ms: int = 500) -> dict[str, Any]:
    """SQLite: a purge beside a reader that holds a read transaction open."""
    scope = Scope(TENANT, ("users", _word(rng, "r")))
    with _open(target.url, busy_timeout_ms=busy_timeout_ms) as memory:
        memory.remember("a record to purge beside a reader", scope)
        reader = sqlite3.connect(target.url)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM memories").fetchone()
        released = threading.Timer(120, reader.interrupt)  # never hang the run on an old build
        released.start()
        started = time.monotonic()
        report = memory.purge_scope(scope)
        waited = time.monotonic() - started
        reader.rollback()
        reader.close()
        released.cancel()
        memory.maintenance.run()
        erase = getattr(memory._store, "erase_traces", None)  # absent before issue 21: it said nothing
        after = erase() if erase is not None else None
    return {"busy_timeout_s": busy_timeout_ms / 1000, "purge_waited_s": round(waited, 2),
            "said": getattr(report, "residue", None), "after_reader_ended": after}


def run(backend: str, *, users: int = 4, pg_url: str | None = None, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    target = _common.new_target(backend, pg_url=pg_url)
    try:
        scopes = [Scope(TENANT, ("users", _word(rng, "u"))) for _ in range(max(2, users))]
        with _open(target.url) as memory:
            planted = {scope: plant(memory, scope, rng) for scope in scopes}
            purged, kept = scopes[::2], scopes[1::2]
            reports = [memory.purge_scope(scope, reason="erasure request") for scope in purged]
            resurrected = try_to_resurrect(memory, purged)
            if backend == "postgres":
                memory._store.vacuum(full=True)  # type: ignore[attr-defined]  # the documented step
        if backend == "postgres":
            if target.pgdata is None:
                return {"backend": backend, "skipped": "an external server: its files are not ours to scan",
                        "ok": True}
            target.admin_sql("CHECKPOINT")
        files, wal = _files(target)
        gone = [value for scope in purged for value in planted[scope].values()]
        found = scan(files, gone)
        places = sorted({where for scope in purged for where, value in planted[scope].items() if value in found})
        kept_missing = [s for s in kept if planted[s]["content"] not in scan(files, [planted[s]["content"]])]
        result: dict[str, Any] = {
            "backend": backend, "users_purged": len(purged), "values_planted": len(gone),
            "files_scanned": len(files), "found": len(found), "found_where": places,
            "in_wal": len(scan(wal, gone)), "resurrected": resurrected, "kept_missing": len(kept_missing),
            "purge_residue": getattr(reports[0], "residue", None),
        }
        if backend == "sqlite":
            result["reader"] = blocked_by_a_reader(target, rng)
        reader_ok = backend != "sqlite" or (result["reader"]["said"] is not None
                                            and result["reader"]["after_reader_ended"] is None)
        result["ok"] = not found and not resurrected and not kept_missing and reader_ok
        return result
    finally:
        target.close()


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    results = [run(b, users=args.users, pg_url=args.pg_url, seed=args.seed) for b in _common.backends_of(args)]
    return _common.report("purge_scan", results, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
