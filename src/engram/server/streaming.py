"""Stream a writer-style export (``memory.transfer.export_to(stream, scope)``) as an HTTP body.

The export runs in its own thread and writes into a bounded queue that the response
reads from, so memory stays bounded however large the export is. The first chunk (or
the end, for a small export) is awaited before the response starts, so an early
failure is still answered with a proper status code; a failure later cuts the body
short (the client sees an incomplete chunked response, never a silent truncation)."""

from __future__ import annotations

import io
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, cast

CHUNK_CHARS = 64 * 1024
QUEUE_CHUNKS = 16
STALL_SECONDS = 300.0  # a reader that takes nothing for this long has gone away


class ExportCancelled(Exception):
    """The reader went away; the writer thread stops."""


@dataclass(frozen=True, slots=True)
class _End:
    error: BaseException | None


class _Pipe(io.TextIOBase):
    def __init__(self) -> None:
        self.queue: queue.Queue[bytes | _End] = queue.Queue(QUEUE_CHUNKS)
        self.cancelled = threading.Event()
        self._buffer: list[str] = []
        self._size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._buffer.append(text)
        self._size += len(text)
        if self._size >= CHUNK_CHARS:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self._buffer:
            chunk, self._buffer, self._size = "".join(self._buffer).encode("utf-8"), [], 0
            self._put(chunk)

    def finish(self, error: BaseException | None) -> None:
        if error is None:
            self.flush()
        self._put(_End(error))

    def _put(self, item: bytes | _End) -> None:
        waited = 0.0
        while not self.cancelled.is_set():
            try:
                self.queue.put(item, timeout=0.25)
                return
            except queue.Full:
                waited += 0.25
                if waited >= STALL_SECONDS:
                    self.cancelled.set()
        if not isinstance(item, _End):
            raise ExportCancelled("the client stopped reading the export")


def stream_export(export: Callable[[IO[str]], Any]) -> Iterator[bytes]:
    """Start ``export(stream)`` in a thread; return the body's chunks once the first one
    is ready. Raises here (not later) what the export raised before its first chunk."""
    pipe = _Pipe()

    def produce() -> None:
        error: Exception | None = None
        try:
            export(cast(IO[str], pipe))  # a text stream that only writes
        except ExportCancelled:
            return
        except Exception as exc:
            error = exc
        pipe.finish(error)

    threading.Thread(target=produce, name="engram-export", daemon=True).start()
    first = pipe.queue.get()
    if isinstance(first, _End) and first.error is not None:
        raise first.error
    return _chunks(pipe, first)


def _chunks(pipe: _Pipe, first: bytes | _End) -> Iterator[bytes]:
    item = first
    try:
        while not isinstance(item, _End):
            yield item
            item = pipe.queue.get()
        if item.error is not None:
            raise item.error
    finally:
        pipe.cancelled.set()
