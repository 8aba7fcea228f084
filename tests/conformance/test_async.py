"""AsyncMemory under asyncio, on every backend: concurrent callers on one loop share
one store as threads do, the loop's thread never runs the sync work, and the async
face has every name of the sync one (the rest of the suite runs through it too:
faces.py)."""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest

from engram import AsyncMemory, EngramError, FakeClock, FakeHashEmbedder, Memory, Scope
from engram.aio import off_thread
from engram.changes import WriteIntent

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)

ALICE = Scope.for_user("acme", "alice")
CALLERS = 24


def _async(backend, **kw) -> AsyncMemory:
    memory = Memory(backend.store(), embedder=FakeHashEmbedder(), clock=FakeClock(), **kw)
    backend._opened.append(memory)
    return AsyncMemory(memory)


def test_concurrent_writers_and_readers_on_one_loop(backend):
    memory = _async(backend)

    async def scenario():
        written = await asyncio.gather(*(memory.remember(f"fact number {i} about harbours", ALICE)
                                         for i in range(CALLERS)))
        reads = await asyncio.gather(*(memory.search(f"fact number {i}", ALICE, k=3) for i in range(CALLERS)),
                                     memory.list(ALICE, limit=100), memory.stats("acme"))
        return written, reads

    written, reads = asyncio.run(scenario())
    assert len({r.id for r in written}) == CALLERS
    *hits, page, stats = reads
    assert all(found for found in hits)
    assert {r.id for r in page.items} == {r.id for r in written}
    assert stats.by_status.get("active") == CALLERS


def test_concurrent_updates_of_one_record_all_land(backend):
    memory = _async(backend)

    async def scenario():
        record = await memory.remember("counter", ALICE)
        await asyncio.gather(*(memory.update(record.id, ALICE, importance=(i + 1) / 100) for i in range(12)))
        return await memory.history(record.id, ALICE)

    versions = asyncio.run(scenario())
    assert [v.version for v in versions] == list(range(1, 14))  # last writer wins, nothing lost


def test_the_loop_thread_never_runs_the_sync_work(backend):
    seen: list[int] = []

    def note_thread(intent: WriteIntent) -> None:
        seen.append(threading.get_ident())

    memory = _async(backend, policies=[note_thread])

    async def scenario():
        loop_thread = threading.get_ident()
        await asyncio.gather(*(memory.remember(f"note {i}", ALICE) for i in range(4)))
        block = await memory.context("note", ALICE)
        return loop_thread, block

    loop_thread, block = asyncio.run(scenario())
    assert len(seen) == 4 and loop_thread not in seen
    assert block.recall_id


def test_parts_scan_and_context_manager(backend):
    async def scenario():
        async with AsyncMemory(Memory(backend.store(), embedder=FakeHashEmbedder(), clock=FakeClock())) as memory:
            thread = await memory.threads.record(["I moved to Porto last spring"], ALICE, thread_id="t1")
            turns = await memory.threads.turns(thread, ALICE)
            await memory.remember("lives in Porto", ALICE)
            scanned = [r.content async for r in memory.scan(ALICE)]
            events = await memory.audit.list(ALICE)
            tenants = await memory.scopes.tenants()
            pending = await memory.approvals.list(ALICE)
        try:
            await memory.stats()
        except EngramError as exc:  # closed with the block
            return turns, scanned, events, tenants, pending, exc
        return turns, scanned, events, tenants, pending, None

    turns, scanned, events, tenants, pending, after_close = asyncio.run(scenario())
    assert [t.content for t in turns] == ["I moved to Porto last spring"]
    assert scanned == ["lives in Porto"] and [e.operation.value for e in events] == ["create"]
    assert tenants == ["acme"] and pending == []
    assert after_close is not None


def test_async_memory_has_every_name_of_memory_and_its_parts(tmp_path):
    sync = Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder())
    memory = AsyncMemory(sync)
    try:
        _same_names(Memory, AsyncMemory, exempt={"open"})
        assert inspect.iscoroutinefunction(AsyncMemory.open)
        assert inspect.isasyncgenfunction(AsyncMemory.scan)
        for part in Memory.__annotations__:
            _same_names(type(getattr(sync, part)), type(getattr(memory, part)))
    finally:
        sync.close()


def _same_names(sync_type: type, async_type: type, exempt: frozenset[str] | set[str] = frozenset()) -> None:
    public = {name for name in dir(sync_type) if not name.startswith("_")}
    assert public <= set(dir(async_type)), (async_type.__name__, public - set(dir(async_type)))
    for name in public - set(exempt):
        sync_value, async_value = getattr(sync_type, name), getattr(async_type, name)
        if isinstance(sync_value, property):
            assert isinstance(async_value, property), name
        elif inspect.isgeneratorfunction(sync_value):
            assert inspect.isasyncgenfunction(async_value), name
        else:
            assert inspect.iscoroutinefunction(async_value), name
            assert inspect.signature(async_value) == inspect.signature(sync_value), name  # derived, not copied


def test_off_thread_keeps_the_sync_signature_and_docs():
    class Counter:
        def bump(self, by: int = 1) -> int:
            """Add and return."""
            return by + 1

    class AsyncCounter:
        sync = Counter()
        bump = off_thread(Counter.bump)

    assert AsyncCounter.bump.__doc__ == "Add and return."
    assert asyncio.run(AsyncCounter().bump(by=2)) == 3
