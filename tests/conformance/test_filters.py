"""Filters mean the same on every backend: kinds, category, tags, typed metadata,
time windows, statuses, validity, paging and order."""

from datetime import timedelta

import pytest

from engram import InvalidValueError, Source, Status
from engram.store.base import MetadataCondition, RecordFilter, TimeRange

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)


@pytest.fixture
def corpus(memory, alice, clock):
    memory.remember("report style short", alice, kind="preference", tags=["reports", "style"],
                    metadata={"level": 1, "team": "sales", "flag": True, "nested": {"x": 5}})
    clock.advance(days=2)
    memory.remember("report approval three levels", alice, kind="rule", category="finance",
                    metadata={"level": 3, "team": "ops", "flag": False, "score": 2.5})
    clock.advance(days=2)
    memory.remember("report archive location", alice, tags=["reports"],
                    metadata={"level": "high", "team": "3", "nested": {"x": "5"}})
    return memory


def _contents(memory, scope, **kw):
    return {h.record.content for h in memory.search("report", scope, **kw)}


def test_kind_category_and_tags(corpus, alice):
    assert _contents(corpus, alice, kinds=["rule"]) == {"report approval three levels"}
    assert _contents(corpus, alice, kinds=["rule", "preference"]) == {
        "report approval three levels", "report style short"}
    assert _contents(corpus, alice, category="finance") == {"report approval three levels"}
    assert _contents(corpus, alice, tags=["reports"]) == {"report style short", "report archive location"}
    assert _contents(corpus, alice, tags=["reports", "style"]) == {"report style short"}
    assert _contents(corpus, alice, tags=["missing"]) == set()


@pytest.mark.parametrize(("metadata", "expected"), [
    ({"level": 1}, {"report style short"}),
    ({"level": {"$gte": 2}}, {"report approval three levels"}),  # "high" is a string, never >= 2
    ({"level": {"$lt": 3}}, {"report style short"}),
    ({"level": {"$ne": 1}}, {"report approval three levels", "report archive location"}),
    ({"level": "high"}, {"report archive location"}),
    ({"team": "3"}, {"report archive location"}),  # a string, not the number 3
    ({"team": 3}, set()),
    ({"team": {"$ne": "ops"}}, {"report style short", "report archive location"}),
    ({"flag": True}, {"report style short"}),
    ({"flag": False}, {"report approval three levels"}),
    ({"flag": 1}, set()),  # a number is not a boolean
    ({"score": {"$gt": 2}}, {"report approval three levels"}),
    ({"score": {"$lte": 2.5}, "level": 3}, {"report approval three levels"}),
    ({"nested.x": 5}, {"report style short"}),
    ({"nested.x": "5"}, {"report archive location"}),
    ({"missing": {"$ne": 1}}, {"report style short", "report approval three levels", "report archive location"}),
    ({"level": 2**70}, set()),
    ({"level": {"$lt": 2**70}}, {"report style short", "report approval three levels"}),
])
def test_metadata_comparisons_are_typed(corpus, alice, metadata, expected):
    assert _contents(corpus, alice, metadata=metadata) == expected
    assert {r.content for r in corpus.list(alice, metadata=metadata).items} == expected


STYLE, APPROVAL, ARCHIVE = "report style short", "report approval three levels", "report archive location"


@pytest.mark.parametrize(("metadata", "expected"), [
    ({"team": {"$in": ["sales", "ops"]}}, {STYLE, APPROVAL}),
    ({"level": {"$in": [1, "high"]}}, {STYLE, ARCHIVE}),  # each value typed on its own
    ({"team": {"$nin": ["sales", "ops"]}}, {ARCHIVE}),
    ({"missing": {"$nin": ["x"]}}, {STYLE, APPROVAL, ARCHIVE}),  # like $ne: without the key is not in
    ({"team": {"$contains": "al"}}, {STYLE}),
    ({"team": {"$contains": "AL"}}, set()),
    ({"team": {"$icontains": "AL"}}, {STYLE}),
    ({"level": {"$contains": "1"}}, set()),  # a number holds no substring
    ({"score": {"$exists": True}}, {APPROVAL}),
    ({"score": {"$exists": False}}, {STYLE, ARCHIVE}),
    ({"$or": [{"team": "sales"}, {"level": "high"}]}, {STYLE, ARCHIVE}),
    ({"$or": [{"team": "ops", "level": 1}, {"flag": True}]}, {STYLE}),  # each alternative: all its conditions
    ({"$or": [{"team": "sales"}], "level": 3}, set()),
    ({"$not": [{"team": "sales"}, {"team": "ops"}]}, {ARCHIVE}),
    ({"$and": [{"team": {"$ne": "ops"}}, {"level": {"$ne": 1}}]}, {ARCHIVE}),
    ({"$or": [{"$not": [{"flag": True}]}, {"team": "sales"}]}, {STYLE, APPROVAL, ARCHIVE}),
])
def test_metadata_sets_substrings_presence_and_alternatives(corpus, alice, metadata, expected):
    assert _contents(corpus, alice, metadata=metadata) == expected
    assert {r.content for r in corpus.list(alice, metadata=metadata).items} == expected


@pytest.mark.parametrize("metadata", [
    {"team": {"$in": []}}, {"team": {"$in": "sales"}}, {"team": {"$contains": 3}}, {"team": {"$contains": ""}},
    {"team": {"$exists": "yes"}}, {"$or": []}, {"$or": [{}]}, {"$or": "team"}, {"$xor": [{"a": 1}]},
    {"team": {"$in": list(range(300))}},
])
def test_bad_metadata_filters_are_refused(corpus, alice, metadata):
    with pytest.raises(InvalidValueError):
        corpus.search("report", alice, metadata=metadata)


def test_time_windows(corpus, alice, clock):
    now = clock.now()
    assert _contents(corpus, alice, created_after=now - timedelta(days=1)) == {"report archive location"}
    assert _contents(corpus, alice, created_before=now - timedelta(days=1)) == {
        "report style short", "report approval three levels"}
    assert _contents(corpus, alice, created_after=now - timedelta(days=3), created_before=now) == {
        "report approval three levels"}
    where = RecordFilter(namespace=alice.namespace, time_ranges=(TimeRange("updated_at", after=now),))
    assert [r.content for r in corpus._store.query("acme", where)] == ["report archive location"]


def test_validity_and_expiry_leave_search(memory, alice, clock):
    memory.remember("offer valid this week", alice, valid_to=clock.now() + timedelta(days=7))
    memory.remember("code expires tomorrow", alice, expires_at=clock.now() + timedelta(days=1))
    memory.remember("starts next month", alice, valid_from=clock.now() + timedelta(days=30))
    assert {h.record.content for h in memory.search("offer code starts", alice)} == {
        "offer valid this week", "code expires tomorrow"}
    clock.advance(days=2)
    assert {h.record.content for h in memory.search("offer code starts", alice)} == {"offer valid this week"}
    clock.advance(days=40)
    assert {h.record.content for h in memory.search("offer code starts", alice)} == {"starts next month"}


def test_statuses(memory, alice):
    kept = memory.remember("kept note", alice)
    gone = memory.remember("gone note", alice)
    memory.forget(gone.id, alice)
    assert _ids(memory.search("note", alice)) == {kept.id}
    assert _ids(memory.search("note", alice, statuses=["deleted"])) == {gone.id}
    assert _ids(memory.search("note", alice, statuses=None)) == {kept.id, gone.id}
    where = RecordFilter(namespace=alice.namespace, statuses=(Status.ACTIVE, Status.DELETED))
    assert len(memory._store.query("acme", where)) == 2


def _ids(hits):
    return {h.record.id for h in hits}


def test_list_pages_in_creation_order(memory, alice, clock):
    first = memory.remember_many([f"note {i}" for i in range(5)], alice)  # same created_at: insertion order
    clock.advance(seconds=1)
    later = memory.remember("note later", alice, importance=0.9)
    page = memory.list(alice, limit=4)
    assert [r.id for r in page.items] == [r.id for r in first[:4]] and page.next_offset == 4
    rest = memory.list(alice, offset=4, limit=4)
    assert [r.id for r in rest.items] == [first[4].id, later.id] and rest.next_offset is None
    by_importance = memory._store.query("acme", RecordFilter(namespace=alice.namespace), order="importance", limit=2)
    assert [r.id for r in by_importance] == [later.id, first[0].id]


def test_store_filters_by_ids_and_metadata_conditions(memory, alice):
    records = memory.remember_many(["alpha", "beta", "gamma"], alice)
    where = RecordFilter(namespace=alice.namespace, ids=(records[2].id, records[0].id))
    assert [r.content for r in memory._store.query("acme", where)] == ["alpha", "gamma"]
    assert len(memory._store.query("acme", RecordFilter(namespace=alice.namespace, ids=()))) == 0
    cond = MetadataCondition("x", "eq", 1)
    assert len(memory._store.query("acme", RecordFilter(namespace=alice.namespace, metadata=(cond,)))) == 0


def test_store_filters_by_thread_and_orders_either_way(memory, alice, clock):
    said = []
    for n in range(3):
        said.append(memory.remember(f"turn {n}", alice, source=Source(thread_id="t1")))
        clock.advance(seconds=1)
    memory.remember("elsewhere", alice, source=Source(thread_id="t2"))
    where = RecordFilter(namespace=alice.namespace, thread_id="t1")
    assert [r.id for r in memory._store.query("acme", where, order="valid_from")] == [r.id for r in said]
    latest = memory._store.query("acme", where, order="valid_from", descending=True, limit=2)
    assert [r.id for r in latest] == [said[2].id, said[1].id]
    assert len(memory._store.query("acme", RecordFilter(namespace=alice.namespace, thread_id="nope"))) == 0
    with pytest.raises(InvalidValueError, match="cannot order by"):
        memory._store.query("acme", where, order="content; DROP TABLE memories")
