"""Past conversations over HTTP: /v1/add keeps the turns; threads are listed, read and
searched inside the key's tenant only; a consolidation runs for the key's tenant."""

from fastapi.testclient import TestClient

from engram import FakeHashEmbedder, Memory, Scope, Settings
from engram.server.http import create_app
from engram.store.sqlite import SQLiteStore

KEY_A, KEY_B = "key-acme-0123456789", "key-globex-0123456789"
A = {"Authorization": f"Bearer {KEY_A}"}
B = {"Authorization": f"Bearer {KEY_B}"}
TURNS = [{"role": "user", "content": "Our invoices export to CSV with broken umlauts"},
         {"role": "assistant", "content": "Export with UTF-8 BOM so Excel reads them"}]


def test_added_turns_are_listed_read_and_searched_in_the_keys_tenant(db_path, clock):
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock,
                settings=Settings(auto_worker=False)) as memory:
        client = TestClient(create_app(memory, api_keys={KEY_A: "acme", KEY_B: "globex"}))
        added = client.post("/v1/add", json={"messages": TURNS, "scope": {"user": "alice"}, "thread_id": "csv"},
                            headers=A)
        assert added.status_code == 200, added.text
        listed = client.get("/v1/threads", params={"user": "alice"}, headers=A).json()["items"]
        assert [(t["id"], t["turns"]) for t in listed] == [("csv", 2)]
        turns = client.get("/v1/threads/csv/turns", params={"user": "alice"}, headers=A).json()["items"]
        assert [t["content"] for t in turns] == [m["content"] for m in TURNS]
        found = client.post("/v1/threads/search", json={"query": "CSV umlauts", "scope": {"user": "alice"}},
                            headers=A).json()["items"]
        assert found[0]["thread_id"] == "csv" and found[0]["turns"][0]["matched"] is True
        other = client.post("/v1/threads/search", json={"query": "CSV umlauts", "scope": {"user": "alice"}},
                            headers=B).json()["items"]
        assert other == []  # another tenant's key sees none of it
        missing = client.get("/v1/threads/csv/turns", params={"user": "alice"}, headers=B)
        assert missing.status_code == 404 and missing.json()["error"] == "NotFoundError"
        bad = client.post("/v1/threads/search", json={"query": "", "scope": {"user": "alice"}}, headers=A)
        assert bad.status_code == 422
        clock.advance(hours=2)
        dry = client.post("/v1/consolidate", json={"dry_run": True}, headers=A).json()
        assert dry["dry_run"] and [s["status"] for s in dry["scopes"]] == ["dry-run"]
        done = client.post("/v1/consolidate", json={}, headers=A).json()
        assert done["turns"] == 2 and done["scopes"][0]["episodes"] == 1
        assert client.get("/v1/threads", params={"user": "alice"}, headers=A).json()["items"][0]["episode_id"]


def test_search_and_context_as_of_over_http(db_path):
    from datetime import UTC, datetime

    from engram import FakeClock

    clock = FakeClock(datetime(2026, 1, 10, tzinfo=UTC))
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock,
                settings=Settings(auto_worker=False)) as memory:
        client = TestClient(create_app(memory, api_keys={KEY_A: "acme"}))
        old = client.post("/v1/memories", json={"content": "Approval is single-level", "scope": {"user": "al"}},
                          headers=A).json()
        clock.advance(days=150)
        memory.supersede(old["id"], Scope.for_user("acme", "al"), "Approval is two-level")
        then = client.post("/v1/search", json={"query": "approval", "scope": {"user": "al"},
                                               "as_of": "2026-02-01T00:00:00Z"}, headers=A).json()
        assert [h["record"]["content"] for h in then["hits"]] == ["Approval is single-level"]
        block = client.post("/v1/context", json={"query": "approval", "scope": {"user": "al"},
                                                 "as_of": "2026-02-01T00:00:00Z"}, headers=A).json()
        assert "single-level" in block["text"] and "two-level" not in block["text"]
        naive = client.post("/v1/search", json={"query": "approval", "scope": {"user": "al"},
                                                "as_of": "2026-02-01T00:00:00"}, headers=A)
        assert naive.status_code == 422
