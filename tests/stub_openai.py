"""A real local HTTP server that speaks OpenAI chat-completions, for client tests.

It answers from a script of ``StubReply`` (or a function of the request body) and
records every request with its arrival time, so tests can assert on what the
client sent and when.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class StubReply:
    status: int = 200
    body: Any = None  # a dict/list is sent as JSON, a str as-is
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (to provoke client timeouts)
    drip: float = 0.0  # seconds between single bytes of the body (a server too slow to ever finish)


@dataclass(frozen=True)
class RecordedRequest:
    at: float  # time.monotonic() on arrival
    path: str
    headers: Mapping[str, str]
    body: Any


def chat_reply(content: str, *, prompt_tokens: int = 11, completion_tokens: int = 7,
               model: str = "stub-model") -> StubReply:
    return StubReply(body={
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


def error_reply(status: int, message: str, *, headers: Mapping[str, str] | None = None) -> StubReply:
    return StubReply(status=status, body={"error": {"message": message, "type": "invalid_request_error"}},
                     headers=headers or {})


Script = Iterable[StubReply] | Callable[[Any], StubReply]


class StubOpenAI:
    def __init__(self, script: Script) -> None:
        self._script = script if callable(script) else list(script)
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.cut_off: list[int] = []  # for each dripped answer the client hung up on: the bytes it got
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> StubOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _reply_to(self, request: RecordedRequest) -> StubReply:
        with self._lock:
            self.requests.append(request)
            if callable(self._script):
                return self._script(request.body)
            if not self._script:
                return error_reply(599, "stub script exhausted")
            return self._script.pop(0)


def _handler_for(stub: StubOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            arrived = time.monotonic()
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.loads(raw) if raw else None
            reply = stub._reply_to(RecordedRequest(arrived, self.path, dict(self.headers), body))
            time.sleep(reply.delay)
            payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
            try:
                self._send(reply, payload.encode("utf-8"))
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

        def _send(self, reply: StubReply, data: bytes) -> None:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if not reply.drip:
                self.wfile.write(data)
                return
            for sent in range(len(data)):
                try:
                    self.wfile.write(data[sent : sent + 1])
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    stub.cut_off.append(sent)
                    return
                time.sleep(reply.drip)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    return Handler
