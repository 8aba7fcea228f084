"""EngramStore against the BaseStore contract, checked side by side with
LangGraph's InMemoryStore where its behaviour is the reference."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest

pytest.importorskip("langgraph.store.base")

from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from engram import ConflictError, InvalidScopeError, Scope
from engram.integrations.langgraph import EngramStore

DOCS = [
    (("docs", "a"), "k1", {"text": "green tea and jasmine", "score": 3, "tag": "x", "nested": {"lang": "en"}}),
    (("docs", "a"), "k2", {"text": "black coffee", "score": 5, "tag": "y", "list": [1, 2]}),
    (("docs", "a", "deep"), "k3", {"text": "oolong tea", "score": 7.5, "tag": "x", "flag": True}),
    (("docs", "ab"), "k4", {"text": "sibling namespace", "score": 1}),
    (("other",), "k5", {"text": "elsewhere", "score": 9, "tag": None}),
]


@pytest.fixture
def store(memory):
    return EngramStore(memory, tenant="acme")


@pytest.fixture
def both(store):
    reference = InMemoryStore()
    for namespace, key, value in DOCS:
        store.put(namespace, key, value)
        reference.put(namespace, key, value)
    return store, reference


def keys(items):
    return [item.key for item in items]


def test_put_get_round_trip_and_item_fields(store):
    store.put(("users", "alice"), "prefs", {"theme": "dark", "n": [1, {"a": None}]})
    item = store.get(("users", "alice"), "prefs")
    assert item.value == {"theme": "dark", "n": [1, {"a": None}]}
    assert item.namespace == ("users", "alice") and item.key == "prefs"
    assert item.created_at <= item.updated_at and item.version == 1
    item.value["theme"] = "mutated"
    assert store.get(("users", "alice"), "prefs").value["theme"] == "dark"
    assert store.get(("users", "alice"), "missing") is None


def test_overwrite_preserves_created_at(store):
    store.put(("users", "alice"), "prefs", {"theme": "dark"})
    first = store.get(("users", "alice"), "prefs")
    store.put(("users", "alice"), "prefs", {"theme": "light"})
    second = store.get(("users", "alice"), "prefs")
    assert second.created_at == first.created_at
    assert second.updated_at >= first.updated_at and second.version == 2
    assert second.value == {"theme": "light"}


def test_labels_with_dots_at_and_cjk(store):
    namespace = ("users", "ana.silva@example.com", "记忆/notes")
    store.put(namespace, "a.b", {"text": "dotted"})
    assert store.get(namespace, "a.b").value == {"text": "dotted"}
    assert keys(store.search(("users", "ana.silva@example.com"))) == ["a.b"]
    assert store.list_namespaces(prefix=("users", "ana.silva@example.com")) == [namespace]
    assert store.search(("users", "ana")) == []


@pytest.mark.parametrize("namespace", [(), ("langgraph", "x"), ("a", ""), ("a", "b\x00"), ("a", 3), "users"])
def test_invalid_namespaces_raise_typed_errors(store, namespace):
    with pytest.raises(InvalidNamespaceError) as info:
        store.put(namespace, "k", {"v": 1})
    assert isinstance(info.value, InvalidScopeError)


def test_invalid_values_raise_before_any_write(store):
    with pytest.raises(ValueError):
        store.put(("a",), "k", ["not", "a", "dict"])
    with pytest.raises(ValueError):
        store.put(("a",), "k", {"x": object()})
    with pytest.raises(ValueError):
        store.put(("a",), "k", {"v": 1}, ttl=-5)
    assert store.list_namespaces() == []


def test_search_is_segment_exact(both):
    store, _ = both
    assert sorted(keys(store.search(("docs", "a")))) == ["k1", "k2", "k3"]
    assert keys(store.search(("docs", "ab"))) == ["k4"]
    assert keys(store.search(("docs", "a", "deep"))) == ["k3"]


FILTERS = [
    {"tag": "x"},
    {"tag": {"$eq": "x"}},
    {"tag": {"$ne": "x"}},
    {"score": {"$gt": 3}},
    {"score": {"$gte": 3}},
    {"score": {"$lt": 5}},
    {"score": {"$lte": 5}},
    {"score": {"$gt": 2, "$lt": 8}},
    {"score": 7.5},
    {"flag": True},
    {"nested": {"lang": "en"}},
    {"list": [1, 2]},
    {"tag": None},
    {"tag": "x", "score": {"$gte": 5}},
    {"score": {"$ne": 5}},
]


@pytest.mark.parametrize("filter", FILTERS)
def test_filters_match_in_memory_store(both, filter):
    store, reference = both
    ours = sorted(keys(store.search((), filter=filter, limit=50)))
    theirs = sorted(keys(reference.search((), filter=filter, limit=50)))
    assert ours == theirs, filter


def test_range_filter_on_a_missing_key_matches_nothing(both):
    store, _ = both  # InMemoryStore raises TypeError here; SqliteStore returns nothing
    assert store.search((), filter={"missing": {"$gt": 1}}) == []


def test_limit_offset_paging_matches_in_memory_store(both):
    store, reference = both
    for offset in range(6):
        for limit in (1, 2, 3, 10):
            assert keys(store.search((), limit=limit, offset=offset)) == keys(
                reference.search((), limit=limit, offset=offset)
            )


def test_query_uses_hybrid_retrieval_and_returns_scores(both):
    store, _ = both
    found = store.search(("docs",), query="tea", limit=5)
    assert keys(found)[:2] and set(keys(found)[:2]) == {"k1", "k3"}
    assert all(isinstance(item.score, float) and 0 < item.score <= 1 for item in found)
    assert [i.score for i in found] == sorted((i.score for i in found), reverse=True)
    assert keys(store.search(("docs",), query="tea", filter={"tag": "x"}, limit=1, offset=1)) == [keys(found)[1]]


def test_index_argument(store):
    store.put(("n",), "hidden", {"text": "secret tea"}, index=False)
    store.put(("n",), "titled", {"title": "tea time", "body": "unrelated words"}, index=["title"])
    store.put(("n",), "body", {"title": "nothing", "body": "tea leaves"}, index=["title"])
    ranked = store.search(("n",), query="tea")
    assert keys(ranked) == ["titled", "body"] and ranked[0].score > ranked[1].score  # ranks, like LangGraph
    assert sorted(keys(store.search(("n",)))) == ["body", "hidden", "titled"]


def test_index_fields_from_store_config(memory):
    store = EngramStore(memory, index={"dims": 3, "embed": "ignored", "fields": ["summary"]})
    store.put(("n",), "a", {"summary": "mountain hiking", "other": "tea"})
    store.put(("n",), "b", {"summary": "tea ceremony", "other": "hiking"})
    assert keys(store.search(("n",), query="hiking")) == ["a", "b"]
    assert keys(store.search(("n",), query="tea")) == ["b", "a"]


NAMESPACE_CASES = [
    {},
    {"prefix": ("a",)},
    {"prefix": ("a", "*")},
    {"prefix": ("a", "*", "c")},
    {"suffix": ("c",)},
    {"suffix": ("*", "c")},
    {"prefix": ("a",), "suffix": ("d",)},
    {"max_depth": 1},
    {"max_depth": 2},
    {"prefix": ("a",), "max_depth": 2, "limit": 2, "offset": 1},
    {"limit": 2},
    {"offset": 3},
    {"prefix": ("zzz",)},
]


@pytest.mark.parametrize("case", NAMESPACE_CASES)
def test_list_namespaces_matches_in_memory_store_cases(store, case):
    reference = InMemoryStore()
    for namespace in [("a",), ("a", "b"), ("a", "b", "c"), ("a", "x", "c"), ("a", "b", "d"), ("ab", "c"), ("e",)]:
        store.put(namespace, "k", {"v": 1})
        reference.put(namespace, "k", {"v": 1})
    assert store.list_namespaces(**case) == reference.list_namespaces(**case)


def test_list_namespaces_hides_deleted_and_foreign_records(store, memory):
    store.put(("a", "b"), "k", {"v": 1})
    store.delete(("a", "b"), "k")
    memory.remember("an engram memory, not a store item", Scope("acme", ("a", "c")))
    assert store.list_namespaces() == []


def test_delete_and_put_again_continues_history(store, memory):
    store.put(("a",), "k", {"v": 1})
    store.delete(("a",), "k")
    assert store.get(("a",), "k") is None and store.search(("a",)) == []
    store.delete(("a",), "k")  # deleting twice is fine
    store.put(("a",), "k", {"v": 2})
    item = store.get(("a",), "k")
    assert item.value == {"v": 2} and item.version == 3
    record_id = store._slots.id(Scope("acme", ("a",)), "k")
    assert [v.operation.value for v in memory.history(record_id, Scope("acme", ("a",)))] == [
        "create", "forget", "restore"
    ]


def test_compare_and_swap_put(store):
    with pytest.raises(ConflictError):
        store.put(("a",), "k", {"v": 1}, expected_version=3)
    store.put(("a",), "k", {"v": 1}, expected_version=0)
    with pytest.raises(ConflictError):
        store.put(("a",), "k", {"v": 1}, expected_version=0)
    item = store.get(("a",), "k")
    store.put(("a",), "k", {"v": 2}, expected_version=item.version)
    with pytest.raises(ConflictError):
        store.put(("a",), "k", {"v": 3}, expected_version=item.version)
    assert store.get(("a",), "k").value == {"v": 2}


def test_concurrent_compare_and_swap_increments_lose_nothing(store):
    store.put(("counter",), "c", {"n": 0})

    def bump(times: int) -> None:
        for _ in range(times):
            while True:
                item = store.get(("counter",), "c")
                try:
                    store.put(("counter",), "c", {"n": item.value["n"] + 1}, expected_version=item.version)
                    break
                except ConflictError:
                    continue

    threads = [threading.Thread(target=bump, args=(8,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get(("counter",), "c").value == {"n": 32}


def test_concurrent_plain_puts_never_fail(store):
    errors = []

    def write(i: int) -> None:
        try:
            for j in range(5):
                store.put(("race",), "same", {"writer": i, "j": j})
        except Exception as exc:  # pragma: no cover - the assertion below reports it
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and store.get(("race",), "same").version == 20


def test_ttl_expiry_refresh_and_sweep(clocked_memory, clock):
    store = EngramStore(clocked_memory, ttl={"refresh_on_read": True})
    store.put(("t",), "short", {"v": 1}, ttl=1)
    store.put(("t",), "forever", {"v": 2})
    clock.advance(seconds=40)
    assert store.get(("t",), "short") is not None  # refreshes: now expires at +100 s
    clock.advance(seconds=40)
    assert store.get(("t",), "short", refresh_ttl=False) is not None
    clock.advance(seconds=30)
    assert store.get(("t",), "short") is None
    assert keys(store.search(("t",))) == ["forever"]
    assert store.sweep_ttl() == 1
    assert store.list_namespaces() == [("t",)]


def test_default_ttl_and_no_refresh_config(clocked_memory, clock):
    store = EngramStore(clocked_memory, ttl={"default_ttl": 1, "refresh_on_read": False})
    store.put(("t",), "k", {"v": 1})
    clock.advance(seconds=50)
    assert keys(store.search(("t",))) == ["k"]
    clock.advance(seconds=20)
    assert store.get(("t",), "k") is None and store.list_namespaces() == []
    store.put(("t",), "k", {"v": 2}, ttl=None)
    clock.advance(days=30)
    assert store.get(("t",), "k").value == {"v": 2}


def test_batch_runs_ops_in_order(store):
    results = store.batch([
        PutOp(("b",), "k", {"v": 1}),
        GetOp(("b",), "k"),
        SearchOp(("b",), None, 10, 0, None),
        ListNamespacesOp(),
        PutOp(("b",), "k", None),
        GetOp(("b",), "k"),
    ])
    assert results[0] is None and results[1].value == {"v": 1}
    assert keys(results[2]) == ["k"] and results[3] == [("b",)] and results[5] is None


def test_async_twins_and_worker_threads_beside_a_running_loop(store):
    async def main() -> None:
        await store.aput(("x", "y.z"), "k", {"v": 1})
        assert (await store.aget(("x", "y.z"), "k")).value == {"v": 1}
        done = threading.Event()

        def worker() -> None:
            for i in range(10):
                store.put(("x", "worker"), f"k{i}", {"i": i})
                store.get(("x", "y.z"), "k")
            done.set()

        thread = threading.Thread(target=worker)
        thread.start()
        for i in range(10):
            await store.aput(("x", "loop"), f"k{i}", {"i": i})
            await store.asearch(("x",), query="k", limit=3)
        await asyncio.to_thread(done.wait, 30)
        thread.join()
        assert len(await store.asearch(("x", "worker"), limit=50)) == 10
        assert await store.alist_namespaces(prefix=("x",)) == [("x", "loop"), ("x", "worker"), ("x", "y.z")]
        results = await store.abatch([GetOp(("x", "loop"), "k3"), SearchOp(("x", "loop"), {"i": 4}, 10, 0, None)])
        assert results[0].value == {"i": 3} and keys(results[1]) == ["k4"]
        await store.adelete(("x", "y.z"), "k")
        assert await store.aget(("x", "y.z"), "k") is None

    asyncio.run(main())


def test_store_inside_a_langgraph_graph(store):
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.runtime import Runtime

    def node(state: MessagesState, runtime: Runtime) -> dict:
        runtime.store.put(("users", "bob@example.com"), "seen", {"count": len(state["messages"])})
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.compile(store=store).invoke({"messages": [("user", "hi")]})
    assert store.get(("users", "bob@example.com"), "seen").value == {"count": 1}


def test_expired_items_leave_ranked_search(clocked_memory, clock):
    store = EngramStore(clocked_memory)
    store.put(("t",), "a", {"text": "tea"}, ttl=1)
    clock.advance(minutes=2)
    assert store.search(("t",), query="tea") == []
    assert clock.now() - timedelta(minutes=2) < clock.now()


def test_search_keeps_items_whose_text_repeats_another_items(store):
    """Issue 11, 10a: items are keyed; two keys holding the same text are two results."""
    reference = InMemoryStore()
    for target in (store, reference):
        target.put(("users", "ana"), "m1", {"text": "likes green tea"})
        target.put(("users", "bob"), "m1", {"text": "Likes green tea"})
        target.put(("users", "bob"), "m2", {"text": "likes green tea"})
    found = store.search(("users",), query="green tea")
    assert sorted((i.namespace, i.key) for i in found) == sorted(
        (i.namespace, i.key) for i in reference.search(("users",), query="green tea"))
    assert len(found) == 3


def test_concurrent_plain_deletes_and_puts_never_fail(store):
    """Issue 11, 10b: a plain delete retries on a concurrent writer, as a plain put does."""
    keys = [f"k{i}" for i in range(5)]

    async def race() -> list[BaseException]:
        ops = []
        for i in range(200):
            key = keys[i % len(keys)]
            ops.append(store.aput(("race",), key, {"i": i}) if i % 2 == 0 else store.adelete(("race",), key))
        results = await asyncio.gather(*ops, return_exceptions=True)
        return [r for r in results if isinstance(r, BaseException)]

    assert asyncio.run(race()) == []
    with pytest.raises(ConflictError):  # compare-and-swap deletes still conflict
        store.put(("race",), "cas", {"v": 1})
        store.delete(("race",), "cas", expected_version=99)


def test_the_langgraph_root_is_refused_by_put_only_as_langgraph_does(store):
    """Issue 11, 10c: LangGraph checks the namespace in put(), not in batch()."""
    reference = InMemoryStore()
    for target in (store, reference):
        with pytest.raises(InvalidNamespaceError):
            target.put(("langgraph", "x"), "k", {"v": 1})
        target.batch([PutOp(("langgraph", "x"), "k", {"v": 1})])
        assert target.batch([GetOp(("langgraph", "x"), "k")])[0].value == {"v": 1}


def test_filters_on_dotted_paths_hyphens_digits_and_nul(store):
    """Found by LangGraph's own SqliteStore tests (bench/reliability/langgraph_contract.py):
    a dotted filter key reaches into nested objects when no top-level field has that name;
    a NUL in a filter value matches nothing instead of failing."""
    store.put(("docs",), "hyphen", {"access-level": "public", "user": {"access-level": "nested"}})
    store.put(("docs",), "digit", {"123abc": "ok", "user": {"123abc": "ok2"}})
    store.put(("docs",), "literal", {"a.b": 1})
    assert [i.key for i in store.search(("docs",), filter={"access-level": "public"})] == ["hyphen"]
    assert [i.key for i in store.search(("docs",), filter={"user.access-level": "nested"})] == ["hyphen"]
    assert [i.key for i in store.search(("docs",), filter={"user.123abc": "ok2"})] == ["digit"]
    assert [i.key for i in store.search(("docs",), filter={"a.b": 1})] == ["literal"]
    assert store.search(("docs",), filter={"access-level": "public\x00' OR '1'='1"}) == []


def test_an_async_memory_is_accepted_and_anything_else_refused(memory):
    from engram import AsyncMemory, InvalidValueError

    store = EngramStore(AsyncMemory(memory), tenant="acme")

    async def run():
        await store.aput(("users", "ana"), "seat", {"text": "window seat"})
        return await store.aget(("users", "ana"), "seat"), await store.asearch(("users",), query="window")

    item, found = asyncio.run(run())
    assert item.value == {"text": "window seat"} and [hit.key for hit in found] == ["seat"]
    with pytest.raises(InvalidValueError, match="takes an engram Memory or AsyncMemory, got str"):
        EngramStore("memory.db")


def test_the_whole_value_is_indexed_as_its_text_never_its_json(store, memory):
    store.put(("memories", "ana"), "a", {"content": "Prefers window seats"})
    store.put(("memories", "ana"), "b", {"name": "Ana", "home": {"city": "Porto"}, "tags": ["x"], "n": 3})
    texts = {r.content for r in memory.scan(Scope("acme", ("memories", "ana")))}
    assert texts == {"Prefers window seats", "name: Ana\nhome.city: Porto\ntags: x\nn: 3"}
