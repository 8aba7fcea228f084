"""Blind writes and batches (issue 21 item 9): Deep Agents' protocol and
docs/INTEGRATIONS.md say a ``write`` without a prior read replaces the file; W threads
(in one process each of P processes) write the same file without reading it, each
through its own backend (so no read is tracked), and every write must land: 0 conflict
errors (before: 48 and 41 of 200). Then EngramStore batches with one invalid op must be
refused whole, before any op ran.

    python bench/reliability/blind_writes.py --backend both --threads 8 --times 25
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from engram import FakeHashEmbedder, Memory, Settings

NAMESPACE = ("agents", "helper", "files")


def _open(url: str) -> Memory:
    return Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False, record_recalls=False))


def blind(url: str, threads: int, times: int) -> dict[str, Any]:
    from engram.integrations.deepagents import EngramBackend

    errors: list[str] = []
    with _open(url) as memory:
        def write(number: int) -> None:
            backend = EngramBackend(memory, namespace=NAMESPACE)  # its own tracker: it never read the file
            for i in range(times):
                result = backend.write("/shared.md", f"writer {number} write {i}\n")
                if result.error:
                    errors.append(result.error)

        pool = [threading.Thread(target=write, args=(n,)) for n in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        final = EngramBackend(memory, namespace=NAMESPACE).read_text("/shared.md") or ""
        versions = len(memory.history(memory.list(memory_scope(), kinds=["file"]).items[0].id, memory_scope()))
    return {"writes": threads * times, "errors": len(errors), "first_error": errors[0] if errors else None,
            "versions": versions, "final_is_a_write": final.startswith("writer ")}


def memory_scope():
    from engram import Scope

    return Scope("default", NAMESPACE)


def batches(url: str, rounds: int) -> dict[str, Any]:
    from langgraph.store.base import PutOp

    from engram import EngramError
    from engram.integrations.langgraph import EngramStore

    applied_before_refusal = refused = 0
    with _open(url) as memory:
        store = EngramStore(memory)
        for i in range(rounds):
            ops = [PutOp(("batch", f"r{i}"), "first", {"ok": True}),
                   PutOp(("batch", f"r{i}"), "bad", {"nan": float("nan")}),  # not JSON: refused
                   PutOp(("batch", f"r{i}"), "last", {"ok": True})]
            try:
                store.batch(ops)
            except (EngramError, ValueError):
                refused += 1
            applied_before_refusal += store.get(("batch", f"r{i}"), "first") is not None
    return {"batches": rounds, "refused": refused, "applied_before_refusal": applied_before_refusal}


def run(backend: str, *, threads: int = 8, times: int = 25, pg_url: str | None = None) -> dict[str, Any]:
    target = _common.new_target(backend, pg_url=pg_url)
    try:
        written = blind(target.url, threads, times)
        batched = batches(target.url, 20)
    finally:
        target.close()
    return {"backend": backend, **written, **batched,
            "ok": written["errors"] == 0 and batched["refused"] == batched["batches"]
            and batched["applied_before_refusal"] == 0}


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--times", type=int, default=25)
    args = parser.parse_args()
    results = [run(b, threads=args.threads, times=args.times, pg_url=args.pg_url) for b in _common.backends_of(args)]
    return _common.report("blind_writes", results, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
