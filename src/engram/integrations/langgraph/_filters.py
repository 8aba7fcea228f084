"""LangGraph store filters and namespace patterns, split into what engram's SQL
can check (scalar equality and ranges on plain keys) and what is checked in
Python afterwards with InMemoryStore's semantics (nested objects, lists, None)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.store.base import InvalidNamespaceError, MatchCondition

from ...errors import InvalidScopeError, InvalidValueError
from ...model import check_label

VALUE_PATH = "langgraph.value"
_PLAIN_KEY = re.compile(r"^[\w-]+$")
_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


class EngramInvalidNamespaceError(InvalidNamespaceError, InvalidScopeError):
    """A namespace engram cannot store: both LangGraph's and engram's error type."""


def check_namespace(namespace: Any, *, for_write: bool = False, wildcards: bool = False) -> tuple[str, ...]:
    """Engram's label rules (dots, @, slashes and CJK are fine; empty labels and
    control characters are not), raised as LangGraph's InvalidNamespaceError."""
    if isinstance(namespace, str) or not isinstance(namespace, Sequence):
        raise EngramInvalidNamespaceError(f"namespace must be a tuple of strings, got {namespace!r}")
    labels = tuple(namespace)
    if for_write and not labels:
        raise EngramInvalidNamespaceError("Namespace cannot be empty.")
    if for_write and labels[0] == "langgraph":
        raise EngramInvalidNamespaceError(f'Root label for namespace cannot be "langgraph". Got: {labels}')
    canonical = []
    for label in labels:
        if wildcards and label == "*":
            canonical.append(label)
            continue
        try:
            canonical.append(check_label(label))
        except InvalidScopeError as exc:
            raise EngramInvalidNamespaceError(f"Invalid namespace label in {labels}: {exc}") from None
    if len(labels) > 16:
        raise EngramInvalidNamespaceError(f"namespace {labels} is deeper than 16 labels")
    return tuple(canonical)


def split_filter(filter: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(conditions engram's metadata filter can run in SQL, conditions left for Python)."""
    if not filter:
        return {}, {}
    if not isinstance(filter, Mapping):
        raise InvalidValueError(f"filter must be a mapping, got {type(filter).__name__}")
    sql: dict[str, Any] = {}
    python: dict[str, Any] = {}
    for key, wanted in filter.items():
        if not isinstance(key, str):
            raise InvalidValueError(f"filter keys must be strings, got {key!r}")
        if _pushable(key, wanted):
            sql[f"{VALUE_PATH}.{key}"] = wanted
        else:
            python[key] = wanted
    return sql, python


def _pushable(key: str, wanted: Any) -> bool:
    if not _PLAIN_KEY.match(key):
        return False
    if isinstance(wanted, Mapping):
        if not wanted or not all(op in _OPERATORS for op in wanted):
            return False
        return all(_scalar(value, ranged=op not in ("$eq", "$ne")) for op, value in wanted.items())
    return _scalar(wanted, ranged=False)


def _scalar(value: Any, *, ranged: bool) -> bool:
    if isinstance(value, str) and "\x00" in value:  # no stored text holds NUL: compared in Python, never matches
        return False
    if ranged:
        return isinstance(value, (int, float, str)) and not isinstance(value, bool)
    return isinstance(value, (int, float, str, bool))


def matches(value: Mapping[str, Any], filter: Mapping[str, Any]) -> bool:
    return all(compare(lookup(value, key), wanted) for key, wanted in filter.items())


def lookup(value: Mapping[str, Any], key: str) -> Any:
    """A filter key names a top-level field (as InMemoryStore reads it) or, when no such
    field exists, a dotted path into nested objects (as SqliteStore and PostgresStore do)."""
    if key in value or "." not in key:
        return value.get(key)
    node: Any = value
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def compare(actual: Any, wanted: Any) -> bool:
    """InMemoryStore's JSONB-like comparison; a missing or mistyped value never
    raises, it just does not match."""
    if isinstance(wanted, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in wanted):
            return all(_apply(actual, op, operand) for op, operand in wanted.items())
        return isinstance(actual, Mapping) and all(compare(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(wanted)
            and all(compare(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return actual == wanted


def _apply(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return compare(actual, operand)
    if op == "$ne":
        return not compare(actual, operand)
    if op not in _OPERATORS:
        raise InvalidValueError(f"unsupported filter operator {op!r}; use {', '.join(_OPERATORS)}")
    try:
        left: Any
        right: Any
        if isinstance(operand, str) and isinstance(actual, str):
            left, right = actual, operand
        else:
            if isinstance(actual, bool) or actual is None:
                return False
            left, right = float(actual), float(operand)
    except (TypeError, ValueError):
        return False
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[op]


def namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    """Segment-exact prefix/suffix match where "*" stands for exactly one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidValueError(f"unsupported namespace match type {condition.match_type!r}")
    return all(want == "*" or got == want for got, want in pairs)


def literal_prefix(conditions: Sequence[MatchCondition]) -> tuple[str, ...]:
    """The longest wildcard-free prefix the conditions imply (narrows the SQL)."""
    for condition in conditions:
        if condition.match_type == "prefix":
            out = []
            for label in condition.path:
                if label == "*":
                    break
                out.append(label)
            return tuple(out)
    return ()
