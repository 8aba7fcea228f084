"""Planted-PII byte scan: personal data is written under each action of the PII policy
(mask, encrypt, forbid) through remember, update, add() and a background job, then the
database is closed and its files are searched byte for byte for the planted values
(SQLite: the file, its -wal and -shm; PostgreSQL: every file of the data directory this
run started, after a CHECKPOINT). A masked, encrypted or forbidden value found anywhere
is a leak. Values stored in the clear and then purged are counted apart ("purged"):
whether a purge leaves them in the files is issue 11 item 3.

    python bench/reliability/pii_scan.py --backend both --records 200
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from engram import FakeHashEmbedder, Memory, PIIForbiddenError, PIIPolicies, Scope, Settings
from engram.model import Message, Source

POLICY = {
    "default": {"default": "mask"},
    "tenants": {
        "masked": {"default": "mask", "actions": {"email": "mask", "phone": "mask"}},
        "encrypted": {"default": "encrypt", "actions": {"email": "encrypt", "phone": "encrypt"}},
        "forbidden": {"default": "forbid", "actions": {"email": "forbid", "phone": "forbid"}},
        "clear": {"default": "allow", "actions": {"email": "allow", "phone": "allow", "secret": "allow"}},
    },
}
TEST_KEY = "Q0xFQVItVEVYVC1LRVktRk9SLVRIRS1QSUktU0NBTi0="  # a Fernet key made for this scan only


def _open(url: str, policies: PIIPolicies) -> Memory:
    return Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False),
                       pii=policies)


def _values(rng: random.Random) -> tuple[str, str]:
    phone = "1" + rng.choice("3578") + "".join(rng.choice("0123456789") for _ in range(9))
    email = "pz" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10)) + "@example.com"
    return phone, email


def plant(memory: Memory, tenant: str, records: int, rng: random.Random) -> list[str]:
    """Write ``records`` pieces of personal data for ``tenant`` every way there is; the planted values."""
    planted: list[str] = []
    scope = Scope(tenant, ("users", "ana"))
    for i in range(records):
        phone, email = _values(rng)
        planted += [phone, email]
        way = i % 4
        try:
            if way == 0:
                memory.remember(f"Ana's phone number is {phone} and her email is {email}", scope)
            elif way == 1:
                record = memory.remember(f"Ana's contact note {i}", scope)
                memory.update(record.id, scope, content=f"Ana can be reached at {email} or {phone}")
            elif way == 2:
                memory.add([Message("user", f"Remember that my email is {email}", id=f"m{i}")], scope, force=True)
            else:
                memory.add([Message("user", f"Remember that my email is {email}", id=f"m{i}")], scope, force=True,
                           background=True)
        except PIIForbiddenError:
            continue
    memory.jobs.drain()
    return planted


def plant_side_fields(memory: Memory, tenant: str, rng: random.Random) -> list[str]:
    """Personal data in every field around the content (issue 21 item 4): tags,
    category, metadata keys and values (and a phone number given as a number), source
    actor, thread and message ids, update and forget reasons, approval and review notes,
    kept turns' ids and metadata, thread metadata, recall thread and answer ids."""
    values = [_values(rng)[i % 2] for i in range(20)]
    number = int(_values(rng)[0])
    it = iter(values)
    scope = Scope(tenant, ("users", "bo"))
    record = memory.remember("Bo keeps a plain note", scope, tags=[f"tag {next(it)}"], category=f"cat {next(it)}",
                             metadata={f"key {next(it)}": f"value {next(it)}", "number": number},
                             source=Source(actor=f"agent {next(it)}", thread_id=f"th-{next(it)}",
                                           message_id=f"msg-{next(it)}"))
    memory.update(record.id, scope, importance=0.9, reason=f"asked by {next(it)}")
    other = memory.remember("Bo keeps another note", scope)
    memory.forget(other.id, scope, reason=f"asked by {next(it)}")
    memory.threads.record([Message("user", "a plain turn", id=f"turn-{next(it)}")], scope, thread_id=f"t-{next(it)}",
                          metadata={"contact": next(it)})
    block = memory.context("plain note", scope, thread_id=f"ctx-{next(it)}", answer_id=f"ans-{next(it)}")
    if block.recall_id:
        memory.audit.link_answer(block.recall_id, scope, answer_id=f"ans2-{next(it)}", used=[record.id])
    for sample in memory.quality.sample(scope, n=3, seed=1):
        memory.quality.mark(sample.id, scope, "correct", reviewer="rita", note=f"checked with {next(it)}")
    return [*(v for v in values if v not in set(it)), str(number)]


def scan(files: list[Path], values: list[str]) -> dict[str, list[str]]:
    """For each value: the files that hold its bytes."""
    found: dict[str, list[str]] = {}
    needles = {value: value.encode("utf-8") for value in values}
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        for value, needle in needles.items():
            if needle in data:
                found.setdefault(value, []).append(path.name)
    return found


def run(backend: str, *, records: int = 40, pg_url: str | None = None, seed: int = 0) -> dict[str, Any]:
    import os

    os.environ.setdefault("ENGRAM_ENCRYPTION_KEY", TEST_KEY)
    rng = random.Random(seed)
    target = _common.new_target(backend, pg_url=pg_url)
    policies = PIIPolicies.load(json.dumps(POLICY))
    try:
        planted: dict[str, list[str]] = {}
        with _open(target.url, policies) as memory:
            for tenant in ("masked", "encrypted", "forbidden"):
                planted[tenant] = plant(memory, tenant, records, rng)
            planted["purged"] = plant(memory, "clear", max(4, records // 4), rng)
            planted["side"] = [value for tenant in ("masked", "encrypted") for _ in range(max(1, records // 40))
                               for value in plant_side_fields(memory, tenant, rng)]
            memory.purge_scope(Scope("clear"))
            stored_clear = sum(1 for _ in memory.scan(Scope("clear"), include_descendants=True, statuses=None))
            if target.backend == "postgres":  # the documented step after a purge (docs/POSTGRES.md)
                memory._store.vacuum(full=True)  # type: ignore[attr-defined]
        if target.backend == "postgres":
            if target.pgdata is None:
                return {"backend": backend, "skipped": "an external server: its files are not ours to scan",
                        "ok": True}
            target.admin_sql("CHECKPOINT")
        files = list(target.files())
        wal = [path for path in files if "pg_wal" in path.parts]
        # masked, encrypted and forbidden values: nowhere, WAL included; purged ones: not in the
        # database files (PostgreSQL's WAL keeps them until recycled; counted apart)
        leaks = {tenant: scan(files if tenant != "purged" else [p for p in files if p not in wal], values)
                 for tenant, values in planted.items()}
        purged_in_wal = len(scan(wal, planted["purged"]))
        counts = {tenant: len(found) for tenant, found in leaks.items()}
        first = next(((tenant, value, where) for tenant, found in leaks.items() if tenant != "purged"
                      for value, where in found.items()), None)
        return {"backend": backend, "planted": {t: len(v) for t, v in planted.items()},
                "files_scanned": len(files), "bytes_scanned": sum(p.stat().st_size for p in files if p.exists()),
                "found": counts, "purged_in_wal": purged_in_wal, "first_leak": first, "purged_left_in_db": stored_clear,
                "ok": all(count == 0 for tenant, count in counts.items() if tenant != "purged")
                and stored_clear == 0}
    finally:
        target.close()


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--records", type=int, default=200, help="records planted per policy")
    args = parser.parse_args()
    results = [run(b, records=args.records, pg_url=args.pg_url) for b in _common.backends_of(args)]
    return _common.report("pii_scan", results, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
