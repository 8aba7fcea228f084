"""Lost updates: many threads in several processes increment one counter, through
Memory (update with and without expected_version), EngramStore (put with and without
expected_version) and the Deep Agents backend (edit, a compare-and-swap on the version
read). With compare-and-swap the final count must equal the increments made and no
call may fail for another reason; without it, plain writes must never raise (last
writer wins) and the count shows how many updates a read-modify-write loses.

    python bench/reliability/lost_updates.py --backend both --threads 8 --processes 4 --times 25
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from engram import ConflictError, FakeHashEmbedder, Memory, Scope, Settings

TENANT = "counters"
SCOPE = Scope(TENANT, ("shared",))
VIAS = ("memory", "store", "deepagents")


def _open(url: str) -> Memory:
    return Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False, record_recalls=False))


class Counter:
    """One counter reached through one surface."""

    def __init__(self, memory: Memory, via: str, name: str) -> None:
        self.memory, self.via, self.name = memory, via, name
        if via == "store":
            from engram.integrations.langgraph import EngramStore

            self.store = EngramStore(memory, tenant=TENANT)
        if via == "deepagents":
            from engram.integrations.deepagents import EngramBackend

            self.backend = EngramBackend(memory, namespace=SCOPE.namespace, tenant=TENANT)

    def create(self) -> None:
        if self.via == "memory":
            self.memory.remember("0", SCOPE, metadata={"counter": self.name})
        elif self.via == "store":
            self.store.put(SCOPE.namespace, self.name, {"n": 0})
        else:
            assert self.backend.write(f"/{self.name}.txt", "n=0").error is None

    def value(self) -> int:
        if self.via == "memory":
            return int(self._record().content)
        if self.via == "store":
            item = self.store.get(SCOPE.namespace, self.name)
            assert item is not None
            return int(item.value["n"])
        text = self.backend.read_text(f"/{self.name}.txt") or ""
        return int(text.split("=")[1])

    def _record(self):
        (record,) = self.memory.list(SCOPE, metadata={"counter": self.name}).items
        return record

    def bump(self, cas: bool) -> int:
        """Add one; returns how many conflicts it retried through."""
        retries = 0
        while True:
            try:
                self._bump_once(cas)
                return retries
            except ConflictError:
                if not cas:
                    raise  # a plain write must never fail because of a concurrent writer
                retries += 1

    def _bump_once(self, cas: bool) -> None:
        if self.via == "memory":
            record = self._record()
            version = record.version if cas else None
            self.memory.update(record.id, SCOPE, expected_version=version, content=str(int(record.content) + 1))
        elif self.via == "store":
            item = self.store.get(SCOPE.namespace, self.name)
            assert item is not None
            self.store.put(SCOPE.namespace, self.name, {"n": item.value["n"] + 1},
                           expected_version=item.version if cas else None)
        else:
            path = f"/{self.name}.txt"
            text = self.backend.read_text(path) or ""
            n = int(text.split("=")[1])
            result = self.backend.edit(path, text, f"n={n + 1}")
            if result.error is not None:
                if "changed by another writer" in result.error or "not found" in result.error.lower():
                    raise ConflictError(result.error)
                raise RuntimeError(result.error)


def child(url: str, via: str, name: str, cas: bool, threads: int, times: int) -> dict[str, Any]:
    """One process: ``threads`` threads each bumping ``times`` times."""
    memory = _open(url)
    counter = Counter(memory, via, name)
    retries, errors = [], []

    def work() -> None:
        for _ in range(times):
            try:
                retries.append(counter.bump(cas))
            except Exception as exc:  # the finding
                errors.append(f"{type(exc).__name__}: {exc}")

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    memory.close()
    return {"done": len(retries), "retries": sum(retries), "errors": errors}


def run_one(target: _common.Target, via: str, cas: bool, threads: int, processes: int, times: int) -> dict[str, Any]:
    if via == "deepagents" and not cas:
        return {}
    name = f"{via}-{'cas' if cas else 'plain'}-{threads}x{processes}"
    with _open(target.url) as memory:
        Counter(memory, via, name).create()
    command = [_common.PYTHON, __file__, "--child", "--url", target.url, "--via", via, "--name", name,
               "--threads", str(threads), "--times", str(times)] + (["--cas"] if cas else [])
    children = [subprocess.Popen(command, env=_common.engram_env(), stdout=subprocess.PIPE, text=True)
                for _ in range(processes)]
    outcomes = [json.loads(c.communicate()[0].strip().splitlines()[-1]) for c in children]
    with _open(target.url) as memory:
        final = Counter(memory, via, name).value()
    done = sum(o["done"] for o in outcomes)
    errors = [e for o in outcomes for e in o["errors"]]
    lost = done - final
    ok = not errors and (lost == 0 if cas else True)
    return {"backend": target.backend, "via": via, "cas": cas, "threads": threads, "processes": processes,
            "increments": done, "final": final, "lost": lost, "conflict_retries": sum(o["retries"] for o in outcomes),
            "errors": len(errors), "first_error": errors[0] if errors else None, "ok": ok}


def run(backend: str, *, threads: int, processes: int, times: int, vias=VIAS, pg_url: str | None = None
        ) -> list[dict[str, Any]]:
    target = _common.new_target(backend, pg_url=pg_url)
    try:
        with _open(target.url):
            pass
        results = []
        for via in vias:
            for cas in (True, False):
                for shape in ((threads, 1), (max(1, threads // processes), processes)):
                    result = run_one(target, via, cas, shape[0], shape[1], times)
                    if result:
                        results.append(result)
        return results
    finally:
        target.close()


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--times", type=int, default=25, help="increments per thread")
    parser.add_argument("--via", action="append", choices=VIAS)
    parser.add_argument("--child", action="store_true", help=_hidden())
    parser.add_argument("--url", help=_hidden())
    parser.add_argument("--name", help=_hidden())
    parser.add_argument("--cas", action="store_true", help=_hidden())
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.url, args.via[0], args.name, args.cas, args.threads, args.times)))
        return 0
    results = [r for b in _common.backends_of(args)
               for r in run(b, threads=args.threads, processes=args.processes, times=args.times,
                            vias=tuple(args.via or VIAS), pg_url=args.pg_url)]
    return _common.report("lost_updates", results, args.json_out)


def _hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    raise SystemExit(main())
