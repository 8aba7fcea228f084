"""The conformance suite through ``AsyncMemory``: a test written against Memory's sync
API drives the async face instead. Each call is awaited on an event loop running in
a thread of its own (so the async methods run as they do in an application: from a
running loop, their sync work in worker threads), and the test thread waits for it.

Only the API goes through the face. The few attributes tests read under the API
(``_store``, ``_core``, ``clock`` …) come from the Memory beneath; any other name
AsyncMemory lacks is an AttributeError, so a method missing from the async face
fails the suite instead of falling back to the sync one."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterator
from typing import Any

from engram import AsyncMemory, Memory

UNDER_THE_API = frozenset({"_store", "_core", "clock", "embedder", "settings", "policies", "terms_rebuilt",
                           "_pipeline", "_llm"})


class EventLoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="conformance-loop", daemon=True)
        self._thread.start()

    def wait(self, awaitable: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(awaitable, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class Blocking:
    """A sync view of an async face (AsyncMemory or one of its parts)."""

    def __init__(self, face: Any, loop: EventLoopThread, sync: Any) -> None:
        object.__setattr__(self, "_face", face)
        object.__setattr__(self, "_loop", loop)
        object.__setattr__(self, "_sync", sync)

    def __getattr__(self, name: str) -> Any:
        if name in UNDER_THE_API and isinstance(self._sync, Memory):
            return getattr(self._sync, name)
        value = getattr(self._face, name)
        if inspect.iscoroutinefunction(value):
            return lambda *args, **kwargs: self._loop.wait(value(*args, **kwargs))
        if inspect.isasyncgenfunction(value):
            return lambda *args, **kwargs: iter(self._loop.wait(_collect(value(*args, **kwargs))))
        if hasattr(value, "sync") and not isinstance(value, Memory):  # a part's async face
            return Blocking(value, self._loop, value.sync)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in UNDER_THE_API:
            raise AttributeError(f"tests set only attributes under the API, not {name!r}")
        setattr(self._sync, name, value)

    def __enter__(self) -> Blocking:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def blocking(memory: Memory, loop: EventLoopThread) -> Any:
    return Blocking(AsyncMemory(memory), loop, memory)


async def _collect(items: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in items]
