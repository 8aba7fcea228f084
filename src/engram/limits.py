"""Size limits on what a caller may store, defined once and enforced by the write core.

Every entry point (the Memory facade, add(), import, the HTTP API, MCP, the CLI, the
LangGraph and Deep Agents adapters) builds records with ``engram.writes`` and commits
them through ``WriteCore.admit``, which checks the final record against the limits
here; a record over a limit raises ``InvalidValueError`` / ``InvalidContentError``
naming the field and the limit, and nothing is written. The limits come from
``Settings`` (``ENGRAM_MAX_METADATA_BYTES`` …).

Metadata is measured as compact UTF-8 JSON and by nesting depth. The depth has a hard
ceiling (``METADATA_DEPTH_CEILING``) that no setting can raise: JSON encoders and
decoders of every surface (and pydantic's serializer, which gives up at 255 levels)
must be able to read back whatever was stored, so one record can never break the
reads of its scope.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import InvalidContentError, InvalidValueError

METADATA_DEPTH_CEILING = 64
# Offsets and page sizes beyond this are refused: databases count rows in signed 64-bit
# integers, and offset + limit must still fit.
MAX_OFFSET = 2**62


def check_offset(offset: Any) -> int:
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= MAX_OFFSET:
        raise InvalidValueError(f"offset must be an integer in [0, 2**62], got {offset!r}")
    return offset


def check_unicode(text: str, what: str) -> str:
    """Text every backend, embedder and tokenizer can encode: no lone surrogate."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValueError(f"{what} is not valid Unicode (a lone surrogate)") from None
    return text


def check_storable_text(value: Any, what: str) -> None:
    """Text any backend can store, in a value and everything inside it (keys too): no
    NUL (PostgreSQL text and jsonb cannot hold it) and no lone surrogate."""
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidValueError(f"{what} contains a NUL character")
        check_unicode(value, what)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_storable_text(key, f"{what} key")
            check_storable_text(item, f"{what}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_storable_text(item, what)


def check_count(value: Any, what: str) -> int:
    """A positive integer (k, limit, window) that a database can still add to an offset."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_OFFSET:
        raise InvalidValueError(f"{what} must be a positive integer up to 2**62, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class InputLimits:
    content_chars: int = 8000
    metadata_bytes: int = 256 * 1024
    metadata_depth: int = 32
    tags: int = 100
    tag_chars: int = 200
    category_chars: int = 200
    turn_chars: int = 32_000
    add_chars: int = 200_000

    def __post_init__(self) -> None:
        if not 1 <= self.metadata_depth <= METADATA_DEPTH_CEILING:
            raise InvalidValueError(f"metadata_depth must be in [1, {METADATA_DEPTH_CEILING}]")
        for name in ("content_chars", "metadata_bytes", "tags", "tag_chars", "category_chars", "turn_chars",
                     "add_chars"):
            if getattr(self, name) < 1:
                raise InvalidValueError(f"{name} must be at least 1")

    def check_content(self, text: str, what: str = "content") -> None:
        if len(text) > self.content_chars:
            raise InvalidContentError(f"{what} has {len(text)} characters; the limit is {self.content_chars}")

    def check_turns(self, contents: Sequence[str]) -> None:
        """The turns of one add() or record(): each, and all together (a conversation is
        refused whole, before anything of it is kept or sent to a model)."""
        for number, text in enumerate(contents, start=1):
            if len(text) > self.turn_chars:
                raise InvalidContentError(f"turn {number} has {len(text)} characters; the limit is {self.turn_chars}")
        total = sum(len(text) for text in contents)
        if total > self.add_chars:
            raise InvalidContentError(f"the turns have {total} characters together; the limit is {self.add_chars}")

    def check_metadata(self, metadata: Mapping[str, Any]) -> None:
        depth = nesting_depth(metadata, self.metadata_depth)
        if depth > self.metadata_depth:
            raise InvalidValueError(f"metadata is nested more than {self.metadata_depth} levels deep")
        try:
            size = len(json.dumps(dict(metadata), ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        except UnicodeEncodeError:
            raise InvalidValueError("metadata is not valid Unicode (a lone surrogate in a key or a value)") from None
        if size > self.metadata_bytes:
            raise InvalidValueError(f"metadata is {size} bytes as JSON; the limit is {self.metadata_bytes}")

    def check_tags(self, tags: tuple[str, ...]) -> None:
        if len(tags) > self.tags:
            raise InvalidValueError(f"{len(tags)} tags; the limit is {self.tags}")
        for tag in tags:
            if len(tag) > self.tag_chars:
                raise InvalidValueError(f"tag {tag[:40]!r}… has {len(tag)} characters; the limit is {self.tag_chars}")

    def check_category(self, category: str | None) -> None:
        if category is not None and len(category) > self.category_chars:
            raise InvalidValueError(f"category has {len(category)} characters; the limit is {self.category_chars}")

    def check_fields(self, *, content: str, reply_to: str | None, metadata: Mapping[str, Any],
                     tags: tuple[str, ...], category: str | None) -> None:
        """Every limit on one record's fields (the write core's check)."""
        self.check_content(content)
        if reply_to is not None:
            self.check_content(reply_to, "source.reply_to")
        self.check_metadata(metadata)
        self.check_tags(tags)
        self.check_category(category)


def nesting_depth(value: Any, stop_after: int = METADATA_DEPTH_CEILING) -> int:
    """How deeply containers (dicts, lists) nest in ``value`` (a flat dict is 1),
    counted without recursion; counting stops once past ``stop_after``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > stop_after:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def bounded_json(value: Any, depth: int = METADATA_DEPTH_CEILING) -> Any:
    """``value`` with every container nested deeper than ``depth`` replaced by its JSON
    text: what a surface shows of metadata stored before the depth limit existed, so
    that reading such a record never fails (the data itself is left as stored)."""
    if not isinstance(value, (Mapping, list, tuple)):
        return value
    if depth <= 0:
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (RecursionError, TypeError, ValueError):
            return "(nested too deeply to show)"
    if isinstance(value, Mapping):
        return {key: bounded_json(item, depth - 1) for key, item in value.items()}
    return [bounded_json(item, depth - 1) for item in value]
