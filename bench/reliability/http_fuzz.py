"""Bad-input fuzzing of the HTTP API with schemathesis: every operation of the OpenAPI
schema gets ``--examples`` generated requests in each mode (positive: valid by the
schema; negative: violating it), sent with a valid API key to the app over a real
database, plus a fixed set of hostile bodies (JSON nested 300 to 100,000 levels in
metadata, filters and import lines, offsets past 2^63, oversized tags and metadata,
invisible characters in labels, bytes that are not UTF-8, datetimes at the calendar's
edges in every datetime field). Generated date-times are drawn half from the calendar's
edges (years 1 and 9999 under offsets up to ±23:59, whose UTC value may leave the
calendar) and half from anywhere in it. The count of 5xx answers must be 0, and every
4xx must be engram's JSON error shape.

    python bench/reliability/http_fuzz.py --backend both --examples 200
    # or against a running server, with the schemathesis CLI:
    #   ENGRAM_API_KEYS=key-fuzz-0123456789=fuzz engram serve &
    #   schemathesis run http://127.0.0.1:8765/openapi.json -H "Authorization: Bearer key-fuzz-0123456789" \\
    #       --checks not_a_server_error --max-examples 200
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from engram import FakeHashEmbedder, Memory, Settings

KEY = "key-fuzz-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}


def _app(url: str):
    from engram.server.http import create_app

    memory = Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False))
    return memory, create_app(memory, api_keys={KEY: "fuzz[review+reveal]"})  # every endpoint reachable


def _register_ndjson() -> None:
    import schemathesis

    @schemathesis.serializer("application/x-ndjson")
    def ndjson(ctx: Any, value: Any) -> bytes:
        if isinstance(value, bytes):
            return value
        if isinstance(value, str):
            return value.encode("utf-8", "surrogatepass")
        return json.dumps(value).encode("utf-8")


# Moments at the calendar's edges: in UTC some are the year 0 or 10000 (issue 28, item 3),
# others just inside; engram answers 422 or stores them, never 500.
EDGE_MOMENTS = (
    "0001-01-01T00:00:00+14:00", "0001-01-01T13:59:59+14:00", "0001-01-01T00:00:00+23:59", "0001-01-01T00:00:00Z",
    "0001-01-01T00:00:00-14:00", "9999-12-31T23:59:59-14:00", "9999-12-31T23:59:59-23:59",
    "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59Z", "9999-12-31T23:59:59+14:00", "9999-12-31T10:00:00-14:00",
)


def _register_edge_datetimes() -> None:
    """schemathesis draws ``format: date-time`` strings half from the calendar's edges."""
    from datetime import datetime, timedelta, timezone

    import schemathesis
    from hypothesis import strategies as st

    offsets = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(lambda m: timezone(timedelta(minutes=m)))
    near_edges = st.one_of(
        st.datetimes(datetime(1, 1, 1), datetime(1, 1, 2)), st.datetimes(datetime(9999, 12, 30), datetime.max))
    anywhere = st.datetimes(datetime(1, 1, 1), datetime.max)
    moments = st.builds(lambda moment, tz: moment.replace(tzinfo=tz).isoformat(), near_edges | anywhere, offsets)
    schemathesis.openapi.format("date-time", st.sampled_from(EDGE_MOMENTS) | moments)


def calendar_edge_requests() -> list[tuple[str, str, dict[str, Any]]]:
    """Every datetime a request can carry, at each of the calendar's edges."""
    header = json.dumps({"format": "engram.export", "version": 1, "tenant": "fuzz", "namespace": [],
                         "exported_at": "2026-01-01T00:00:00+00:00"})
    out: list[tuple[str, str, dict[str, Any]]] = []
    for moment in EDGE_MOMENTS:
        out += [("POST", "/v1/memories", {"json": {"content": "edge", "scope": {"user": "edge"}, field: moment}})
                for field in ("valid_from", "valid_to", "expires_at")]
        out += [
            ("POST", "/v1/memories/batch", {"json": {"items": [{"content": "edge", "valid_from": moment}]}}),
            ("POST", "/v1/search", {"json": {"query": "edge", "scope": {"user": "edge"}, "as_of": moment}}),
            ("POST", "/v1/search", {"json": {"query": "edge", "created_after": moment, "created_before": moment}}),
            ("POST", "/v1/context", {"json": {"query": "edge", "scope": {"user": "edge"}, "as_of": moment}}),
            ("GET", "/v1/memories", {"params": {"user": "edge", "created_after": moment}}),
            ("GET", "/v1/memories", {"params": {"user": "edge", "created_before": moment}}),
            ("GET", "/v1/audit", {"params": {"since": moment}}),
            ("POST", "/v1/import", {"content": f'{header}\n{{"record": {{"id": "e", "valid_from": "{moment}"}}}}\n'
                                    .encode(), "headers": {"Content-Type": "application/x-ndjson"}}),
        ]
    return out


def _nested(levels: int) -> str:
    """JSON text of objects nested ``levels`` deep (built as text: json.dumps would recurse)."""
    return '{"a":' * levels + "1" + "}" * levels


def _json_body(text: str) -> dict[str, Any]:
    return {"content": text.encode("utf-8"), "headers": {"Content-Type": "application/json"}}


def hostile_requests() -> list[tuple[str, str, dict[str, Any]]]:
    """Requests that broke engram before (issue 11, item 2) and their neighbours."""
    header = json.dumps({"format": "engram.export", "version": 1, "tenant": "fuzz", "namespace": [],
                         "exported_at": "2026-01-01T00:00:00+00:00"})
    ndjson = {"Content-Type": "application/x-ndjson"}
    out: list[tuple[str, str, dict[str, Any]]] = []
    for levels in (33, 65, 300, 990, 5000, 100_000):
        deep = _nested(levels)
        out += [
            ("POST", "/v1/memories", _json_body(f'{{"content": "deep", "metadata": {deep}}}')),
            ("POST", "/v1/memories/batch", _json_body(f'{{"items": [{{"content": "deep", "metadata": {deep}}}]}}')),
            ("POST", "/v1/search", _json_body(f'{{"query": "x", "metadata": {{"k": {{"$eq": {deep}}}}}}}')),
            ("POST", "/v1/search", _json_body(f'{{"query": "x", "metadata": {deep}}}')),
            ("POST", "/v1/import", {"content": f'{header}\n{{"record": {deep}}}\n'.encode(), "headers": ndjson}),
            ("POST", "/v1/import", {"content": f"{header}\n{'[' * levels}{']' * levels}\n".encode(),
                                    "headers": ndjson}),
            ("POST", "/v1/memories", _json_body("[" * levels + "]" * levels)),
        ]
    for offset in (2**62, 2**63 - 1, 2**63, 2**64, 10**30, -1):
        out += [("GET", "/v1/memories", {"params": {"offset": str(offset)}}),
                ("GET", "/v1/approvals", {"params": {"offset": str(offset)}}),
                ("GET", "/v1/memories", {"params": {"limit": str(offset)}})]
    out += [
        ("POST", "/v1/memories", {"json": {"content": "x", "tags": [f"t{i}" for i in range(100_000)]}}),
        ("POST", "/v1/memories", {"json": {"content": "x", "tags": ["t" * 1_000_000]}}),
        ("POST", "/v1/memories", {"json": {"content": "x", "category": "c" * 1_000_000}}),
        ("POST", "/v1/memories", {"json": {"content": "x", "metadata": {"blob": "x" * 5_000_000}}}),
        ("POST", "/v1/memories", {"json": {"content": "x", "scope": {"user": "ali\u200bce"}}}),
        ("POST", "/v1/memories", _json_body('{"content": "x", "scope": {"namespace": ["a\\ud800"]}}')),
        ("POST", "/v1/memories", {"content": b'{"content": "\xff\xfe"}',
                                  "headers": {"Content-Type": "application/json"}}),
        ("POST", "/v1/import", {"content": b"\xff\xfe\x00", "headers": ndjson}),
        ("GET", "/v1/memories/%00", {}),
        ("GET", "/v1/memories/" + "x" * 10_000, {}),
    ]
    # issue 21 item 6: lone surrogates in queries and metadata keys, numbers past what a
    # timedelta holds, NUL, bodies past the request limit (declared, and streamed)
    lone = "\\ud800"
    for path in ("/v1/search", "/v1/context", "/v1/recall", "/v1/threads/search"):
        out += [("POST", path, _json_body(f'{{"query": "tea {lone}"}}')),
                ("POST", path, _json_body(f'{{"query": "tea", "metadata": {{"{lone}": 1}}}}'))]
    out += [
        ("POST", "/v1/memories", _json_body(f'{{"content": "x", "metadata": {{"{lone}": 1}}}}')),
        ("POST", "/v1/memories", _json_body(f'{{"content": "x", "tags": ["{lone}"]}}')),
        ("POST", "/v1/memories/batch", _json_body(f'{{"items": [{{"content": "x", "metadata": {{"k{lone}": 1}}}}]}}')),
        ("POST", "/v1/add", _json_body(f'{{"messages": [{{"role": "user", "content": "hi {lone}"}}]}}')),
        ("POST", "/v1/memories", _json_body('{"content": "nul \\u0000 inside"}')),
        ("POST", "/v1/memories", _json_body('{"content": "x", "metadata": {"k\\u0000": 1}}')),
    ]
    for days in ("1e300", "1e12", "1e6", "99999999999999999999999", "Infinity", "NaN"):
        out.append(("POST", "/v1/quality/sample", _json_body(f'{{"days": {days}}}')))
    for hours in ("1e300", "1e12"):
        out.append(("GET", "/v1/quality", {"params": {"hours": hours}}))
    big = b'{"content": "' + b"x" * (9 * 1024 * 1024) + b'"}'
    out += [("POST", "/v1/memories", {"content": big, "headers": {"Content-Type": "application/json"}}),
            ("POST", "/v1/add", {"content": iter([big[i:i + (1 << 20)] for i in range(0, len(big), 1 << 20)]),
                                 "headers": {"Content-Type": "application/json"}}),
            ("POST", "/v1/add", {"json": {"messages": [{"role": "user", "content": "x" * 1_000_000}]}})]
    # a recall that found nothing (an as_of before any memory) with a NUL in its answer id
    out += [("POST", "/v1/context", {"json": {"query": "x", "as_of": "0502-01-02T13:17:12+15:18", field: "a\x00b"}})
            for field in ("answer_id", "thread_id")]
    out.append(("GET", "/v1/audit", {"params": {"record_id": "a\x00b"}}))
    return out + calendar_edge_requests()


def _fuzz(operation: Any, mode: Any, examples: int, seed: int, statuses: Counter[int], failures: list[str]) -> None:
    """Send ``examples`` generated requests for one operation in one mode."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    @hypothesis_seed(seed)
    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=mode))
    def send(case: Any) -> None:
        response = case.call(headers=AUTH)
        statuses[response.status_code] += 1
        if response.status_code >= 500:
            failures.append(f"{case.method} {case.formatted_path} ({mode.value}) → "
                            f"{response.status_code}: {response.text[:200]}")

    from hypothesis.errors import Unsatisfiable

    try:
        send()
    except Unsatisfiable:  # no request can violate the schema of an operation without parameters
        return
    except Exception as exc:  # an operation schemathesis cannot generate for: reported, not hidden
        failures.append(f"{operation.method.upper()} {operation.path} ({mode.value}): could not fuzz: "
                        f"{type(exc).__name__}: {str(exc)[:200]}")


def _after_edges_records_read_back(client: Any, failures: list[str]) -> None:
    """What the fuzzing stored (edge datetimes included) still lists, searches and exports."""
    for method, path, options in (("GET", "/v1/memories", {"params": {"limit": "200"}}),
                                  ("POST", "/v1/search", {"json": {"query": "x"}}), ("GET", "/v1/export", {})):
        response = client.request(method, path, headers=AUTH, **options)
        if response.status_code != 200:
            failures.append(f"read back {method} {path} → {response.status_code}: {response.text[:200]}")


def run(backend: str, *, examples: int = 20, pg_url: str | None = None, seed: int = 0) -> dict[str, Any]:
    import schemathesis
    from fastapi.testclient import TestClient
    from schemathesis import GenerationMode

    _register_ndjson()
    _register_edge_datetimes()
    target = _common.new_target(backend, pg_url=pg_url)
    memory, app = _app(target.url)
    try:
        schema = schemathesis.openapi.from_asgi("/openapi.json", app)
        statuses: Counter[int] = Counter()
        failures: list[str] = []
        operations = [result.ok() for result in schema.get_all_operations()]
        for operation in operations:
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                _fuzz(operation, mode, examples, seed, statuses, failures)
        client = TestClient(app, raise_server_exceptions=False)
        hostile = hostile_requests()
        shapes_wrong = 0
        for method, path, options in hostile:
            options = dict(options)
            response = client.request(method, path, headers={**AUTH, **options.pop("headers", {})}, **options)
            statuses[response.status_code] += 1
            if response.status_code >= 500:
                failures.append(f"hostile {method} {path[:60]} → {response.status_code}: {response.text[:200]}")
            elif response.status_code >= 400:
                body = response.json()
                shapes_wrong += not ({"error", "message"} <= set(body))
        _after_edges_records_read_back(client, failures)
        cases = sum(statuses.values())
        return {"backend": backend, "operations": len(operations), "cases": cases, "hostile": len(hostile),
                "status_5xx": sum(n for code, n in statuses.items() if code >= 500),
                "by_status": dict(sorted(statuses.items())), "error_shape_wrong": shapes_wrong,
                "failures": failures[:5], "ok": not failures and not shapes_wrong}
    finally:
        memory.close()
        target.close()


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--examples", type=int, default=200, help="generated requests per operation and mode")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    results = [run(b, examples=args.examples, pg_url=args.pg_url, seed=args.seed) for b in _common.backends_of(args)]
    return _common.report("http_fuzz", results, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
