"""SQL built in pure functions; backends only execute it.

``Dialect`` captures the few differences between SQLite and PostgreSQL (placeholder
style, JSON access, tag membership), so the filter logic is written once.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import InvalidValueError
from ..limits import check_storable_text
from ..model import MemoryRecord, utc
from .base import ORDERS, AuditQuery, MetadataCondition, MetadataGroup, MetadataTerm, RecordFilter, WriteBatch
from .codec import namespace_key, namespace_range, to_epoch

_METADATA_KEY = re.compile(r"^[\w-]+(\.[\w-]+)*$")
_OPERATORS = {"eq": "=", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_TIME_FIELDS = ("created_at", "updated_at", "valid_from", "valid_to", "expires_at", "last_accessed_at")


@dataclass(frozen=True)
class Dialect:
    name: str
    placeholder: str  # "?" or "%s"
    tenant_column: str = "tenant"

    def metadata_expr(self, alias: str, key: str, value: Any) -> tuple[str, list[Any]]:
        """The metadata value at ``key``, or NULL where the stored JSON type differs
        from the filter value's: numbers compare with numbers only, strings with
        strings, booleans with booleans, identically on every backend."""
        path = key.split(".")
        p = self.placeholder
        if self.name == "sqlite":
            json_path = "$" + "".join(f'."{part}"' for part in path)
            if isinstance(value, bool):
                types = "'true', 'false'"
            else:
                types = "'integer', 'real'" if _is_number(value) else "'text'"
            return (
                f"(CASE WHEN json_type({alias}metadata, {p}) IN ({types}) THEN json_extract({alias}metadata, {p}) END)",
                [json_path, json_path],
            )
        jtype = "boolean" if isinstance(value, bool) else "number" if _is_number(value) else "string"
        cast = "::double precision" if _is_number(value) else ""
        return (
            f"(CASE WHEN jsonb_typeof({alias}metadata #> {p}) = '{jtype}' THEN ({alias}metadata #>> {p}){cast} END)",
            [path, path],
        )

    def contains(self, alias: str, key: str, text: str, *, fold: bool) -> tuple[str, list[Any]]:
        """The string at ``key`` holds ``text``; ``fold``: both lower-cased by the
        database's lower() (ASCII letters on SQLite; PostgreSQL folds what its locale does)."""
        expr, params = self.metadata_expr(alias, key, text)
        find = "instr" if self.name == "sqlite" else "strpos"
        if fold:
            return f"{find}(lower({expr}), lower({self.placeholder})) > 0", [*params, text]
        return f"{find}({expr}, {self.placeholder}) > 0", [*params, text]

    def exists(self, alias: str, key: str, present: bool) -> tuple[str, list[Any]]:
        path = key.split(".")
        if self.name == "sqlite":
            sql = f"json_type({alias}metadata, {self.placeholder}) IS NOT NULL"
            params: list[Any] = ["$" + "".join(f'."{part}"' for part in path)]
        else:
            sql, params = f"{alias}metadata #> {self.placeholder} IS NOT NULL", [path]
        return (sql if present else f"NOT ({sql})"), params

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

    def time_value(self, moment: datetime) -> Any:
        """SQLite keeps epoch seconds (REAL); PostgreSQL keeps timestamptz. A naive
        datetime would mean local time on one and server time on the other: refused."""
        if not isinstance(moment, datetime) or moment.tzinfo is None:
            raise InvalidValueError(f"time filters need timezone-aware datetimes, got {moment!r}")
        moment = utc(moment, "time filter")  # within the calendar both backends keep
        return to_epoch(moment) if self.name == "sqlite" else moment



class DialectTables:
    """Where one backend keeps a feature's tables, and how it spells parameters, JSON
    and times (governance_sql and episodes_sql name their tables on top of it)."""

    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect
        self.p = dialect.placeholder
        self.tenant = dialect.tenant_column
        self.json = "?" if dialect.name == "sqlite" else "%s::jsonb"
        self.sqlite = dialect.name == "sqlite"

    def time(self, moment: datetime | None) -> Any:
        return None if moment is None else self.d.time_value(moment)

SQLITE = Dialect("sqlite", "?")
POSTGRES = Dialect("postgres", "%s", tenant_column="tenant_id")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_text(value: Any, what: str) -> None:
    """Filter strings are checked the same way on every backend: a string that no
    stored value can hold (NUL, lone surrogates) is bad input, not an empty match."""
    if not isinstance(value, str):
        if what.startswith("metadata"):
            return
        raise InvalidValueError(f"{what} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise InvalidValueError(f"{what} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValueError(f"{what} is not valid Unicode (lone surrogate)") from None


_check_stored = check_storable_text  # engram/limits.py: surfaces refuse the same before they write


def _check_record(record: MemoryRecord) -> None:
    for name in ("id", "content", "category", "supersedes", "superseded_by", "embedding_model"):
        _check_stored(getattr(record, name), name)
    _check_stored(list(record.scope.namespace) + [record.scope.tenant], "scope")
    _check_stored(record.tags, "tags")
    _check_stored(record.metadata, "metadata")
    _check_stored([record.source.actor, record.source.thread_id, record.source.message_id], "source")
    _check_stored(record.source.reply_to, "source.reply_to")


def check_storable(batch: WriteBatch) -> None:
    """Refuse what one SQL backend would store and another reject (PostgreSQL text and
    jsonb hold no NUL; no driver encodes lone surrogates), before any backend writes,
    so every backend answers bad input alike."""
    for write in batch.records:
        _check_record(write.record)
    for version in batch.versions:
        _check_stored([version.record_id, version.actor, version.reason], "version")
        if version.record is not None:
            _check_record(version.record)
    for draft in batch.audit:
        _check_stored([draft.actor, draft.record_id, draft.source_message_id, *draft.namespace], "audit")
        _check_stored(draft.detail, "audit detail")
    _check_stored([*batch.purge_ids, *(t.record_id for t in batch.touches), batch.tenant], "record id")
    for job in getattr(batch, "jobs", ()):
        _check_stored([job.id, job.tenant], "job")
        _check_stored(job.payload, "job payload")


MAX_METADATA_TERMS = 256  # conditions in one filter, groups and lists counted out


def metadata_clause(dialect: Dialect, alias: str, terms: tuple[MetadataTerm, ...]) -> tuple[str, list[Any]]:
    """Every term must hold: conditions and groups of alternatives (any holds, or none)."""
    if _count(terms) > MAX_METADATA_TERMS:
        raise InvalidValueError(f"a metadata filter may hold up to {MAX_METADATA_TERMS} conditions")
    return _conjunction(dialect, alias, terms)


def _count(terms: Any) -> int:
    total = 0
    for term in terms:
        if isinstance(term, MetadataGroup):
            total += sum(_count(alternative) for alternative in term.alternatives)
        else:
            total += len(term.value) if isinstance(term.value, list | tuple) else 1
    return total


def _conjunction(dialect: Dialect, alias: str, terms: tuple[MetadataTerm, ...]) -> tuple[str, list[Any]]:
    parts, params = [], []
    for term in terms:
        sql, extra = (_group(dialect, alias, term) if isinstance(term, MetadataGroup)
                      else _metadata_condition(dialect, alias, term))
        parts.append(sql)
        params += extra
    return " AND ".join(f"({part})" for part in parts) or "1 = 1", params


def _group(dialect: Dialect, alias: str, group: MetadataGroup) -> tuple[str, list[Any]]:
    if not group.alternatives:
        raise InvalidValueError("a metadata $or / $not needs at least one alternative")
    parts, params = [], []
    for alternative in group.alternatives:
        sql, extra = _conjunction(dialect, alias, alternative)
        parts.append(f"({sql})")
        params += extra
    either = " OR ".join(parts)  # IS TRUE: a missing key fails its condition, so NOT holds there
    return (f"NOT (({either}) IS TRUE)" if group.negate else either), params


def _metadata_condition(dialect: Dialect, alias: str, cond: MetadataCondition) -> tuple[str, list[Any]]:
    if not _METADATA_KEY.match(cond.key):
        raise InvalidValueError(f"metadata filter key {cond.key!r} may hold letters, digits, _ - and dots")
    if cond.op in ("in", "nin"):
        if not isinstance(cond.value, list | tuple) or not cond.value:
            raise InvalidValueError(f"${cond.op} on {cond.key!r} needs a non-empty list of values")
        each = [_metadata_condition(dialect, alias, MetadataCondition(cond.key, "eq" if cond.op == "in" else "ne", v))
                for v in cond.value]
        joined = (" OR " if cond.op == "in" else " AND ").join(f"({sql})" for sql, _ in each)
        return joined, [param for _, params in each for param in params]
    if cond.op in ("contains", "icontains"):
        if not isinstance(cond.value, str) or not cond.value:
            raise InvalidValueError(f"${cond.op} on {cond.key!r} needs a non-empty string")
        _check_text(cond.value, f"metadata filter on {cond.key!r}")
        return dialect.contains(alias, cond.key, cond.value, fold=cond.op == "icontains")
    if cond.op == "exists":
        if not isinstance(cond.value, bool):
            raise InvalidValueError(f"$exists on {cond.key!r} needs true or false")
        return dialect.exists(alias, cond.key, cond.value)
    if cond.op not in _OPERATORS:
        raise InvalidValueError(f"unknown metadata operator {cond.op!r}; use {', '.join(_OPERATORS)}")
    if cond.value is None or isinstance(cond.value, (dict, list)):
        raise InvalidValueError(f"metadata filter on {cond.key!r} needs a scalar value")
    if cond.op not in ("eq", "ne") and not isinstance(cond.value, (int, float, str)):
        raise InvalidValueError(f"range filter on {cond.key!r} needs a number or string")
    _check_text(cond.value, f"metadata filter on {cond.key!r}")
    expr, params = dialect.metadata_expr(alias, cond.key, cond.value)
    value = dialect.bool_value(cond.value)
    if _is_number(value) and isinstance(value, int) and not -(2**63) <= value < 2**63:
        value = float(value)  # beyond 64-bit integers: compare as a double on every backend
    if dialect.name == "postgres" and not _is_number(cond.value):
        value = str(value)
    if cond.op == "ne":  # "not equal" includes records without the key
        return f"({expr} IS NULL OR {expr} != {dialect.placeholder})", params + params + [value]
    return f"{expr} {_OPERATORS[cond.op]} {dialect.placeholder}", params + [value]


def order_clause(order: str, descending: bool | None, tiebreak: str) -> str:
    """ORDER BY for Store.query: a known column, importance best first by default."""
    if order not in ORDERS:
        raise InvalidValueError(f"cannot order by {order!r}; use one of {', '.join(ORDERS)}")
    down = order == "importance" if descending is None else descending
    # ties: insertion order, reversed only when asked for descending explicitly
    return f"ORDER BY {order} {'DESC' if down else 'ASC'}, {tiebreak} {'DESC' if descending else 'ASC'}"


def filter_clause(dialect: Dialect, tenant: str, where: RecordFilter, alias: str = "") -> tuple[str, list[Any]]:
    """WHERE conditions (joined by AND) for one tenant and a RecordFilter."""
    p = dialect.placeholder
    a = f"{alias}." if alias else ""
    parts = [f"{a}{dialect.tenant_column} = {p}"]
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
    if where.thread_id is not None:
        _check_text(where.thread_id, "thread filter")
        parts.append(f"{a}thread_id = {p}")
        params.append(where.thread_id)
    if where.pinned is not None:
        parts.append(f"{a}pinned = {p}")
        params.append(dialect.bool_value(bool(where.pinned)))
    if where.category is not None:
        _check_text(where.category, "category filter")
        parts.append(f"{a}category = {p}")
        params.append(where.category)
    for tag in where.tags:
        _check_text(tag, "tag filter")
        parts.append(dialect.has_tag(a))
        params.append(tag)
    if where.metadata:
        sql, extra = metadata_clause(dialect, a, where.metadata)
        parts.append(f"({sql})")
        params += extra
    for window in where.time_ranges:
        if window.field not in _TIME_FIELDS:
            raise InvalidValueError(f"unknown time field {window.field!r}; use {', '.join(_TIME_FIELDS)}")
        if window.after is not None:
            parts.append(f"{a}{window.field} >= {p}")
            params.append(dialect.time_value(window.after))
        if window.before is not None:
            parts.append(f"{a}{window.field} < {p}")
            params.append(dialect.time_value(window.before))
    if where.valid_at is not None:
        moment = dialect.time_value(where.valid_at)
        parts.append(f"({a}valid_to IS NULL OR {a}valid_to > {p}) AND ({a}expires_at IS NULL OR {a}expires_at > {p})")
        params += [moment, moment]
        parts.append(f"{a}valid_from <= {p}")
        params.append(moment)
    if where.ids is not None:
        if not where.ids:
            parts.append("1 = 0")
        else:
            for record_id in where.ids:
                _check_text(record_id, "id filter")
            parts.append(f"{a}id IN ({', '.join([p] * len(where.ids))})")
            params += list(where.ids)
    return " AND ".join(parts), params


# -- PostgreSQL: lexical (BM25 as FTS5 computes it) and vector search ------------------------


def pg_bm25(schema: str, clause: str, terms: int, k1: float, b: float) -> str:
    """Okapi BM25 exactly as SQLite FTS5's bm25() computes it, over the stored term
    frequencies (jsonb) of the rows the tsvector index matches; IDFs come from the
    tenant's lexicon. Parameters: (idf, term, term) per term, avgdl, the filter
    clause's parameters, the tsquery, the limit."""
    tf = "coalesce((m.tf ->> %s)::float8, 0)"
    parts = [
        f"%s::float8 * {tf} * {k1 + 1.0} / ({tf} + {k1} * ({1.0 - b} + {b} * m.doc_len / avgdl.v))"
        for _ in range(terms)
    ]
    return (
        f"SELECT m.id, {' + '.join(parts)} AS score "
        f"FROM {schema}.memories m CROSS JOIN (SELECT %s::float8 AS v) AS avgdl "
        f"WHERE {clause} AND m.tsv @@ %s::tsquery ORDER BY score DESC, m.id LIMIT %s"
    )


def pg_vector_index_name(model: str, dim: int) -> str:
    import hashlib

    return "memories_hnsw_" + hashlib.blake2b(f"{model}\x1f{dim}".encode(), digest_size=6).hexdigest()


def pg_literal(value: str) -> str:
    """A standard-conforming SQL string literal (model names go into partial-index
    predicates and must appear verbatim for the planner to match them)."""
    return "'" + value.replace("'", "''") + "'"


def pg_create_vector_index(schema: str, model: str, dim: int, m: int, ef_construction: int) -> str:
    return (
        f"CREATE INDEX IF NOT EXISTS {pg_vector_index_name(model, dim)} ON {schema}.memories "
        f"USING hnsw ((embedding::vector({int(dim)})) vector_ip_ops) WITH (m = {int(m)}, "
        f"ef_construction = {int(ef_construction)}) WHERE embedding_model = {pg_literal(model)}"
    )


HNSW_MAX_EF = 1000  # pgvector's ceiling for hnsw.ef_search


def hnsw_count_cap(exact_threshold: int, index_rows: int, limit: int) -> int:
    """How far to count a scope's rows to choose its path (``hnsw_ef``): beyond this many
    the filter keeps enough of the index's candidates at any ef_search up to the ceiling."""
    return max(exact_threshold, math.ceil(2 * limit * index_rows / HNSW_MAX_EF))


def hnsw_ef(scope_rows: int, index_rows: int, limit: int, ef_search: int, *, iterative: bool) -> int | None:
    """The ef_search of a filtered HNSW search over a scope of ``scope_rows`` (at least) of
    the ``index_rows`` the model's index holds, or None when the scope must be searched
    exactly. pgvector before 0.8 walks ef_search candidates of the whole index and filters
    them afterwards: a scope holding a share s of the index keeps about s * ef_search of
    them, and ranks what it keeps; asking for twice ``limit`` of them is the rule here, and
    a scope too rare for that within the ceiling (a 1,000-memory user among 100,000 needs
    ef_search 10,000 for k = 50) is searched exactly. Iterative scans (0.8 on) walk on
    until ``limit`` rows pass, so only ``limit`` bounds ef_search."""
    base = max(ef_search, limit)
    if iterative:
        return min(base, HNSW_MAX_EF)
    need = math.ceil(2 * limit * max(index_rows, scope_rows) / max(scope_rows, 1))
    ef = max(base, need)
    return ef if ef <= HNSW_MAX_EF else None


def pg_nearest(schema: str, clause: str, model: str, dim: int, *, indexed: bool) -> str:
    """Nearest by inner product (vectors are unit length: cosine); returns (id, distance),
    distance = -similarity. ``indexed`` orders by the model's HNSW index expression (it
    must match the index's expression and predicate); otherwise an exact scan over the
    filtered rows. Parameters: vector, filter params, limit."""
    if indexed:
        distance, tiebreak = f"embedding::vector({int(dim)}) <#> %s::vector({int(dim)})", ""
    else:
        distance, tiebreak = "embedding <#> %s::vector", ", id"
    return (
        f"SELECT id, {distance} AS distance FROM {schema}.memories "
        f"WHERE {clause} AND embedding_model = {pg_literal(model).replace('%', '%%')} "
        f"ORDER BY distance{tiebreak} LIMIT %s"
    )


def audit_conditions(dialect: Dialect, tenant_column: str, tenant: str, query: AuditQuery) -> tuple[str, list[Any]]:
    """WHERE … ORDER BY … LIMIT for an audit read; the backend supplies SELECT/FROM."""
    p = dialect.placeholder
    parts, params = [f"{tenant_column} = {p}"], [tenant]
    if query.record_id is not None:
        _check_text(query.record_id, "record id filter")
        parts.append(f"record_id = {p}")
        params.append(query.record_id)
    if query.operation is not None:
        parts.append(f"operation = {p}")
        params.append(query.operation.value)
    if query.exclude:
        parts.append(f"operation NOT IN ({', '.join([p] * len(query.exclude))})")
        params.extend(op.value for op in query.exclude)
    if query.since is not None:
        parts.append(f"at >= {p}")
        params.append(dialect.time_value(query.since))
    order = "id DESC" if query.newest_first else "id"
    return f"WHERE {' AND '.join(parts)} ORDER BY {order} LIMIT {p}", [*params, query.limit]
