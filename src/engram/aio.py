"""AsyncMemory: the same API as Memory, awaitable, named parts included.

    async with await AsyncMemory.open("memory.db") as memory:
        await memory.remember("Prefers concise reports", alice, kind="preference")
        block = await memory.context("how should I write the report?", alice)
        pending = await memory.approvals.list(Scope("acme"))

There is one implementation, the sync one: every method here is derived from the
method of the same name on ``Memory`` (or on its part) by ``off_thread``, which runs
it in a worker thread (``asyncio.to_thread``) so the event loop never waits on the
database, the embedder or an LLM. Memory is thread-safe, so concurrent callers
(tasks of one loop, or several loops) share one store as threads do. Signatures and
types come from the sync methods; nothing is written twice.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from .memory import Memory
from .model import MemoryRecord, Scope
from .parts.episodes import Consolidation, Threads
from .parts.governance import Approvals, Audit, Keys, Quality
from .parts.operations import Jobs, Maintenance, Scopes, Transfer
from .pipeline.run import Pipeline
from .text.tokenize import Tokenizer

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")

__all__ = ["AsyncFace", "AsyncMemory", "off_thread"]


def off_thread(method: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]:
    """The awaitable form of a sync method: the same arguments, run in a worker thread
    on the object's sync counterpart (``self.sync``)."""

    @functools.wraps(method)
    async def run(self: Any, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self.sync, *args, **kwargs)

    return run


def _opener(open_: Callable[P, Memory]) -> Callable[P, Coroutine[Any, Any, AsyncMemory]]:
    """``Memory.open`` in a worker thread (opening may migrate the store), wrapped."""

    @functools.wraps(open_)
    async def opened(*args: P.args, **kwargs: P.kwargs) -> AsyncMemory:
        return AsyncMemory(await asyncio.to_thread(open_, *args, **kwargs))

    return opened


class AsyncFace(Generic[S]):
    """An async face over one sync object; ``sync`` is that object."""

    def __init__(self, sync: S) -> None:
        self.sync = sync


class AsyncThreads(AsyncFace[Threads]):
    record = off_thread(Threads.record)
    list = off_thread(Threads.list)
    turns = off_thread(Threads.turns)
    search = off_thread(Threads.search)
    episode = off_thread(Threads.episode)
    drop_expired = off_thread(Threads.drop_expired)


class AsyncConsolidation(AsyncFace[Consolidation]):
    run = off_thread(Consolidation.run)
    consolidator = off_thread(Consolidation.consolidator)
    schedules = off_thread(Consolidation.schedules)
    clock = off_thread(Consolidation.clock)
    run_due = off_thread(Consolidation.run_due)


class AsyncApprovals(AsyncFace[Approvals]):
    list = off_thread(Approvals.list)
    get = off_thread(Approvals.get)
    approve = off_thread(Approvals.approve)
    reject = off_thread(Approvals.reject)
    expire = off_thread(Approvals.expire)


class AsyncAudit(AsyncFace[Audit]):
    list = off_thread(Audit.list)
    why = off_thread(Audit.why)
    link_answer = off_thread(Audit.link_answer)
    answer = off_thread(Audit.answer)
    recent_recalls = off_thread(Audit.recent_recalls)


class AsyncQuality(AsyncFace[Quality]):
    sample = off_thread(Quality.sample)
    list = off_thread(Quality.list)
    mark = off_thread(Quality.mark)
    report = off_thread(Quality.report)


class AsyncKeys(AsyncFace[Keys]):
    status = off_thread(Keys.status)
    rotate = off_thread(Keys.rotate)
    reveal = off_thread(Keys.reveal)


class AsyncJobs(AsyncFace[Jobs]):
    list = off_thread(Jobs.list)
    drain = off_thread(Jobs.drain)
    start_worker = off_thread(Jobs.start_worker)
    stop_worker = off_thread(Jobs.stop_worker)


class AsyncMaintenance(AsyncFace[Maintenance]):
    run = off_thread(Maintenance.run)
    reindex = off_thread(Maintenance.reindex)


class AsyncTransfer(AsyncFace[Transfer]):
    export_to = off_thread(Transfer.export_to)
    import_from = off_thread(Transfer.import_from)


class AsyncScopes(AsyncFace[Scopes]):
    tenants = off_thread(Scopes.tenants)
    namespaces = off_thread(Scopes.namespaces)


class AsyncMemory(AsyncFace[Memory]):
    """``Memory``, awaitable: ``await AsyncMemory.open(...)`` or ``AsyncMemory(memory)``
    over a Memory already open (``.sync`` is that Memory). Closing one closes the other."""

    def __init__(self, sync: Memory) -> None:
        super().__init__(sync)
        self.threads = AsyncThreads(sync.threads)
        self.consolidation = AsyncConsolidation(sync.consolidation)
        self.approvals = AsyncApprovals(sync.approvals)
        self.audit = AsyncAudit(sync.audit)
        self.quality = AsyncQuality(sync.quality)
        self.keys = AsyncKeys(sync.keys)
        self.jobs = AsyncJobs(sync.jobs)
        self.maintenance = AsyncMaintenance(sync.maintenance)
        self.transfer = AsyncTransfer(sync.transfer)
        self.scopes = AsyncScopes(sync.scopes)

    open = staticmethod(_opener(Memory.open))
    close = off_thread(Memory.close)
    add = off_thread(Memory.add)
    remember = off_thread(Memory.remember)
    remember_many = off_thread(Memory.remember_many)
    search = off_thread(Memory.search)
    context = off_thread(Memory.context)
    profile = off_thread(Memory.profile)
    recall = off_thread(Memory.recall)
    get = off_thread(Memory.get)
    list = off_thread(Memory.list)
    update = off_thread(Memory.update)
    supersede = off_thread(Memory.supersede)
    forget = off_thread(Memory.forget)
    restore = off_thread(Memory.restore)
    purge = off_thread(Memory.purge)
    purge_scope = off_thread(Memory.purge_scope)
    history = off_thread(Memory.history)
    stats = off_thread(Memory.stats)

    async def scan(self, scope: Scope, **filters: Any) -> AsyncIterator[MemoryRecord]:
        """``Memory.scan``: each record ``list`` would return, a page read per worker-thread step."""
        records: Iterator[MemoryRecord] = self.sync.scan(scope, **filters)
        while (record := await asyncio.to_thread(next, records, None)) is not None:
            yield record

    @property
    def location(self) -> str:
        return self.sync.location

    @property
    def dialect(self) -> str:
        return self.sync.dialect

    @property
    def tokenizer(self) -> Tokenizer:
        return self.sync.tokenizer

    @property
    def pipeline(self) -> Pipeline:
        return self.sync.pipeline

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
