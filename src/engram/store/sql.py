"""SQL built in pure functions; backends only execute it.

``Dialect`` captures the few differences between SQLite and PostgreSQL (placeholder
style, JSON access, tag membership), so the filter logic is written once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidValueError
from .base import MetadataCondition, RecordFilter
from .codec import namespace_key, namespace_range, to_epoch

_METADATA_KEY = re.compile(r"^[\w-]+(\.[\w-]+)*$")
_OPERATORS = {"eq": "=", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_TIME_FIELDS = ("created_at", "updated_at", "valid_from", "last_accessed_at")


@dataclass(frozen=True)
class Dialect:
    name: str
    placeholder: str  # "?" or "%s"

    def metadata_expr(self, alias: str, key: str, value: Any) -> tuple[str, list[Any]]:
        path = key.split(".")
        if self.name == "sqlite":
            json_path = "$" + "".join(f'."{part}"' for part in path)
            return f"json_extract({alias}metadata, {self.placeholder})", [json_path]
        # PostgreSQL: compare numbers as numbers, everything else as text
        cast = "::double precision" if _is_number(value) else ""
        return f"(({alias}metadata #>> {self.placeholder}){cast})", [path]

    def has_tag(self, alias: str) -> str:
        if self.name == "sqlite":
            return f"EXISTS (SELECT 1 FROM json_each({alias}tags) WHERE value = {self.placeholder})"
        return f"{alias}tags ? {self.placeholder}"

    def bool_value(self, value: Any) -> Any:
        if self.name == "sqlite" and isinstance(value, bool):
            return int(value)
        if self.name == "postgres" and isinstance(value, bool):
            return "true" if value else "false"
        return value


SQLITE = Dialect("sqlite", "?")
POSTGRES = Dialect("postgres", "%s")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _metadata_condition(dialect: Dialect, alias: str, cond: MetadataCondition) -> tuple[str, list[Any]]:
    if not _METADATA_KEY.match(cond.key):
        raise InvalidValueError(f"metadata filter key {cond.key!r} may hold letters, digits, _ - and dots")
    if cond.op not in _OPERATORS:
        raise InvalidValueError(f"unknown metadata operator {cond.op!r}; use {', '.join(_OPERATORS)}")
    if cond.value is None or isinstance(cond.value, (dict, list)):
        raise InvalidValueError(f"metadata filter on {cond.key!r} needs a scalar value")
    if cond.op not in ("eq", "ne") and not isinstance(cond.value, (int, float, str)):
        raise InvalidValueError(f"range filter on {cond.key!r} needs a number or string")
    expr, params = dialect.metadata_expr(alias, cond.key, cond.value)
    value = dialect.bool_value(cond.value)
    if dialect.name == "postgres" and not _is_number(cond.value):
        value = str(value)
    if cond.op == "ne":  # "not equal" includes records without the key
        return f"({expr} IS NULL OR {expr} != {dialect.placeholder})", params + params + [value]
    return f"{expr} {_OPERATORS[cond.op]} {dialect.placeholder}", params + [value]


def filter_clause(dialect: Dialect, tenant: str, where: RecordFilter, alias: str = "") -> tuple[str, list[Any]]:
    """WHERE conditions (joined by AND) for one tenant and a RecordFilter."""
    p = dialect.placeholder
    a = f"{alias}." if alias else ""
    parts = [f"{a}tenant = {p}"]
    params: list[Any] = [tenant]
    if where.descendants:
        bounds = namespace_range(where.namespace)
        if bounds is not None:
            parts.append(f"{a}namespace >= {p} AND {a}namespace < {p}")
            params += list(bounds)
    else:
        parts.append(f"{a}namespace = {p}")
        params.append(namespace_key(where.namespace))
    if where.statuses:
        parts.append(f"{a}status IN ({', '.join([p] * len(where.statuses))})")
        params += [s.value for s in where.statuses]
    if where.kinds:
        parts.append(f"{a}kind IN ({', '.join([p] * len(where.kinds))})")
        params += [k.value for k in where.kinds]
    if where.category is not None:
        parts.append(f"{a}category = {p}")
        params.append(where.category)
    for tag in where.tags:
        parts.append(dialect.has_tag(a))
        params.append(tag)
    for cond in where.metadata:
        sql, extra = _metadata_condition(dialect, a, cond)
        parts.append(sql)
        params += extra
    for window in where.time_ranges:
        if window.field not in _TIME_FIELDS:
            raise InvalidValueError(f"unknown time field {window.field!r}; use {', '.join(_TIME_FIELDS)}")
        if window.after is not None:
            parts.append(f"{a}{window.field} >= {p}")
            params.append(to_epoch(window.after))
        if window.before is not None:
            parts.append(f"{a}{window.field} < {p}")
            params.append(to_epoch(window.before))
    if where.valid_at is not None:
        moment = to_epoch(where.valid_at)
        parts.append(f"({a}valid_to IS NULL OR {a}valid_to > {p}) AND ({a}expires_at IS NULL OR {a}expires_at > {p})")
        params += [moment, moment]
        parts.append(f"{a}valid_from <= {p}")
        params.append(moment)
    if where.ids is not None:
        if not where.ids:
            parts.append("1 = 0")
        else:
            parts.append(f"{a}id IN ({', '.join([p] * len(where.ids))})")
            params += list(where.ids)
    return " AND ".join(parts), params


def fts_match(terms: list[str], scope: str) -> str:
    """An FTS5 MATCH expression: the scope token AND any of the quoted terms."""
    quoted = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
    return f'scope : "{scope}" AND terms : ({quoted})'
