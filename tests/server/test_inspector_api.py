"""What the web inspector needs from the server: its assets and the API docs served
locally (no CDN), who the caller is, the namespaces, list filters by time, and
personal data masked unless the key may reveal it."""

import re
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from engram import FakeHashEmbedder, Memory, Scope, Settings
from engram.server.http import create_app
from engram.store.sqlite import SQLiteStore

KEY, READER = "key-acme-admin-0123", "key-acme-reader-0123"  # two keys, one tenant
ADMIN = {"Authorization": f"Bearer {KEY}"}
PLAIN = {"Authorization": f"Bearer {READER}"}
ASSETS = ("index.html", "app.js", "app.css", "i18n.js", "panels.js", "profile.js")


@pytest.fixture
def mem(db_path, clock):
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock,
                settings=Settings(auto_worker=False)) as memory:
        yield memory


@pytest.fixture
def client(mem):
    return TestClient(create_app(mem, api_keys={KEY: "acme", READER: "acme"}))


def test_the_inspector_and_the_api_docs_are_served_from_this_machine(client):
    assert client.get("/ui", follow_redirects=False).headers["location"] == "/ui/"
    page = client.get("/ui/")
    assert page.status_code == 200 and "engram inspector" in page.text
    for asset in ASSETS:
        body = client.get(f"/ui/{asset}")
        assert body.status_code == 200, asset
        assert not re.search(r"(?:src|href)=[\"']?(?:https?:)?//", body.text), asset  # nothing from elsewhere
    docs = client.get("/docs").text
    assert "/docs-assets/swagger-ui-bundle.js" in docs and "cdn" not in docs.lower()
    assert client.get("/docs-assets/swagger-ui-bundle.js").status_code == 200
    assert client.get("/docs-assets/swagger-ui.css").status_code == 200
    assert "/docs-assets/redoc.standalone.js" in client.get("/redoc").text
    assert "/ui" not in client.get("/openapi.json").json()["paths"]


def test_every_inspector_file_is_packaged_in_the_wheel():
    import tomllib
    from fnmatch import fnmatch
    from pathlib import Path

    from engram.server.inspector import ui_directory

    root = Path(__file__).parents[2]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["engram"]
    files = [path.relative_to(root / "src" / "engram").as_posix() for path in ui_directory().iterdir()]
    assert sorted(files) == sorted(f"server/ui/{name}" for name in ASSETS)
    assert all(any(fnmatch(name, pattern) for pattern in patterns) for name in files), files


def test_me_names_the_keys_tenant_and_what_it_may_do(client, mem):
    assert client.get("/v1/me", headers=ADMIN).json() == {"tenant": "acme", "permissions": [],
                                                          "single_tenant": False, "version": "0.1.0"}
    assert client.get("/v1/me").status_code == 401
    solo = TestClient(create_app(mem, api_keys=None, tenant="solo"))
    # single-tenant mode: the one caller has every permission (docs/SERVER.md, issue 14)
    assert solo.get("/v1/me").json() == {"tenant": "solo", "permissions": ["reveal", "review"], "single_tenant": True,
                                         "version": "0.1.0"}


def test_namespaces_and_list_filters_by_time(client, mem, clock):
    old = mem.remember("Old memory", Scope.for_user("acme", "ana"), tags=["x"])
    clock.advance(days=3)
    mem.remember("New memory", Scope.for_user("acme", "ana"), tags=["x"])
    mem.remember("Agent note", Scope.for_agent("acme", "helper"))
    mem.remember("Other tenant", Scope.for_user("globex", "zed"))
    assert client.get("/v1/namespaces", headers=ADMIN).json() == {
        "items": [["agents", "helper"], ["users", "ana"]]}
    cut = (old.created_at + timedelta(days=1)).isoformat()
    after = client.get("/v1/memories", params={"user": "ana", "created_after": cut}, headers=ADMIN).json()
    before = client.get("/v1/memories", params={"user": "ana", "created_before": cut, "tag": "x"}, headers=ADMIN).json()
    assert [r["content"] for r in after["items"]] == ["New memory"]
    assert [r["content"] for r in before["items"]] == ["Old memory"]


def test_personal_data_is_masked_on_request(client, mem):
    ana = Scope.for_user("acme", "ana")
    record = mem.remember("Call ana.silva@example.com or [PHONE#1]", ana, sensitivity="personal",
                          metadata={"pii_encrypted": {"[PHONE#1]": "gAAAA-ciphertext"}, "team": "core"})
    path = f"/v1/memories/{record.id}"
    stored = client.get(path, headers=PLAIN).json()
    assert stored["content"] == record.content  # applications read what the write path stored
    masked = client.get(path, params={"mask": "true"}, headers=PLAIN).json()
    assert masked["content"] == "Call [EMAIL] or [PHONE#1]"
    assert masked["metadata"] == {"pii_encrypted": ["[PHONE#1]"], "team": "core"}  # the tokens, not the ciphertext
    hits = client.post("/v1/search", params={"mask": "true"}, json={"query": "call", "scope": {"user": "ana"}},
                       headers=PLAIN).json()["hits"]
    assert hits[0]["record"]["content"] == "Call [EMAIL] or [PHONE#1]"
    listed = client.get("/v1/memories", params={"user": "ana", "mask": "true"}, headers=PLAIN).json()["items"]
    history = client.get(f"{path}/history", params={"mask": "true"}, headers=PLAIN).json()["items"]
    assert listed[0]["content"] == history[0]["record"]["content"] == "Call [EMAIL] or [PHONE#1]"
    assert "ciphertext" not in str(listed) + str(history) + str(hits)


def test_the_first_screen_reads_changes_without_recalls_and_the_recalls_grouped(client, mem):
    ana, bob = Scope.for_user("acme", "ana"), Scope.for_user("acme", "bob")
    tea = mem.remember("Prefers jasmine tea", ana)
    mem.remember("Lives in Lisbon", ana)
    mem.remember("Bob's note", bob)
    for _ in range(12):  # each recall writes one audit row per memory it served
        mem.context("what does she drink?", ana, answer_id="a-1")
    changes = client.get("/v1/audit", params={"newest_first": "true", "limit": 15, "exclude": "recall"},
                         headers=ADMIN).json()["items"]
    assert [e["operation"] for e in changes] == ["create"] * 3
    recalls = client.get("/v1/recalls", params={"limit": 5, "mask": "true"}, headers=ADMIN).json()["items"]
    assert len(recalls) == 5 and recalls[0]["recall"]["at"] >= recalls[-1]["recall"]["at"]
    assert tea.id in {m["id"] for m in recalls[0]["memories"]}
    assert "Prefers jasmine tea" in {m["record"]["content"] for m in recalls[0]["memories"]}
    for_bob = client.get("/v1/recalls", params={"namespace": ["users", "bob"]}, headers=ADMIN).json()["items"]
    assert for_bob == []  # no recall served bob's memories
    assert client.get("/v1/audit", params={"exclude": "nonsense"}, headers=ADMIN).status_code == 422
