"""Bad input gets the same typed error on every backend, and writes nothing.

Each case names the exact exception class; a backend that answered with another
class (or a driver error) would fail here, so the backends cannot drift apart."""

from datetime import UTC, datetime, timedelta

import pytest

from engram import (
    ConflictError,
    InvalidContentError,
    InvalidScopeError,
    InvalidValueError,
    NotFoundError,
    Scope,
    Source,
)

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)

NOW = datetime(2026, 1, 1, tzinfo=UTC)
NAIVE = datetime(2026, 1, 1)

WRITES = {
    "empty content": (lambda m, s, r: m.remember("", s), InvalidContentError),
    "blank content": (lambda m, s, r: m.remember("  \n ", s), InvalidContentError),
    "content not a string": (lambda m, s, r: m.remember(123, s), InvalidContentError),
    "content None": (lambda m, s, r: m.remember(None, s), InvalidContentError),
    "NUL in content": (lambda m, s, r: m.remember("a\x00b", s), InvalidContentError),
    "oversized content": (lambda m, s, r: m.remember("x" * 8001, s), InvalidContentError),
    "lone surrogate in content": (lambda m, s, r: m.remember("bad \ud800 text", s), InvalidContentError),
    "importance NaN": (lambda m, s, r: m.remember("x", s, importance=float("nan")), InvalidValueError),
    "importance inf": (lambda m, s, r: m.remember("x", s, importance=float("inf")), InvalidValueError),
    "importance above 1": (lambda m, s, r: m.remember("x", s, importance=1.5), InvalidValueError),
    "importance a string": (lambda m, s, r: m.remember("x", s, importance="0.5"), InvalidValueError),
    "importance a bool": (lambda m, s, r: m.remember("x", s, importance=True), InvalidValueError),
    "confidence negative": (lambda m, s, r: m.remember("x", s, confidence=-0.1), InvalidValueError),
    "unknown kind": (lambda m, s, r: m.remember("x", s, kind="opinion"), InvalidValueError),
    "unknown sensitivity": (lambda m, s, r: m.remember("x", s, sensitivity="top"), InvalidValueError),
    "tags a string": (lambda m, s, r: m.remember("x", s, tags="one"), InvalidValueError),
    "empty tag": (lambda m, s, r: m.remember("x", s, tags=[""]), InvalidValueError),
    "tag not a string": (lambda m, s, r: m.remember("x", s, tags=[1]), InvalidValueError),
    "NUL in a tag": (lambda m, s, r: m.remember("x", s, tags=["a\x00"]), InvalidValueError),
    "metadata not a mapping": (lambda m, s, r: m.remember("x", s, metadata="k=v"), InvalidValueError),
    "NaN in metadata": (lambda m, s, r: m.remember("x", s, metadata={"v": float("nan")}), InvalidValueError),
    "object in metadata": (lambda m, s, r: m.remember("x", s, metadata={"v": object()}), InvalidValueError),
    "NUL in a metadata key": (lambda m, s, r: m.remember("x", s, metadata={"k\x00": 1}), InvalidValueError),
    "NUL in a metadata value": (lambda m, s, r: m.remember("x", s, metadata={"k": ["v\x00"]}), InvalidValueError),
    "empty category": (lambda m, s, r: m.remember("x", s, category=" "), InvalidValueError),
    "category not a string": (lambda m, s, r: m.remember("x", s, category=5), InvalidValueError),
    "NUL in category": (lambda m, s, r: m.remember("x", s, category="a\x00"), InvalidValueError),
    "valid_to before valid_from": (
        lambda m, s, r: m.remember("x", s, valid_from=NOW, valid_to=NOW - timedelta(days=1)), InvalidValueError),
    "naive valid_from": (lambda m, s, r: m.remember("x", s, valid_from=NAIVE), InvalidValueError),
    "scope a string": (lambda m, s, r: m.remember("x", "acme/alice"), InvalidValueError),
    "NUL in the actor": (lambda m, s, r: m.remember("x", s, actor="a\x00"), InvalidValueError),
    "NUL in the source": (lambda m, s, r: m.remember("x", s, source=Source(thread_id="t\x00")), InvalidValueError),
    "update of an unknown id": (lambda m, s, r: m.update("nope", s, content="y"), NotFoundError),
    "update without changes": (lambda m, s, r: m.update(r.id, s), InvalidValueError),
    "update of an unknown field": (lambda m, s, r: m.update(r.id, s, colour="red"), InvalidValueError),
    "update of a stale version": (lambda m, s, r: m.update(r.id, s, content="y", expected_version=9), ConflictError),
    "update with a NUL reason": (lambda m, s, r: m.update(r.id, s, content="y", reason="\x00"), InvalidValueError),
    "update to empty content": (lambda m, s, r: m.update(r.id, s, content=""), InvalidContentError),
    "forget of an unknown id": (lambda m, s, r: m.forget("nope", s), NotFoundError),
    "purge of an unknown id": (lambda m, s, r: m.purge("nope", s), NotFoundError),
    "supersede of an unknown id": (lambda m, s, r: m.supersede("nope", s, "new"), NotFoundError),
}

READS = {
    "get of an unknown id": (lambda m, s, r: m.get("nope", s), NotFoundError),
    "get of a non-string id": (lambda m, s, r: m.get(123, s), NotFoundError),
    "get of an id with NUL": (lambda m, s, r: m.get("a\x00", s), NotFoundError),
    "history of an id with NUL": (lambda m, s, r: m.history("a\x00", s), NotFoundError),
    "get with a string scope": (lambda m, s, r: m.get(r.id, "acme"), InvalidValueError),
    "empty query": (lambda m, s, r: m.search("", s), InvalidValueError),
    "query not a string": (lambda m, s, r: m.search(5, s), InvalidValueError),
    "k zero": (lambda m, s, r: m.search("x", s, k=0), InvalidValueError),
    "k a bool": (lambda m, s, r: m.search("x", s, k=True), InvalidValueError),
    "k a float": (lambda m, s, r: m.search("x", s, k=1.5), InvalidValueError),
    "unknown kind filter": (lambda m, s, r: m.search("x", s, kinds=["opinion"]), InvalidValueError),
    "unknown status filter": (lambda m, s, r: m.search("x", s, statuses=["gone"]), InvalidValueError),
    "unknown retriever": (lambda m, s, r: m.search("x", s, retriever="magic"), InvalidValueError),
    "metadata key with a space": (lambda m, s, r: m.search("x", s, metadata={"a b": 1}), InvalidValueError),
    "metadata key injection": (
        lambda m, s, r: m.search("x", s, metadata={"a') OR 1=1 --": 1}), InvalidValueError),
    "unknown metadata operator": (lambda m, s, r: m.search("x", s, metadata={"a": {"$regex": "x"}}),
                                  InvalidValueError),
    "metadata filter None": (lambda m, s, r: m.search("x", s, metadata={"a": None}), InvalidValueError),
    "metadata filter a list": (lambda m, s, r: m.search("x", s, metadata={"a": [1]}), InvalidValueError),
    "metadata filter with NUL": (lambda m, s, r: m.search("x", s, metadata={"a": "b\x00"}), InvalidValueError),
    "category filter with NUL": (lambda m, s, r: m.search("x", s, category="a\x00"), InvalidValueError),
    "category filter not a string": (lambda m, s, r: m.search("x", s, category=5), InvalidValueError),
    "tag filter with NUL": (lambda m, s, r: m.search("x", s, tags=["a\x00"]), InvalidValueError),
    "naive time filter": (lambda m, s, r: m.search("x", s, created_after=NAIVE), InvalidValueError),
    "time filter a string": (lambda m, s, r: m.search("x", s, created_before="2026-01-01"), InvalidValueError),
    "list with a negative offset": (lambda m, s, r: m.list(s, offset=-1), InvalidValueError),
    "list with limit zero": (lambda m, s, r: m.list(s, limit=0), InvalidValueError),
    "list with a naive filter value": (lambda m, s, r: m.list(s, metadata={"a": {"$gt": None}}),
                                       InvalidValueError),
    "context with budget zero": (lambda m, s, r: m.context("x", s, budget_tokens=0), InvalidValueError),
    "audit with an unknown operation": (lambda m, s, r: m.audit.list(s, operation="bogus"), InvalidValueError),
    "audit since a naive datetime": (lambda m, s, r: m.audit.list(s, since=NAIVE), InvalidValueError),
}

SCOPES = {
    "empty tenant": (lambda: Scope(""), InvalidScopeError),
    "NUL in the tenant": (lambda: Scope("a\x00"), InvalidScopeError),
    "namespace as a string": (lambda: Scope("acme", "users"), InvalidScopeError),
    "control character in a label": (lambda: Scope("acme", ("a\nb",)), InvalidScopeError),
    "label too long": (lambda: Scope("acme", ("x" * 257,)), InvalidScopeError),
    "lone surrogate in the tenant": (lambda: Scope("acme\udc80"), InvalidScopeError),
    "namespace too deep": (lambda: Scope("acme", tuple("abcdefghijklmnopq")), InvalidScopeError),
}


def _counts(memory):
    stats = memory.stats()
    return stats.records, stats.versions, stats.audit_events, dict(stats.by_status)


@pytest.mark.parametrize("case", list(WRITES), ids=list(WRITES))
def test_bad_writes_raise_the_same_error_and_write_nothing(memory, alice, case):
    call, expected = WRITES[case]
    record = memory.remember("existing memory", alice)
    before = _counts(memory)
    with pytest.raises(Exception) as info:
        call(memory, alice, record)
    assert type(info.value) is expected, f"{case}: {type(info.value).__name__}: {info.value}"
    assert _counts(memory) == before
    assert memory.get(record.id, alice) == record


@pytest.mark.parametrize("case", list(READS), ids=list(READS))
def test_bad_reads_raise_the_same_error(memory, alice, case):
    call, expected = READS[case]
    record = memory.remember("existing memory", alice)
    with pytest.raises(Exception) as info:
        call(memory, alice, record)
    assert type(info.value) is expected, f"{case}: {type(info.value).__name__}: {info.value}"


@pytest.mark.parametrize("case", list(SCOPES), ids=list(SCOPES))
def test_bad_scopes_are_refused_before_any_backend(case):
    make, expected = SCOPES[case]
    with pytest.raises(expected):
        make()


@pytest.mark.parametrize("query", [
    "'; DROP TABLE memories; --", "100% \\ _ * ? ( ) \" ' : ^ ~ - + | & !", "!!!", "a" * 5000,
    " ".join(f"word{i}" for i in range(3000)), "中文" * 2000, "NEAR(a b) OR c* AND \"d\"",
])
def test_hostile_queries_are_just_text(memory, alice, query):
    record = memory.remember(query[:8000], alice)
    hits = memory.search(query, alice)
    assert [h.record.id for h in hits] == [record.id]
    assert memory.get(record.id, alice).content == query[:8000].strip()


def test_a_very_long_word_is_indexed_and_found(memory, alice):
    word = "x" * 7000
    record = memory.remember(f"{word} tail", alice)
    assert [h.record.id for h in memory.search(word, alice, retriever="bm25")] == [record.id]
