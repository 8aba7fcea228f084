"""Database files as they are found (issue 21 item 8), SQLite:

- a database on a read-only mount (closed cleanly, or copied with its -wal and -shm while
  open) must open read-only and serve every read, and refuse writes typed;
- an empty (0-byte) file must be refused typed and left empty;
- a damaged file (b-tree pages scribbled over at random places) must be refused typed
  and never written (its bytes unchanged);
- several processes opening a store whose terms came from another tokenizer must
  rebuild them once (one reindex version per record).

A read-only mount is simulated with file modes; as root (which ignores them) the reader
runs under ``setpriv`` without the capabilities that let root write anyway.

    python bench/reliability/files_check.py --rounds 10
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from engram import EngramError, FakeHashEmbedder, Memory, Operation, Scope, Settings

ANA = Scope.for_user("acme", "ana")
READS = """
import json, sys
from engram import Memory, FakeHashEmbedder, Settings, Scope, ReadOnlyStoreError
s = Scope.for_user("acme", "ana")
out = {}
with Memory.open(sys.argv[1], embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False)) as m:
    record = m.list(s).items[0]
    for name, call in [("list", lambda: m.list(s)), ("get", lambda: m.get(record.id, s)),
                       ("search", lambda: m.search("tea", s)), ("context", lambda: m.context("tea", s).text),
                       ("recall", lambda: m.recall("tea", s).hits), ("history", lambda: m.history(record.id, s)),
                       ("threads", lambda: m.threads.search("tea", s)), ("stats", lambda: m.stats("acme")),
                       ("audit", lambda: m.audit.list(s))]:
        try:
            out[name] = bool(call())
        except Exception as exc:
            out[name] = f"{type(exc).__name__}: {exc}"
    try:
        m.remember("more", s)
        out["write"] = "written"
    except ReadOnlyStoreError:
        out["write"] = "refused"
print(json.dumps(out))
"""
OPEN_WITH_JIEBA = """
import sys
from engram import Memory, FakeHashEmbedder, Settings
settings = Settings(auto_worker=False, cjk_tokenizer="jieba")
with Memory.open(sys.argv[1], embedder=FakeHashEmbedder(), settings=settings) as m:
    print(m.terms_rebuilt)
"""


def _open(path: Path, **settings: Any) -> Memory:
    return Memory.open(str(path), embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False, **settings))


def without_write_permission(code: str, *args: str) -> subprocess.CompletedProcess | None:
    """Python run as a process that may not write the files; None where that cannot be
    arranged (root without setpriv)."""
    command = [_common.PYTHON, "-c", code, *args]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            return None
        drop = "-dac_override,-dac_read_search"
        command = [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", "--", *command]
    return subprocess.run(command, capture_output=True, text=True, env=_common.engram_env(), timeout=300)


def _store(path: Path) -> None:
    with _open(path) as memory:
        memory.remember("Ana likes tea with lemon", ANA)
        memory.add([{"role": "user", "content": "I drink tea every morning"}], ANA)


def read_only_mount(workdir: Path, left: str) -> dict[str, Any]:
    """The answers of every read (True) and of a write ("refused") on a read-only copy."""
    source, mount = workdir / f"source-{left}", workdir / f"mount-{left}"
    source.mkdir()
    mount.mkdir()
    _store(source / "m.db")
    if left == "clean":
        shutil.copy(source / "m.db", mount / "m.db")
    else:  # copied while a process has it open: its WAL holds what the file does not yet
        with _open(source / "m.db") as memory:
            memory.remember("Ana also likes tea in the afternoon", ANA)
            for suffix in ("", "-wal", "-shm"):
                shutil.copy(f"{source}/m.db{suffix}", f"{mount}/m.db{suffix}")
    for item in mount.iterdir():
        item.chmod(0o444)
    mount.chmod(0o555)
    try:
        done = without_write_permission(READS, str(mount / "m.db"))
    finally:
        mount.chmod(0o755)
    if done is None:
        return {"skipped": "cannot drop root's power to write"}
    if done.returncode != 0:
        return {"open": done.stderr.strip().splitlines()[-1][:200]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def empty_file(workdir: Path) -> dict[str, Any]:
    path = workdir / "empty.db"
    path.touch()
    try:
        _open(path).close()
        refused = None
    except EngramError as exc:
        refused = type(exc).__name__
    return {"refused": refused, "bytes_after": path.stat().st_size}


def damaged_file(workdir: Path, rng: random.Random) -> dict[str, Any]:
    path = workdir / f"damaged-{rng.random():.6f}.db"
    with _open(path) as memory:
        memory.remember_many([f"note number {i} about tea and lemons" for i in range(300)], ANA)
    data = bytearray(path.read_bytes())
    page = 8192
    for _ in range(rng.randint(1, 4)):  # a few pages past the schema, scribbled over
        start = rng.randrange(2, len(data) // page) * page
        length = rng.randint(16, 2000)
        data[start + 8: start + 8 + length] = rng.randbytes(length)
    path.write_bytes(bytes(data))
    copy = path.with_suffix(".copy")  # what SQLite itself finds, on a copy (a free page can be hit too)
    shutil.copy(path, copy)
    try:
        with sqlite3.connect(copy) as check:
            found = [row[0] for row in check.execute("PRAGMA quick_check")]
    except sqlite3.DatabaseError as exc:
        found = [str(exc)]
    copy.unlink()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    try:
        with _open(path) as memory:
            memory.remember("written into a damaged file", ANA)
        outcome = "written"
    except EngramError as exc:
        outcome = type(exc).__name__
    return {"outcome": outcome, "damaged": found != ["ok"],
            "unchanged": hashlib.sha256(path.read_bytes()).hexdigest() == before}


def stale_terms(workdir: Path, processes: int, records: int) -> dict[str, Any]:
    path = workdir / f"stale-{processes}.db"
    with _open(path, cjk_tokenizer="bigram") as memory:
        ids = [r.id for r in memory.remember_many([f"用户喜欢喝第{i}种乌龙茶" for i in range(records)], ANA)]
    def opener() -> subprocess.Popen:
        return subprocess.Popen([_common.PYTHON, "-c", OPEN_WITH_JIEBA, str(path)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=_common.engram_env())

    openers = [opener()]
    # the others open while the first is rebuilding (its first reindex rows are committed)
    deadline = time.monotonic() + 300
    while openers[0].poll() is None and time.monotonic() < deadline:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as look:
            if look.execute("SELECT count(*) FROM audit_log WHERE operation = 'reindex'").fetchone()[0]:
                break
        time.sleep(0.02)
    openers += [opener() for _ in range(processes - 1)]
    rebuilt, failed = [], []
    for opener in openers:
        out, err = opener.communicate(timeout=900)
        if opener.returncode:
            failed.append(err.strip().splitlines()[-1][:200] if err.strip() else str(opener.returncode))
        else:
            rebuilt.append(int(out.strip().splitlines()[-1]))
    with _open(path, cjk_tokenizer="jieba") as memory:
        versions = [sum(v.operation is Operation.REINDEX for v in memory.history(i, ANA)) for i in ids]
    return {"processes": processes, "rebuilt_by_each": sorted(rebuilt), "failed": failed,
            "reindex_versions": sum(versions), "records": records, "stale_left": memory.terms_rebuilt}


def run(backend: str = "sqlite", *, rounds: int = 3, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    workdir = Path(tempfile.mkdtemp(prefix="engram-rel-files-"))
    try:
        mounts = {left: read_only_mount(workdir, left) for left in ("clean", "wal")}
        reads_failed = sum(1 for answers in mounts.values() for name, ok in answers.items()
                           if name not in ("write", "skipped") and ok is not True)
        writes = sum(1 for answers in mounts.values() if answers.get("write") == "written")
        empty = empty_file(workdir)
        damaged = [damaged_file(workdir, rng) for _ in range(rounds)]
        stale = stale_terms(workdir, 3, 3000)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    damaged_written = sum(d["damaged"] and (d["outcome"] == "written" or not d["unchanged"]) for d in damaged)
    return {"backend": "sqlite", "read_only_reads_failed": reads_failed, "read_only_writes_accepted": writes,
            "read_only": mounts, "empty_refused": empty["refused"], "empty_bytes_after": empty["bytes_after"],
            "damaged_files": sum(d["damaged"] for d in damaged), "damaged_written": damaged_written,
            "damaged_outcomes": sorted({d["outcome"] for d in damaged}), "stale_terms": stale,
            "ok": not reads_failed and not writes and empty["refused"] is not None and not empty["bytes_after"]
            and not damaged_written and stale["reindex_versions"] == stale["records"] and not stale["failed"]}


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    return _common.report("files_check", [run(rounds=args.rounds, seed=args.seed)], args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
