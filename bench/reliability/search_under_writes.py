"""Searches beside writers (issue 21 item 2): W writer processes add, update, forget and
purge records in the scopes a searcher reads, while the searcher runs ``search`` (BM25
and hybrid), ``context`` and ``recall`` in a loop. Every search must answer: before the
statistics and postings were read from one snapshot, 2-5 % of them raised ``math domain
error`` (an HTTP 500).

    python bench/reliability/search_under_writes.py --backend both --searches 1000 --writers 4
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from engram import FakeHashEmbedder, Memory, Scope, Settings

TENANT = "busy"
WORDS = ("tea", "river", "mountain", "piano", "garden", "lantern", "harbour", "violet")
SCOPES = [Scope(TENANT, ("users", name)) for name in ("ana", "ben")]


def _open(url: str) -> Memory:
    return Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False))


def _sentence(rng: random.Random) -> str:
    """Every record holds the first word, as every query does: its document frequency
    equals the document count, where a count read from another moment breaks the IDF."""
    return " ".join([WORDS[0], *(rng.choice(WORDS) for _ in range(rng.randint(0, 5)))])


def writer(url: str, seed: int) -> None:
    """Write until killed: records full of the searched words, then change or drop them."""
    rng = random.Random(seed)
    mine: list[tuple[str, Scope]] = []
    with _open(url) as memory:
        while True:
            scope = rng.choice(SCOPES)
            roll = rng.random()
            if roll < 0.5 or len(mine) < 5:
                batch = memory.remember_many([_sentence(rng) for _ in range(rng.randint(1, 8))], scope)
                mine += [(r.id, scope) for r in batch]
            elif roll < 0.75:
                record_id, where = rng.choice(mine)
                memory.update(record_id, where, content=_sentence(rng))
            elif roll < 0.9:
                record_id, where = mine.pop(rng.randrange(len(mine)))
                memory.forget(record_id, where)
            else:
                record_id, where = mine.pop(rng.randrange(len(mine)))
                memory.purge(record_id, where)


def _spawn(url: str, seed: int) -> subprocess.Popen:
    return subprocess.Popen([_common.PYTHON, __file__, "--role", "writer", "--url", url, "--seed", str(seed)],
                            env=_common.engram_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


def run(backend: str, *, searches: int, writers: int, pg_url: str | None = None, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    target = _common.new_target(backend, pg_url=pg_url)
    children: list[subprocess.Popen] = []
    failures: list[str] = []
    by_verb: dict[str, int] = {}
    try:
        with _open(target.url) as memory:
            for scope in SCOPES:
                memory.remember_many([_sentence(rng) for _ in range(20)], scope)
            children = [_spawn(target.url, seed * 100 + i) for i in range(writers)]
            time.sleep(1.0)  # the writers import and start writing
            started = time.monotonic()
            root = Scope(TENANT, ("users",))
            for step in range(searches):
                query = " ".join([WORDS[0], *rng.sample(WORDS[1:], rng.randint(0, 2))])
                scope = rng.choice(SCOPES)
                verb = ("search-bm25", "search", "context", "recall", "search-subtree")[step % 5]
                try:
                    if verb == "search-bm25":
                        memory.search(query, scope, retriever="bm25")
                    elif verb == "search":
                        memory.search(query, scope)
                    elif verb == "context":
                        memory.context(query, scope)
                    elif verb == "recall":
                        memory.recall(query, scope)
                    else:
                        memory.search(query, root, include_descendants=True)
                    by_verb[verb] = by_verb.get(verb, 0) + 1
                except Exception as exc:  # every failure is the finding
                    failures.append(f"{verb}: {type(exc).__name__}: {exc}")
            seconds = time.monotonic() - started
            dead = [child.poll() for child in children if child.poll() is not None]
            records = memory.stats(TENANT).records
    finally:
        for child in children:
            child.kill()
        writer_errors = [child.stderr.read().decode(errors="replace")[-300:] for child in children
                         if child.wait() not in (0, -9) and child.stderr is not None]
        target.close()
    return {"backend": backend, "searches": searches, "writers": writers, "failed": len(failures),
            "first_failure": failures[0] if failures else None, "by_verb": by_verb,
            "records_at_end": records, "seconds": round(seconds, 1), "writers_died": len(dead),
            "writer_errors": writer_errors[:1],
            "ok": not failures and not dead}


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--searches", type=int, default=1000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--role", choices=("writer",), help=_hidden())
    parser.add_argument("--url", help=_hidden())
    args = parser.parse_args()
    if args.role == "writer":
        writer(args.url, args.seed)
        return 0
    results = [run(b, searches=args.searches, writers=args.writers, pg_url=args.pg_url, seed=args.seed)
               for b in _common.backends_of(args)]
    return _common.report("search_under_writes", results, args.json_out)


def _hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    raise SystemExit(main())
