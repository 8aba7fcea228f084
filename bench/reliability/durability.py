"""kill -9 durability: N writer and M reader processes on one database, all killed with
SIGKILL at a random moment, R rounds on the same database. After each round every write
a writer saw acknowledged (its id and version, logged with fsync after the call returned)
must be present at that version or later, the database must pass its integrity check,
and every record must have its versions and audit rows.

    python bench/reliability/durability.py --backend both --rounds 10 --writers 4 --readers 1
    python bench/reliability/durability.py --backend sqlite --rounds 1 --writers 2 --readers 1 --seconds 1

Readers fail the run if a read raises anything (a reader killed mid-read is not a failure).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from engram import FakeHashEmbedder, Memory, Scope, Settings

TENANT = "durable"


def _open(url: str) -> Memory:
    return Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False, record_recalls=False))


def _ack(log, *fields: Any) -> None:
    log.write(json.dumps(fields) + "\n")
    log.flush()
    os.fsync(log.fileno())


def writer(url: str, ack_path: str, seed: int) -> None:
    """Write forever: single records, batches, compare-and-swap updates and forgets."""
    rng = random.Random(seed)
    scope = Scope(TENANT, ("users", f"w{seed}"))
    mine: list[tuple[str, int]] = []
    with _open(url) as memory, open(ack_path, "a", encoding="utf-8") as log:
        step = 0
        while True:
            step += 1
            roll = rng.random()
            if roll < 0.5 or not mine:
                record = memory.remember(f"writer {seed} fact {step} about tea and rivers", scope,
                                         metadata={"step": step})
                mine.append((record.id, record.version))
                _ack(log, record.id, record.version, step)
            elif roll < 0.7:
                records = memory.remember_many([f"writer {seed} batch {step} item {i}" for i in range(5)], scope)
                for record in records:
                    mine.append((record.id, record.version))
                    _ack(log, record.id, record.version, step)
            elif roll < 0.95:
                index = rng.randrange(len(mine))
                record_id, version = mine[index]
                updated = memory.update(record_id, scope, expected_version=version, content=f"updated {step}")
                mine[index] = (record_id, updated.version)
                _ack(log, record_id, updated.version, step)
            else:
                record_id, version = mine.pop(rng.randrange(len(mine)))
                forgotten = memory.forget(record_id, scope)
                _ack(log, record_id, forgotten.version, step)


def reader(url: str, error_path: str, seed: int) -> None:
    rng = random.Random(seed)
    root = Scope(TENANT)
    with _open(url) as memory:
        while True:
            try:
                page = memory.list(root, include_descendants=True, limit=50, offset=rng.randrange(0, 200))
                for record in page.items[:5]:
                    memory.get(record.id, record.scope)
                memory.search("tea rivers", root, include_descendants=True, k=10)
            except Exception as exc:  # every failure is the finding
                with open(error_path, "a", encoding="utf-8") as log:
                    log.write(f"{type(exc).__name__}: {exc}\n")


def _spawn(role: str, url: str, path: Path, seed: int) -> subprocess.Popen:
    return subprocess.Popen([_common.PYTHON, __file__, "--role", role, "--url", url, "--path", str(path),
                             "--seed", str(seed)], env=_common.engram_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def _wait_for_first_acks(paths: list[Path], children: list[subprocess.Popen], limit_s: float = 300.0) -> None:
    """Start-up (interpreter, imports, model) is not what the run measures: wait until every
    writer has acknowledged a write, or one has died, or ``limit_s`` passed."""
    def size(path: Path) -> int:
        return path.stat().st_size if path.exists() else 0

    before = [size(path) for path in paths]
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and all(child.poll() is None for child in children):
        if all(size(path) > start for path, start in zip(paths, before)):
            return
        time.sleep(0.05)


def _acked(paths: list[Path]) -> dict[str, int]:
    """The highest acknowledged version of each record (a torn last line is no ack)."""
    out: dict[str, int] = {}
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record_id, version, _ = json.loads(line)
            except ValueError:
                continue
            out[record_id] = max(out.get(record_id, 0), version)
    return out


def _integrity(target: _common.Target, memory: Memory) -> str:
    if target.backend == "sqlite":
        import sqlite3

        with sqlite3.connect(target.url) as conn:
            result = conn.execute("PRAGMA integrity_check").fetchone()[0]
            orphans = conn.execute("SELECT count(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM memory_versions v "
                                   "WHERE v.tenant = m.tenant AND v.record_id = m.id AND v.version = m.version)"
                                   ).fetchone()[0]
        return result if not orphans else f"{orphans} records without their current version"
    schema = target.schema
    orphans = target.admin_sql(
        f'SELECT count(*) FROM "{schema}".memories m WHERE NOT EXISTS (SELECT 1 FROM "{schema}".memory_versions v '
        "WHERE v.tenant_id = m.tenant_id AND v.record_id = m.id AND v.version = m.version)")[0][0]
    return "ok" if not orphans else f"{orphans} records without their current version"


def run(backend: str, *, rounds: int, writers: int, readers: int, seconds: float, pg_url: str | None = None,
        seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    target = _common.new_target(backend, pg_url=pg_url)
    try:
        with _open(target.url):  # create the schema before the children race to
            pass
        acks = [target.workdir / f"acks-{i}.jsonl" for i in range(writers)]
        errors = target.workdir / "reader-errors.txt"
        lost_total, checked_total, problems = 0, 0, []
        for round_number in range(rounds):
            children = [_spawn("writer", target.url, acks[i], 1000 * round_number + i) for i in range(writers)]
            children += [_spawn("reader", target.url, errors, 5000 + 1000 * round_number + i) for i in range(readers)]
            _wait_for_first_acks(acks, children)  # the kill timer starts once every writer is writing
            time.sleep(rng.uniform(seconds * 0.5, seconds * 1.5))
            for child in children:
                os.killpg(child.pid, signal.SIGKILL)
            for child in children:
                child.wait()
            acked = _acked(acks)
            with _open(target.url) as memory:
                present = {r.id: r for r in memory._store.get(TENANT, list(acked))}
                lost = [rid for rid, version in acked.items() if rid not in present or present[rid].version < version]
                integrity = _integrity(target, memory)
            lost_total += len(lost)
            checked_total += len(acked)
            if integrity != "ok":
                problems.append(f"round {round_number}: integrity {integrity}")
        reader_errors = errors.read_text(encoding="utf-8").splitlines() if errors.exists() else []
        return {"backend": backend, "rounds": rounds, "writers": writers, "readers": readers,
                "acknowledged": len(_acked(acks)), "checked": checked_total, "lost": lost_total,
                "integrity_problems": problems, "reader_errors": len(reader_errors),
                "first_reader_error": reader_errors[0] if reader_errors else None,
                "ok": lost_total == 0 and not problems and not reader_errors}
    finally:
        target.close()


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--readers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=3.0, help="mean time before the kill, per round")
    parser.add_argument("--role", choices=("writer", "reader"), help=argparse_hidden())
    parser.add_argument("--url", help=argparse_hidden())
    parser.add_argument("--path", help=argparse_hidden())
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.role == "writer":
        writer(args.url, args.path, args.seed)
        return 0
    if args.role == "reader":
        reader(args.url, args.path, args.seed)
        return 0
    results = [run(b, rounds=args.rounds, writers=args.writers, readers=args.readers, seconds=args.seconds,
                   pg_url=args.pg_url, seed=args.seed) for b in _common.backends_of(args)]
    return _common.report("durability", results, args.json_out)


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    raise SystemExit(main())
