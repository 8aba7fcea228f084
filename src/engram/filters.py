"""Parse the user-facing filter arguments of search/list into a RecordFilter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from .errors import InvalidValueError
from .model import Kind, Scope, Status, as_tags, parse_enum, utc
from .store.base import MetadataCondition, MetadataGroup, MetadataOp, MetadataTerm, RecordFilter, TimeRange

_OPS: dict[str, MetadataOp] = {"$eq": "eq", "$ne": "ne", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte",
                               "$in": "in", "$nin": "nin", "$contains": "contains", "$icontains": "icontains",
                               "$exists": "exists"}
_LOGICAL = ("$and", "$or", "$not")


def metadata_conditions(metadata: Mapping[str, Any] | None) -> tuple[MetadataTerm, ...]:
    """{"team": "core", "score": {"$gte": 3}} → conditions that must all hold;
    ``{"$or": [{...}, {...}]}`` holds when one of its filters does, ``{"$not": [...]}``
    when none does, ``{"$and": [...]}`` when all do."""
    if not metadata:
        return ()
    if not isinstance(metadata, Mapping):
        raise InvalidValueError("metadata filter must be a mapping of key to value or {'$op': value}")
    out: list[MetadataTerm] = []
    for key, value in metadata.items():
        if key in _LOGICAL:
            alternatives = _filters(value, key)
            if key == "$and":
                out += [term for alternative in alternatives for term in alternative]
            else:
                out.append(MetadataGroup(alternatives, negate=key == "$not"))
        elif isinstance(value, Mapping):
            for op, operand in value.items():
                if op not in _OPS:
                    raise InvalidValueError(f"unknown operator {op!r} on {key!r}; use {', '.join(_OPS)}")
                out.append(MetadataCondition(key, _OPS[op], list(operand) if op in ("$in", "$nin")
                                             and isinstance(operand, tuple) else operand))
        else:
            out.append(MetadataCondition(key, "eq", value))
    return tuple(out)


def _filters(value: Any, op: str) -> tuple[tuple[MetadataTerm, ...], ...]:
    if isinstance(value, Mapping):
        value = [value]
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise InvalidValueError(f"{op} takes a non-empty list of metadata filters, got {value!r}")
    return tuple(metadata_conditions(item) or _empty(op) for item in value)


def _empty(op: str) -> tuple[MetadataTerm, ...]:
    raise InvalidValueError(f"{op}: each filter in the list needs at least one condition")


def _tuple_of(enum: type, values: Any, what: str) -> tuple:
    if values is None:
        return ()
    if isinstance(values, str):
        values = [values]
    return tuple(parse_enum(enum, value, what) for value in values)


def record_filter(
    scope: Scope,
    *,
    include_descendants: bool = False,
    kinds: Sequence[Kind | str] | Kind | str | None = None,
    statuses: Sequence[Status | str] | Status | str | None = (Status.ACTIVE,),
    category: str | None = None,
    tags: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    valid_at: datetime | None = None,
) -> RecordFilter:
    if not isinstance(scope, Scope):
        raise InvalidValueError(f"scope must be an engram.Scope, got {type(scope).__name__}")
    ranges: tuple[TimeRange, ...] = ()
    if created_after is not None or created_before is not None:
        ranges = (TimeRange("created_at", _moment(created_after, "created_after"),
                            _moment(created_before, "created_before")),)
    return RecordFilter(
        namespace=scope.namespace,
        descendants=include_descendants,
        statuses=_tuple_of(Status, statuses, "status"),
        kinds=_tuple_of(Kind, kinds, "kind"),
        category=category,
        tags=as_tags(tags),
        metadata=metadata_conditions(metadata),
        time_ranges=ranges,
        valid_at=valid_at,
    )


def _moment(value: datetime | None, what: str) -> datetime | None:
    return None if value is None else utc(value, what)
