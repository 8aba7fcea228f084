"""Issue 21 item 6: the HTTP API answers every hostile request with a typed 4xx, never a
5xx: lone surrogates in a query or a metadata key, a number of days past what a date can
hold, NUL, bodies past the request limit (the rest of the hostile set runs in
test_suite_fast through http_fuzz)."""

from __future__ import annotations

import _common
import http_fuzz
import pytest
from fastapi.testclient import TestClient

from engram import FakeHashEmbedder, InvalidValueError, Memory, Scope, Settings

LONE = "\\ud800"


@pytest.fixture
def client(backend_name):
    target = _common.new_target(backend_name)
    memory, app = http_fuzz._app(target.url)
    memory.remember("tea with lemon", Scope("fuzz", ("users", "ana")))
    yield TestClient(app, raise_server_exceptions=False)
    memory.close()
    target.close()


def _post(client, path: str, text: str):
    return client.post(path, content=text.encode(), headers={**http_fuzz.AUTH, "Content-Type": "application/json"})


@pytest.mark.parametrize("path", ["/v1/search", "/v1/context", "/v1/recall", "/v1/threads/search"])
def test_a_lone_surrogate_in_a_query_is_a_422(client, path):
    for body in (f'{{"query": "tea {LONE}", "scope": {{"user": "ana"}}}}',
                 f'{{"query": "tea", "scope": {{"user": "ana"}}, "metadata": {{"{LONE}": 1}}}}'):
        answer = _post(client, path, body)
        assert answer.status_code == 422 and answer.json()["error"] == "ValidationError", answer.text


@pytest.mark.parametrize("body", [
    f'{{"content": "x", "metadata": {{"{LONE}": 1}}}}',
    f'{{"content": "x", "metadata": {{"k": ["{LONE}"]}}}}',
    f'{{"content": "x", "tags": ["{LONE}"]}}',
])
def test_a_lone_surrogate_in_a_stored_field_is_a_422(client, body):
    assert _post(client, "/v1/memories", body).status_code == 422
    assert _post(client, "/v1/memories/batch", f'{{"items": [{body}]}}').status_code == 422


@pytest.mark.parametrize("days", ["1e300", "1e12", "99999999999999999999999"])
def test_sampling_further_back_than_a_date_goes_is_a_422(client, days):
    answer = _post(client, "/v1/quality/sample", f'{{"days": {days}}}')
    assert answer.status_code == 422, answer.text


def test_every_hostile_request_gets_a_typed_4xx(client):
    for method, path, options in http_fuzz.hostile_requests():
        options = dict(options)
        answer = client.request(method, path, headers={**http_fuzz.AUTH, **options.pop("headers", {})}, **options)
        assert answer.status_code < 500, (method, path[:80], answer.text[:200])
        if answer.status_code >= 400:
            assert {"error", "message"} <= set(answer.json())


def test_the_python_api_refuses_lone_surrogates_typed(tmp_path):
    with Memory.open(str(tmp_path / "m.db"), embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False)) as m:
        scope = Scope.for_user("acme", "ana")
        for call in (lambda: m.search("tea \ud800", scope), lambda: m.context("tea \ud800", scope),
                     lambda: m.recall("tea \ud800", scope), lambda: m.threads.search("tea \ud800", scope),
                     lambda: m.remember("x", scope, metadata={"\ud800": 1})):
            with pytest.raises(InvalidValueError):
                call()


OUTSIDE_THE_CALENDAR = ["0001-01-01T00:00:00+14:00", "0001-01-01T13:59:59+14:00", "9999-12-31T23:59:59-14:00",
                        "9999-12-31T23:59:59.999999Z", "9999-12-31T10:00:00-14:00"]
AT_THE_EDGES = ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00-14:00", "9999-12-31T23:59:59Z",
                "9999-12-31T23:59:59+14:00"]


def _datetime_requests(moment: str, record_id: str) -> list[tuple[str, str, dict]]:
    user = {"user": "ana"}
    return [
        *[("POST", "/v1/memories", {"json": {"content": "x", "scope": user, field: moment}})
          for field in ("valid_from", "valid_to", "expires_at")],
        ("POST", "/v1/memories/batch", {"json": {"scope": user, "items": [{"content": "x", "valid_from": moment}]}}),
        ("PATCH", f"/v1/memories/{record_id}", {"params": user, "json": {"expires_at": moment}}),
        ("POST", "/v1/search", {"json": {"query": "tea", "scope": user, "as_of": moment}}),
        ("POST", "/v1/search", {"json": {"query": "tea", "scope": user, "created_after": moment}}),
        ("POST", "/v1/context", {"json": {"query": "tea", "scope": user, "as_of": moment}}),
        ("GET", "/v1/memories", {"params": {**user, "created_before": moment}}),
        ("GET", "/v1/audit", {"params": {"since": moment}}),
    ]


@pytest.mark.parametrize("moment", OUTSIDE_THE_CALENDAR)
def test_a_datetime_outside_the_calendar_is_a_422_on_every_request_shape(client, moment):
    """Issue 28 item 3: OverflowError answered 500 on 5 of 6 request shapes, both backends."""
    record_id = client.get("/v1/memories", params={"user": "ana"}, headers=http_fuzz.AUTH).json()["items"][0]["id"]
    for method, path, options in _datetime_requests(moment, record_id):
        answer = client.request(method, path, headers=http_fuzz.AUTH, **options)
        assert answer.status_code == 422, (method, path, options, answer.text)
        assert answer.json()["error"] == "InvalidValueError" and "calendar" in answer.json()["message"]


@pytest.mark.parametrize("moment", AT_THE_EDGES)
def test_datetimes_at_the_edges_of_the_calendar_are_stored_and_read_back(client, moment):
    record_id = client.get("/v1/memories", params={"user": "ana"}, headers=http_fuzz.AUTH).json()["items"][0]["id"]
    for method, path, options in _datetime_requests(moment, record_id):
        answer = client.request(method, path, headers=http_fuzz.AUTH, **options)
        assert answer.status_code < 500, (method, path, options, answer.text)
    for method, path, options in (("GET", "/v1/memories", {"params": {"user": "ana"}}),
                                  ("POST", "/v1/search", {"json": {"query": "x", "scope": {"user": "ana"}}}),
                                  ("GET", "/v1/export", {})):
        assert client.request(method, path, headers=http_fuzz.AUTH, **options).status_code == 200, path


def test_the_python_api_refuses_datetimes_outside_the_calendar(memory_for_edges):
    from datetime import datetime, timedelta, timezone

    ahead, behind = timezone(timedelta(hours=14)), timezone(timedelta(hours=-14))
    scope = Scope("acme", ("users", "ana"))
    kept = memory_for_edges.remember("tea with lemon", scope)
    mem = memory_for_edges
    for moment in (datetime(1, 1, 1, tzinfo=ahead), datetime(9999, 12, 31, 23, 59, 59, tzinfo=behind)):
        calls = [(mem.remember, ("x", scope), {"valid_from": moment}),
                 (mem.update, (kept.id, scope), {"expires_at": moment}),
                 (mem.search, ("tea", scope), {"as_of": moment}),
                 (mem.context, ("tea", scope), {"as_of": moment}),
                 (mem.profile, (scope,), {"as_of": moment}),
                 (mem.list, (scope,), {"created_after": moment}),
                 (mem.audit.list, (scope,), {"since": moment})]
        for call, args, options in calls:
            with pytest.raises(InvalidValueError, match="calendar"):
                call(*args, **options)
    assert [r.content for r in memory_for_edges.list(scope).items] == ["tea with lemon"]


@pytest.fixture
def memory_for_edges(backend_name):
    target = _common.new_target(backend_name)
    memory = Memory.open(target.url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False))
    yield memory
    memory.close()
    target.close()


def test_an_unexpected_500_closes_the_connection_cleanly(tmp_path):
    """Issue 28 item 3: after a 500 the server drops the connection; the answer must say so
    (Connection: close), or the client's next request on its keep-alive connection is reset."""
    from engram.server.http import create_app

    def buggy_policy(intent):
        raise RuntimeError("a bug in a policy hook")

    with Memory.open(str(tmp_path / "bug.db"), embedder=FakeHashEmbedder(), policies=[buggy_policy]) as memory:
        client = TestClient(create_app(memory, api_keys=None), raise_server_exceptions=False)
        answer = client.post("/v1/memories", json={"content": "x"})
        assert answer.status_code == 500 and answer.headers["connection"] == "close"
        assert client.get("/v1/memories").headers.get("connection") != "close"


@pytest.mark.parametrize("field", ["answer_id", "thread_id"])
def test_a_nul_in_the_ids_of_a_recall_that_found_nothing_is_a_422(client, field):
    """Found by the calendar-edge fuzzing: a context() before any memory existed logged a recall
    without audit rows, and PostgreSQL refused its answer_id holding a NUL (503)."""
    for body in ({"query": "tea", "as_of": "0502-01-02T13:17:12+15:18", field: "a\u0000b"},
                 {"query": "nothing like it", "scope": {"user": "nobody"}, field: "a\u0000b"}):
        answer = client.post("/v1/context", json=body, headers=http_fuzz.AUTH)
        assert answer.status_code == 422, answer.text


def test_a_nul_in_the_audit_record_filter_is_a_422(client):
    """Found by the calendar-edge fuzzing run: PostgreSQL answered 503 for it."""
    answer = client.get("/v1/audit", params={"record_id": "a\u0000b"}, headers=http_fuzz.AUTH)
    assert answer.status_code == 422 and answer.json()["error"] == "InvalidValueError", answer.text
