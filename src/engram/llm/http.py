"""One JSON-over-HTTP POST with retries, shared by the OpenAI-compatible clients.

Standard library only. Transient failures (429, 408, 5xx, timeouts, dropped
connections) are retried with exponential backoff; ``Retry-After`` wins over the
backoff on 429/503. After the last attempt the failure is translated once into the
LLM error tree. An embedding client reusing this translates ``LLMError`` into
``EmbeddingError`` at its own boundary.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from ..errors import LLMError, LLMRateLimitError, LLMResponseError, LLMTimeoutError

MAX_RETRY_AFTER_S = 60.0  # a server asking for more is effectively down; do not hang
_RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class HTTPStatusError(LLMError):
    """The server answered with a non-retryable error status (or kept failing)."""

    def __init__(self, message: str, *, status: int, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class _TransientFailure(Exception):
    """Internal: one failed attempt worth retrying."""

    def __init__(self, kind: str, detail: str, *, status: int | None = None,
                 body: str = "", retry_after: float | None = None) -> None:
        super().__init__(detail)
        self.kind = kind  # "rate_limit" | "timeout" | "connection" | "status"
        self.status = status
        self.body = body
        self.retry_after = retry_after


def post_json(
    url: str,
    payload: Mapping[str, Any],
    *,
    api_key: str | None = None,
    timeout: float = 30.0,
    max_retries: int = 3,
    backoff: float = 0.5,
    headers: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """POST ``payload`` as JSON and return the decoded JSON object of a 2xx answer."""
    request = _build_request(url, payload, api_key, headers)
    attempts = max_retries + 1
    for attempt in range(attempts):
        try:
            return _send_once(request, timeout)
        except _TransientFailure as failure:
            if attempt == attempts - 1:
                raise _final_error(failure, url, attempts) from failure.__cause__
            sleep(_delay(failure, attempt, backoff))
    raise AssertionError("unreachable")  # the loop either returns or raises


def _build_request(
    url: str, payload: Mapping[str, Any], api_key: str | None, headers: Mapping[str, str] | None
) -> urllib.request.Request:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    all_headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        all_headers["Authorization"] = f"Bearer {api_key}"
    all_headers.update(headers or {})
    return urllib.request.Request(url, data=body, headers=all_headers, method="POST")


def _send_once(request: urllib.request.Request, timeout: float) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as exc:
        raise _status_failure(exc) from exc
    except urllib.error.URLError as exc:  # connect-phase failures come wrapped
        kind = "timeout" if isinstance(exc.reason, TimeoutError) else "connection"
        raise _TransientFailure(kind, str(exc.reason)) from exc
    except TimeoutError as exc:
        raise _TransientFailure("timeout", f"no answer within {timeout}s") from exc
    except (OSError, http.client.HTTPException) as exc:  # resets, TLS errors mid-read
        raise _TransientFailure("connection", repr(exc)) from exc
    return _decode_object(raw)


def _status_failure(exc: urllib.error.HTTPError) -> Exception:
    body = _read_error_body(exc)
    if exc.code not in _RETRYABLE_STATUS:
        return HTTPStatusError(f"HTTP {exc.code} from {exc.url}: {body[:500]}", status=exc.code, body=body)
    kind = "rate_limit" if exc.code == 429 else "timeout" if exc.code == 408 else "status"
    retry_after = parse_retry_after(exc.headers.get("Retry-After")) if exc.code in (429, 503) else None
    return _TransientFailure(kind, f"HTTP {exc.code}: {body[:200]}", status=exc.code,
                             body=body, retry_after=retry_after)


def _read_error_body(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read().decode("utf-8", errors="replace")
    except (OSError, http.client.HTTPException):  # the body is only for the message
        return ""


def _decode_object(raw: str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LLMResponseError(f"provider answered with invalid JSON: {exc}", raw=raw) from exc
    if not isinstance(data, dict):
        raise LLMResponseError("provider answered with JSON that is not an object", raw=raw)
    return data


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if value is None or not value.strip():
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = moment.timestamp() - time.time()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def _delay(failure: _TransientFailure, attempt: int, backoff: float) -> float:
    if failure.retry_after is not None:
        return failure.retry_after
    return backoff * 2.0**attempt


def _final_error(failure: _TransientFailure, url: str, attempts: int) -> LLMError:
    message = f"{url} failed after {attempts} attempt(s): {failure}"
    if failure.kind == "rate_limit":
        return LLMRateLimitError(message)
    if failure.kind == "timeout":
        return LLMTimeoutError(message)
    if failure.status is not None:
        return HTTPStatusError(message, status=failure.status, body=failure.body)
    return LLMError(message)
