"""One JSON-over-HTTP POST with retries, shared by the OpenAI-compatible clients.

Standard library only. Transient failures (429, 408, 5xx, timeouts, dropped
connections) are retried with exponential backoff; ``Retry-After`` wins over the
backoff on 429/503. After the last attempt the failure is translated once into the
LLM error tree. An embedding client reusing this translates ``LLMError`` into
``EmbeddingError`` at its own boundary.

Three bounds keep a call from hanging: ``timeout`` per socket operation; ``deadline_s``
for the whole call (connect, a body dripped one byte at a time, retries and waits:
past it the socket is shut and ``LLMTimeoutError`` raised), tightened by the budget of
the work in progress (``engram.llm.deadline``); and ``max_retry_after_s``: a server
asking to wait longer than that is not waited for (``LLMRateLimitError`` at once),
nor is any wait that would end past the deadline.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from ..errors import LLMError, LLMRateLimitError, LLMResponseError, LLMTimeoutError
from .deadline import current_deadline

MAX_RETRY_AFTER_S = 30.0  # default cap: a server asking for more is effectively down; do not hang
DEFAULT_DEADLINE_S = 120.0  # default bound on one whole call, retries included
_CHUNK = 65536
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
    deadline_s: float | None = DEFAULT_DEADLINE_S,
    max_retry_after_s: float = MAX_RETRY_AFTER_S,
) -> dict[str, Any]:
    """POST ``payload`` as JSON and return the decoded JSON object of a 2xx answer."""
    request = _build_request(url, payload, api_key, headers)
    deadline = _deadline(deadline_s)
    attempts = max_retries + 1
    for attempt in range(attempts):
        try:
            return _send_once(request, timeout, deadline)
        except _TransientFailure as failure:
            if attempt == attempts - 1:
                raise _final_error(failure, url, attempt + 1) from failure.__cause__
            wait = _delay(failure, attempt, backoff)
            if failure.retry_after is not None and failure.retry_after > max_retry_after_s:
                raise LLMRateLimitError(
                    f"{url} asks to retry after {failure.retry_after:.0f}s, more than the "
                    f"{max_retry_after_s:.0f}s engram waits (llm_max_retry_after_s)") from failure.__cause__
            if deadline is not None and time.monotonic() + wait >= deadline:
                raise _final_error(failure, url, attempt + 1, out_of_time=True) from failure.__cause__
            sleep(wait)
    raise AssertionError("unreachable")  # the loop either returns or raises


def _deadline(deadline_s: float | None) -> float | None:
    """The monotonic moment this call must end by: its own bound or the work's, the earlier."""
    own = None if deadline_s is None else time.monotonic() + deadline_s
    work = current_deadline()
    bounds = [moment for moment in (own, work) if moment is not None]
    return min(bounds) if bounds else None


def _build_request(
    url: str, payload: Mapping[str, Any], api_key: str | None, headers: Mapping[str, str] | None
) -> urllib.request.Request:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    all_headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        all_headers["Authorization"] = f"Bearer {api_key}"
    all_headers.update(headers or {})
    return urllib.request.Request(url, data=body, headers=all_headers, method="POST")


def _send_once(request: urllib.request.Request, timeout: float, deadline: float | None) -> dict[str, Any]:
    left = None if deadline is None else deadline - time.monotonic()
    if left is not None and left <= 0:
        raise _TransientFailure("timeout", "the deadline passed before the call could start")
    tracked = _TrackedSocket()
    watchdog = None if left is None else threading.Timer(left, tracked.cut)
    if watchdog is not None:
        watchdog.daemon = True
        watchdog.start()
    try:
        with _opener(tracked).open(request, timeout=timeout if left is None else min(timeout, left)) as response:
            raw = _read_body(response, deadline).decode("utf-8", errors="replace")
    except urllib.error.HTTPError as exc:
        raise _status_failure(exc) from exc
    except urllib.error.URLError as exc:  # connect-phase failures come wrapped
        kind = "timeout" if isinstance(exc.reason, TimeoutError) or tracked.was_cut else "connection"
        raise _TransientFailure(kind, str(exc.reason)) from exc
    except TimeoutError as exc:
        raise _TransientFailure("timeout", f"no answer within {timeout}s") from exc
    except (OSError, http.client.HTTPException, ValueError) as exc:  # resets, TLS errors mid-read
        if tracked.was_cut:
            raise _TransientFailure("timeout", "no complete answer before the deadline") from exc
        raise _TransientFailure("connection", repr(exc)) from exc
    finally:
        if watchdog is not None:
            watchdog.cancel()
    if tracked.was_cut:
        raise _TransientFailure("timeout", "no complete answer before the deadline")
    return _decode_object(raw)


def _read_body(response: Any, deadline: float | None) -> bytes:
    """The body, one socket read at a time, so a server dripping bytes is stopped at
    the deadline (the watchdog shuts the socket; this loop notices)."""
    parts: list[bytes] = []
    while True:
        chunk = response.read1(_CHUNK)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError("the deadline passed while the answer was arriving")


class _TrackedSocket:
    """The socket of one request, so a watchdog can shut it at the deadline (which
    wakes a read blocked on it: a per-read timeout alone never ends a slow drip)."""

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.was_cut = False
        self._lock = threading.Lock()

    def track(self, sock: socket.socket) -> None:
        with self._lock:
            self.sock = sock
            if self.was_cut:
                _shut(sock)

    def cut(self) -> None:
        with self._lock:
            self.was_cut = True
            if self.sock is not None:
                _shut(self.sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed
        pass


def _opener(tracked: _TrackedSocket) -> urllib.request.OpenerDirector:
    """urllib's opener (proxies, TLS, redirects as usual) whose connections report
    their socket to ``tracked``."""

    class Connection(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            tracked.track(self.sock)

    class SecureConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            tracked.track(self.sock)

    class Handler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Connection, req)

    class SecureHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(SecureConnection, req, context=getattr(self, "_context", None))

    return urllib.request.build_opener(Handler, SecureHandler)


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
    return max(seconds, 0.0)


def _delay(failure: _TransientFailure, attempt: int, backoff: float) -> float:
    if failure.retry_after is not None:
        return failure.retry_after
    return backoff * 2.0**attempt


def _final_error(failure: _TransientFailure, url: str, attempts: int, *, out_of_time: bool = False) -> LLMError:
    message = f"{url} failed after {attempts} attempt(s): {failure}"
    if out_of_time:
        message += "; no time left for another attempt before the deadline"
    if failure.kind == "rate_limit":
        return LLMRateLimitError(message)
    if failure.kind == "timeout" or out_of_time:
        return LLMTimeoutError(message)
    if failure.status is not None:
        return HTTPStatusError(message, status=failure.status, body=failure.body)
    return LLMError(message)
