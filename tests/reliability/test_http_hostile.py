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
