"""Lossless JSONL export and import: one header line, then one line per record
carrying its current state and every version."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

from .changes import Change
from .core import WriteCore
from .errors import EngramError, ImportConflictError, ImportFormatError, InvalidValueError
from .model import MemoryRecord, Operation, Scope, Version
from .store.base import RecordFilter, Store
from .store.codec import record_from_data, record_to_data, version_from_data, version_to_data

FORMAT = "engram.export"
FORMAT_VERSION = 1
OnConflict = Literal["error", "skip", "replace"]


@dataclass(frozen=True, slots=True)
class ExportedRecord:
    record: MemoryRecord
    versions: tuple[Version, ...]


def export_lines(store: Store, scope: Scope, exported_at: str, page: int = 1000) -> Iterator[str]:
    """Every record in the scope and below it, any status, with its versions."""
    header = {"format": FORMAT, "version": FORMAT_VERSION, "tenant": scope.tenant,
              "namespace": list(scope.namespace), "exported_at": exported_at}
    yield json.dumps(header, ensure_ascii=False)
    where = RecordFilter(namespace=scope.namespace, descendants=True, statuses=())
    offset = 0
    while True:
        records = store.query(scope.tenant, where, limit=page, offset=offset)
        for record in records:
            versions = store.versions(scope.tenant, record.id)
            line = {"record": record_to_data(record), "versions": [version_to_data(v) for v in versions]}
            yield json.dumps(line, ensure_ascii=False, sort_keys=True)
        if len(records) < page:
            return
        offset += page


def parse_lines(lines: Iterable[str]) -> tuple[dict[str, Any], list[ExportedRecord]]:
    """Parse and validate a whole file before anything is written; errors name the line."""
    iterator = enumerate(lines, start=1)
    header = _parse_header(iterator)
    out: list[ExportedRecord] = []
    seen: set[str] = set()
    for number, line in iterator:
        if not line.strip():
            continue
        item = _parse_record_line(line, number, header["tenant"])
        if item.record.id in seen:
            raise ImportFormatError(f"record {item.record.id} appears twice", line=number)
        seen.add(item.record.id)
        out.append(item)
    return header, out


def _parse_header(iterator: Iterator[tuple[int, str]]) -> dict[str, Any]:
    for number, line in iterator:
        if not line.strip():
            continue
        data = _json(line, number)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ImportFormatError(f"not an engram export (the first line must have format {FORMAT!r})",
                                    line=number)
        if data.get("version") != FORMAT_VERSION:
            raise ImportFormatError(f"unsupported export version {data.get('version')!r}", line=number)
        if not isinstance(data.get("tenant"), str) or not data["tenant"]:
            raise ImportFormatError("the header has no tenant", line=number)
        return data
    raise ImportFormatError("the file is empty", line=1)


def _json(line: str, number: int) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"invalid JSON: {exc.msg} at column {exc.colno}", line=number) from None
    except RecursionError:
        raise ImportFormatError("the JSON is nested too deeply", line=number) from None


def _parse_record_line(line: str, number: int, tenant: str) -> ExportedRecord:
    data = _json(line, number)
    if not isinstance(data, dict) or not isinstance(data.get("record"), dict):
        raise ImportFormatError("expected an object with a 'record' field", line=number)
    try:
        record = record_from_data(data["record"])
        versions = tuple(version_from_data(v) for v in data.get("versions") or [])
    except EngramError as exc:
        raise ImportFormatError(str(exc), line=number) from None
    if record.scope.tenant != tenant:
        raise ImportFormatError(f"record tenant {record.scope.tenant!r} differs from the header's", line=number)
    if any(v.record_id != record.id for v in versions):
        raise ImportFormatError("a version belongs to another record", line=number)
    return ExportedRecord(record, versions)


def import_changes(
    core: WriteCore, tenant: str, items: list[ExportedRecord], *, actor: str, on_conflict: OnConflict
) -> tuple[list[Change], int]:
    """The changes of one import (written in one transaction) and the number of records
    skipped. A replaced record is purged first (the store applies purges before writes),
    so its history becomes exactly the imported one."""
    existing = {r.id: r for r in core.reads.store.get(tenant, [item.record.id for item in items])}
    if existing and on_conflict == "error":
        raise ImportConflictError(len(existing), min(existing))
    chosen = [item for item in items if on_conflict == "replace" or item.record.id not in existing]
    purges = [Change(Operation.PURGE, None, existing[item.record.id], actor, "replaced by an import")
              for item in chosen if item.record.id in existing]
    imports = [Change(Operation.IMPORT, item.record, None, actor, history=item.versions) for item in chosen]
    return purges + imports, len(items) - len(chosen)


def _embedded(core: WriteCore, changes: list[Change], progress: Progress | None) -> list[Change]:
    """The imported records with their vectors, embedded in batches so that progress
    can be told; the write core keeps a producer's vector made from exactly the text it
    indexes (and embeds again one the PII policy changed)."""
    todo = [i for i, c in enumerate(changes) if c.record is not None and c.vector is None]
    out = list(changes)
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start:start + EMBED_BATCH]
        texts = [out[i].record.indexed_text for i in batch]  # type: ignore[union-attr]  # todo has records only
        for i, text, vector in zip(batch, texts, core.embedder.embed(texts)):
            out[i] = replace(out[i], vector=vector, vector_text=text)
        if progress is not None:
            progress(start + len(batch), len(todo))
    return out


def open_text(source: str | Path | IO[str]) -> IO[str]:
    if isinstance(source, (str, Path)):
        try:
            return open(source, encoding="utf-8")
        except FileNotFoundError:
            raise InvalidValueError(f"no such file to import: {source}") from None
        except OSError as exc:
            raise InvalidValueError(f"cannot read {source}: {exc.strerror or exc}") from None
    return source if not isinstance(source, io.BufferedIOBase) else io.TextIOWrapper(source, encoding="utf-8")


@dataclass(frozen=True, slots=True)
class ImportResult:
    imported: int
    skipped: int
    tenant: str


def export_to(store: Store, scope: Scope, dest: str | Path | IO[str], now: datetime) -> int:
    """Write the export to a path or an open text stream; returns the number of records."""
    lines = export_lines(store, scope, now.isoformat())
    if isinstance(dest, (str, Path)):
        try:
            handle = open(dest, "w", encoding="utf-8")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            raise InvalidValueError(f"cannot write the export to {dest}: {exc.strerror or exc}") from None
        with handle:
            return _write_lines(handle, lines)
    return _write_lines(dest, lines)


def _write_lines(handle: IO[str], lines: Iterable[str]) -> int:
    count = -1  # the header is not a record
    for line in lines:
        handle.write(line + "\n")
        count += 1
    return count


Progress = Callable[[int, int], None]
EMBED_BATCH = 256


def import_from(
    core: WriteCore, source: str | Path | IO[str], *, on_conflict: OnConflict, actor: str,
    progress: Progress | None = None,
) -> ImportResult:
    """``progress(done, total)``: records embedded so far, batch by batch (the bulk of
    an import's writing time), then once more when the one transaction is written."""
    if on_conflict not in ("error", "skip", "replace"):
        raise InvalidValueError(f"on_conflict must be error, skip or replace, not {on_conflict!r}")
    handle = open_text(source)
    try:
        header, items = parse_lines(handle)
    finally:
        if handle is not source:
            handle.close()
    changes, skipped = import_changes(core, header["tenant"], items, actor=actor, on_conflict=on_conflict)
    changes = _embedded(core, changes, progress)
    imported = core.write(changes) if changes else []
    if progress is not None:
        progress(len(imported), len(imported))
    return ImportResult(imported=len(imported), skipped=skipped, tenant=header["tenant"])
