"""How a file maps onto an engram record, plus the small runtime helpers the
backend needs (which thread is calling, which versions it has read)."""

from __future__ import annotations

import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from deepagents.backends.protocol import FileData
from deepagents.backends.utils import validate_path

from ...errors import InvalidValueError
from ...memory import Memory
from ...model import Kind, MemoryRecord, Scope
from .._slots import SlotValue

FILE_TAG = "file"
SPACE = "deepagents-file"
MAX_PATH_CHARS = 1024
_PAGE = 200


def local_path(path: Any, root: str) -> str:
    """The normalized path under ``root`` ("/notes.md"); InvalidValueError when
    the path is malformed or outside the root."""
    if not isinstance(path, str) or not path.strip():
        raise InvalidValueError("path must be a non-empty string")
    if len(path) > MAX_PATH_CHARS:
        raise InvalidValueError(f"path is longer than {MAX_PATH_CHARS} characters")
    if any(unicodedata.category(ch) == "Cc" for ch in path):
        raise InvalidValueError(f"path {path!r} contains a control character")
    try:
        normalized = validate_path(path)
    except ValueError as exc:
        raise InvalidValueError(str(exc)) from None
    base = root.rstrip("/")
    if base:
        if normalized != base and not normalized.startswith(base + "/"):
            raise InvalidValueError(f"path '{path}' is outside {base}/")
        normalized = normalized[len(base) :] or "/"
    return normalized


def display(mount: str, local: str) -> str:
    return mount.rstrip("/") + local



def split_text(text: str) -> tuple[str, dict[str, str]]:
    """(record content, metadata to rebuild the exact text): engram strips content,
    files keep their leading and trailing whitespace."""
    core = text.strip()
    if not core:
        return "", {"raw": text}
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()) :]
    return core, {k: v for k, v in (("lead", lead), ("trail", trail)) if v}


def file_value(local: str, text: str, *, read_only: bool = False, mount: str = "/") -> SlotValue:
    """``mount``: the route the agent reached the file through (``/memories/``), kept as
    ``metadata["mount"]`` so approval rules and reviewers see the path the agent wrote."""
    core, extra = split_text(text)
    where = {"mount": mount} if mount.strip("/") else {}
    return SlotValue(
        content=core or f"(empty file {local})",
        metadata={"path": local, "encoding": "utf-8", **where, **extra},
        kind=Kind.FILE,
        tags=(FILE_TAG,),
        read_only=read_only,
    )


def file_text(record: MemoryRecord) -> str:
    meta = record.metadata
    if "raw" in meta:
        return meta["raw"]
    return meta.get("lead", "") + record.content + meta.get("trail", "")


def file_data(record: MemoryRecord) -> FileData:
    return FileData(
        content=file_text(record),
        encoding="utf-8",
        created_at=record.created_at.isoformat(),
        modified_at=record.updated_at.isoformat(),
    )


def scan_files(memory: Memory, scope: Scope) -> Iterator[MemoryRecord]:
    """Every live file of one namespace, oldest first."""
    return memory.scan(scope, kinds=[Kind.FILE], tags=[FILE_TAG])


def current_thread_id() -> str | None:
    """The LangGraph thread running this tool call, if any (from the run config,
    never from tool arguments)."""
    try:
        from langgraph.config import get_config

        config = get_config()
    except (ImportError, RuntimeError, KeyError):
        return None
    thread = (config.get("configurable") or {}).get("thread_id")
    return str(thread) if thread is not None else None


def current_runtime() -> Any:
    try:
        from langgraph.runtime import get_runtime

        return get_runtime()
    except (ImportError, RuntimeError, KeyError):
        return None


class ReadTracker:
    """Which version of each file each thread last saw (bounded LRU), so an edit
    based on a stale read is refused instead of silently overwriting."""

    def __init__(self, capacity: int = 50_000) -> None:
        self._seen: OrderedDict[tuple[Any, ...], int] = OrderedDict()
        self._lock = threading.Lock()
        self._capacity = capacity

    def saw(self, thread: str | None, scope: Scope, local: str, version: int) -> None:
        if thread is None:
            return
        key = (thread, scope.tenant, scope.namespace, local)
        with self._lock:
            self._seen[key] = version
            self._seen.move_to_end(key)
            while len(self._seen) > self._capacity:
                self._seen.popitem(last=False)

    def seen(self, thread: str | None, scope: Scope, local: str) -> int | None:
        if thread is None:
            return None
        with self._lock:
            return self._seen.get((thread, scope.tenant, scope.namespace, local))
