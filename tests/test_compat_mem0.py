"""engram.compat.mem0.Memory: mem0's documented quickstart runs unchanged (only the
import line differs) and answers with mem0's result shapes."""

import pytest

from engram import FakeHashEmbedder, Scope
from engram import Memory as EngramMemory
from engram.compat.mem0 import Memory

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
        with pytest.raises(ValueError):
            m.search("x", filters={"user_id": "ana", "OR": [{"a": 1}]})
        assert m.get("no-such-id") is None
        m.delete(a["id"])
        assert m.get(a["id"]) is None and len(engram.history(a["id"], Scope("acme"))) == 2  # history kept
