"""Run LangGraph's own store tests against EngramStore (issue 11, item 10).

LangGraph's test files construct ``InMemoryStore(...)`` and ``SqliteStore.from_conn_string(...)``;
this runner copies them into a scratch directory next to a conftest that makes both names
build an EngramStore over a fresh engram database (a SQLite file, or a fresh schema on the
PostgreSQL server given by ``--postgres``), runs pytest on them and prints the counts.

    python bench/reliability/langgraph_contract.py --langgraph /path/to/langgraph/checkout
    python bench/reliability/langgraph_contract.py --langgraph … --postgres postgresql://…/db

Get the checkout with ``git clone https://github.com/langchain-ai/langgraph``. Differences
that are by design (engram embeds with its own embedder, so scores from LangGraph's fake
character embeddings differ; SqliteStore internals) are listed in docs/RELIABILITY.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TEST_FILES = (
    "libs/checkpoint/tests/test_store.py",
    "libs/checkpoint-sqlite/tests/test_store.py",
    "libs/checkpoint-sqlite/tests/test_ttl.py",
)
SUPPORT = {"tests/embed_test_utils.py": "libs/checkpoint/tests/embed_test_utils.py", "tests/__init__.py": None}

CONFTEST = '''
"""Make LangGraph's reference stores build EngramStores (see langgraph_contract.py)."""
import os
import tempfile
import uuid
from contextlib import contextmanager

import asyncio
from contextlib import asynccontextmanager

import langgraph.store.memory
import langgraph.store.sqlite
import langgraph.store.sqlite.aio

from engram import FakeHashEmbedder, Memory, Settings
from engram.integrations.langgraph import EngramStore
from engram.store import open_store

POSTGRES = os.environ.get("ENGRAM_CONTRACT_POSTGRES")
OPENED = []


def _target():
    if POSTGRES:
        schema = "lg_" + uuid.uuid4().hex[:12]
        joiner = "&" if "?" in POSTGRES else "?"
        return f"{POSTGRES}{joiner}engram_schema={schema}"
    return os.path.join(tempfile.mkdtemp(), "memory.db")


class EngramAsReference(EngramStore):
    def __init__(self, *, index=None, ttl=None, **_ignored):
        memory = Memory(open_store(_target()), embedder=FakeHashEmbedder(),
                        settings=Settings(auto_worker=False, record_recalls=False))
        OPENED.append(memory)
        super().__init__(memory, tenant="contract", index=index, ttl=ttl)

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string, *, index=None, ttl=None, **_ignored):
        yield cls(index=index, ttl=ttl)

    def setup(self):
        return None


class AsyncEngramAsReference(EngramAsReference):
    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string, *, index=None, ttl=None, **_ignored):
        yield cls(index=index, ttl=ttl)

    async def setup(self):
        return None

    async def start_ttl_sweeper(self, sweep_interval_minutes=None):
        thread = EngramStore.start_ttl_sweeper(self, sweep_interval_minutes)
        return asyncio.get_running_loop().create_future() if thread is None else _done_future()

    async def sweep_ttl(self):
        return await asyncio.to_thread(EngramStore.sweep_ttl, self)

    async def stop_ttl_sweeper(self, timeout=None):
        return await asyncio.to_thread(EngramStore.stop_ttl_sweeper, self, timeout)


def _done_future():
    future = asyncio.get_running_loop().create_future()
    future.set_result(None)
    return future


langgraph.store.memory.InMemoryStore = EngramAsReference
langgraph.store.sqlite.SqliteStore = EngramAsReference
langgraph.store.sqlite.aio.AsyncSqliteStore = AsyncEngramAsReference
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--langgraph", required=True, help="a checkout of github.com/langchain-ai/langgraph")
    parser.add_argument("--postgres", help="run on PostgreSQL: a postgresql:// URL (a schema per store)")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (e.g. -k basic)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="engram-lg-contract-"))
    for index, name in enumerate(TEST_FILES):
        source = Path(args.langgraph) / name
        text = source.read_text()
        # the files import the names at module level: they pick up the conftest's patch
        (scratch / f"test_lg_{index}_{re.sub(r'[^a-z]+', '_', name.split('/')[1])}.py").write_text(text)
    for target, source_name in SUPPORT.items():
        (scratch / target).parent.mkdir(parents=True, exist_ok=True)
        (scratch / target).write_text((Path(args.langgraph) / source_name).read_text() if source_name else "")
    (scratch / "conftest.py").write_text(CONFTEST)
    env = {**os.environ, **({"ENGRAM_CONTRACT_POSTGRES": args.postgres} if args.postgres else {})}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto",
               "-o", "asyncio_default_fixture_loop_scope=function",
               "--rootdir", str(scratch), str(scratch), "-rfE", *args.pytest_args]
    done = subprocess.run(command, env=env, cwd=scratch)
    shutil.rmtree(scratch, ignore_errors=True)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
