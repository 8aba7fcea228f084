"""LLM faults from a local stub server speaking OpenAI chat-completions: junk text,
the wrong JSON schema, items that are all invalid, 429 with Retry-After: 3600, 500 on
every call, and a body dripped one byte at a time. Each fault drives add() (in the
foreground and as a background job) through the real HTTP client with the configured
deadlines. A fault passes when add() returns within its budget, every dropped item is
a SKIPPED event with a reason, nothing is stored, and the job keeps the error (or its
SKIPPED events); a valid answer as control must store its memory.

    python bench/reliability/llm_faults.py --backend both --repeat 3 --call-deadline 3 --add-deadline 6
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))  # the stub server the tests use too

import _common

from engram import FakeHashEmbedder, Memory, Scope, Settings
from engram.llm import OpenAICompatibleLLM
from engram.model import Message
from engram.pipeline.llm_extract import LLMExtractor
from engram.pipeline.run import Pipeline, PipelineSettings
from stub_openai import StubOpenAI, StubReply, chat_reply, error_reply

TURN = [Message("user", "I really like green tea, please remember that", id="m1")]
VALID = json.dumps({"memories": [{"kind": "preference", "content": "Likes green tea", "confidence": 0.9,
                                  "importance": 0.7, "source_ids": ["m1"]}]})
FAULTS: dict[str, StubReply] = {
    "junk text": chat_reply("Sure! I will remember everything. 🙂"),
    "wrong schema": chat_reply(json.dumps({"facts": [{"text": "likes tea"}]})),
    "all items invalid": chat_reply(json.dumps({"memories": [{"kind": "opinion", "content": "x"}, "tea", {}]})),
    "429 Retry-After 3600": error_reply(429, "slow down", headers={"Retry-After": "3600"}),
    "500 always": error_reply(500, "internal error"),
    "slow drip": StubReply(body=chat_reply("x" * 5000).body, drip=0.05),
    "valid (control)": chat_reply(VALID),
}


def _memory(url: str, base_url: str, call_deadline: float, add_deadline: float) -> Memory:
    llm = OpenAICompatibleLLM("stub-model", base_url, "sk-stub", timeout=10.0, max_retries=3, backoff=0.2,
                              deadline_s=call_deadline, max_retry_after_s=30.0)
    pipeline = Pipeline(LLMExtractor(llm), settings=PipelineSettings(add_deadline_s=add_deadline))
    return Memory.open(url, embedder=FakeHashEmbedder(), pipeline=pipeline,
                       settings=Settings(auto_worker=False, record_recalls=False))


def one_fault(url: str, name: str, reply: StubReply, call_deadline: float, add_deadline: float,
              index: int) -> dict[str, Any]:
    scope = Scope(f"llm{index}", ("users", "ana"))
    with StubOpenAI(lambda body: reply) as stub, _memory(url, stub.base_url, call_deadline, add_deadline) as memory:
        started = time.monotonic()
        result = memory.add(TURN, scope, force=True)
        took = time.monotonic() - started
        requests = len(stub.requests)  # by this add() (the worker below drains every tenant's jobs)
        memory.add(TURN, scope, force=True, background=True)
        memory.jobs.drain()
        (job,) = memory.jobs.list(scope.tenant)
        stored = len(memory.list(scope).items)
    control = name.startswith("valid")
    silent = not result.events or any(e.event == "SKIPPED" and not e.reason for e in result.events)
    job_says = job.last_error is not None or bool((job.result or {}).get("events"))
    ok = took <= add_deadline + 1.0 and not silent and job_says and (stored >= 1 if control else stored == 0)
    return {"fault": name, "seconds": round(took, 2), "requests_by_add": requests,
            "events": [f"{e.event}: {e.reason[:60]}" for e in result.events][:3], "stored": stored,
            "job": job.status.value, "ok": ok}


def run(backend: str, *, repeat: int = 1, call_deadline: float = 3.0, add_deadline: float = 6.0,
        pg_url: str | None = None) -> list[dict[str, Any]]:
    target = _common.new_target(backend, pg_url=pg_url)
    try:
        rows = []
        for name, reply in FAULTS.items():
            runs = [one_fault(target.url, name, reply, call_deadline, add_deadline, 100 * i + len(rows))
                    for i in range(repeat)]
            worst = max(runs, key=lambda r: r["seconds"])
            rows.append({"backend": backend, **worst, "runs": repeat,
                         "max_seconds": worst["seconds"], "budget_seconds": add_deadline,
                         "ok": all(r["ok"] for r in runs)})
        return rows
    finally:
        target.close()


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--call-deadline", type=float, default=3.0, help="llm_deadline_s for the run")
    parser.add_argument("--add-deadline", type=float, default=6.0, help="add_deadline_s for the run")
    args = parser.parse_args()
    results = [row for b in _common.backends_of(args)
               for row in run(b, repeat=args.repeat, call_deadline=args.call_deadline,
                              add_deadline=args.add_deadline, pg_url=args.pg_url)]
    return _common.report("llm_faults", results, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
