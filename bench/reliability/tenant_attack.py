"""Cross-tenant attack: a victim tenant stores records holding a secret marker; an
attacker with its own tenant tries to read, change or learn about them through the
Python API (scope tricks), the HTTP API (its own API key), MCP (tools bound to its own
user) and EngramStore. Any answer holding the marker or a victim record id, any change
to a victim record, and any 5xx is a leak. The side channel is measured separately:
how much the victim's writes move the score the attacker sees for its own record.

    python bench/reliability/tenant_attack.py --backend both --rounds 3
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from engram import EngramError, FakeHashEmbedder, Memory, Scope, Settings

VICTIM, ATTACKER = "victim", "attacker"
KEYS = {"key-victim-0123456789": VICTIM, "key-attacker-0123456789": ATTACKER}
ATTACK = {"Authorization": "Bearer key-attacker-0123456789"}
LABEL_TRICKS = ["victim", "..", "../victim", "*", "%", "_", "/", "\\", "' OR '1'='1", "victim/users", "%victim%",
                "users/*", "ｖｉｃｔｉｍ", "victim ", "\u200bvictim", "victim\x00", "", " "]


def _open(url: str) -> Memory:
    return Memory.open(url, embedder=FakeHashEmbedder(), settings=Settings(auto_worker=False))


class Findings:
    def __init__(self, marker: str, victim_ids: set[str]) -> None:
        self.marker, self.victim_ids = marker, victim_ids
        self.attempts = 0
        self.leaks: list[str] = []
        self.server_errors: list[str] = []

    def check(self, where: str, shown: Any) -> None:
        """A leak: the marker, or a victim record id the attacker did not send itself
        (an error echoing the id it asked for says nothing new)."""
        self.attempts += 1
        text = shown if isinstance(shown, str) else json.dumps(shown, default=str, ensure_ascii=False)
        if self.marker in text or any(rid in text and rid not in where for rid in self.victim_ids):
            self.leaks.append(where)


def _letters(n: int) -> str:
    """A random word of letters only: a run of digits could be taken for personal data
    (a phone number) and masked by the PII policy, and the marker would vanish."""
    return "".join(chr(ord("a") + b % 26) for b in uuid.uuid4().bytes[:n])


def _plant(memory: Memory, marker: str) -> set[str]:
    ids = set()
    for namespace in (("users", "ana"), ("users", "ana", "private"), ("orgs", "acme"), ()):
        record = memory.remember(f"{marker} secret plan of {'/'.join(namespace) or 'root'}",
                                 Scope(VICTIM, namespace), metadata={"secret": marker}, tags=[marker])
        ids.add(record.id)
    return ids


def _python_attacks(memory: Memory, found: Findings) -> None:
    root = Scope(ATTACKER)
    for record_id in found.victim_ids:
        for label, call in (
            ("get", lambda rid=record_id: memory.get(rid, root)),
            ("history", lambda rid=record_id: memory.history(rid, root)),
            ("update", lambda rid=record_id: memory.update(rid, root, content="pwned")),
            ("forget", lambda rid=record_id: memory.forget(rid, root)),
            ("purge", lambda rid=record_id: memory.purge(rid, root)),
        ):
            _attempt(found, f"python {label} {record_id}", call)
    for label in LABEL_TRICKS:
        for namespace in ((label,), ("users", label)):
            _attempt(found, f"python list {namespace!r}", lambda ns=namespace: [
                r.id for r in memory.list(Scope(ATTACKER, ns), include_descendants=True).items])
            _attempt(found, f"python search {namespace!r}", lambda ns=namespace: [
                h.record.id for h in memory.search(found.marker, Scope(ATTACKER, ns), include_descendants=True)])
    _attempt(found, "python search root", lambda: [h.record.content for h in memory.search(
        f"{found.marker} secret plan", root, include_descendants=True, k=100)])
    _attempt(found, "python metadata filter", lambda: [r.id for r in memory.list(
        root, include_descendants=True, metadata={"secret": found.marker}).items])
    _attempt(found, "python namespaces", lambda: memory.scopes.namespaces(root))
    _attempt(found, "python audit", lambda: [e.record_id for e in memory.audit.list(root, limit=1000)])
    _attempt(found, "python context", lambda: memory.context(f"{found.marker} plan", root).text)


def _attempt(found: Findings, where: str, call) -> None:
    try:
        found.check(where, call())
    except EngramError as exc:
        found.check(where, str(exc))


def _http_attacks(memory: Memory, found: Findings) -> None:
    from fastapi.testclient import TestClient

    from engram.server.http import create_app

    client = TestClient(create_app(memory, api_keys=KEYS), raise_server_exceptions=False)
    requests: list[tuple[str, str, dict[str, Any]]] = []
    for record_id in found.victim_ids:
        for params in ({}, {"user": "ana"}, {"namespace": ["users", "ana"]}):
            requests += [
                ("GET", f"/v1/memories/{record_id}", {"params": params}),
                ("GET", f"/v1/memories/{record_id}/history", {"params": params}),
                ("GET", f"/v1/memories/{record_id}/why", {"params": params}),
                ("PATCH", f"/v1/memories/{record_id}", {"params": params, "json": {"content": "pwned"}}),
                ("DELETE", f"/v1/memories/{record_id}", {"params": params}),
                ("POST", f"/v1/memories/{record_id}/restore", {"params": params}),
                ("POST", f"/v1/memories/{record_id}/purge", {"params": params}),
                ("POST", f"/v1/memories/{record_id}/reveal", {"params": params}),
            ]
    for label in LABEL_TRICKS:
        requests += [
            ("GET", "/v1/memories", {"params": {"namespace": [label], "include_descendants": "true"}}),
            ("GET", "/v1/memories", {"params": {"user": label}}),
            ("POST", "/v1/search", {"json": {"query": found.marker, "scope": {"namespace": [label]},
                                             "include_descendants": True}}),
            ("POST", "/v1/search", {"json": {"query": found.marker, "scope": {"user": label, "tenant": VICTIM}}}),
            ("GET", "/v1/namespaces", {"params": {"namespace": [label]}}),
        ]
    requests += [
        ("POST", "/v1/search", {"json": {"query": found.marker, "include_descendants": True, "k": 1000}}),
        ("POST", "/v1/search", {"json": {"query": "x", "include_descendants": True,
                                         "metadata": {"secret": found.marker}}}),
        ("POST", "/v1/context", {"json": {"query": found.marker}}),
        ("POST", "/v1/memories", {"json": {"content": "x", "scope": {"namespace": ["a"]}, "tenant": VICTIM}}),
        ("GET", "/v1/memories", {"params": {"tenant": VICTIM, "include_descendants": "true"}}),
        ("GET", "/v1/export", {}),
        ("GET", "/v1/audit", {"params": {"limit": 1000}}),
        ("GET", "/v1/stats", {}),
        ("GET", "/v1/jobs", {}),
        ("POST", "/v1/purge", {"json": {"scope": {"namespace": ["users"]}}}),
        ("POST", "/v1/import", {"content": _victim_export(memory).encode("utf-8"),
                                "headers": {"Content-Type": "application/x-ndjson"}}),
        ("GET", "/v1/memories", {"headers": {"Authorization": "Bearer key-victim-012345678"}}),  # a near-miss key
        ("GET", "/v1/memories", {"headers": {"Authorization": "Bearer "}}),
    ]
    for method, path, options in requests:
        headers = {**ATTACK, **options.pop("headers", {})}
        answer = client.request(method, path, headers=headers, **options)
        if answer.status_code >= 500:
            found.server_errors.append(f"HTTP {method} {path} → {answer.status_code}")
        found.check(f"HTTP {method} {path} {options}", answer.text)


def _victim_export(memory: Memory) -> str:
    import io

    buffer = io.StringIO()
    memory.transfer.export_to(buffer, Scope(VICTIM))
    return buffer.getvalue()


def _mcp_attacks(memory: Memory, found: Findings) -> None:
    import anyio
    from mcp import Client

    from engram.server.mcp import create_mcp_server

    async def main() -> None:
        async with Client(create_mcp_server(memory, Scope.for_user(ATTACKER, "mallory"))) as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("search", {"query": found.marker}), ("context", {"query": found.marker})]
            for record_id in found.victim_ids:
                calls += [("forget", {"memory_id": record_id}), ("history", {"memory_id": record_id})]
            calls += [("search", {"query": found.marker, "tenant": VICTIM, "user": "ana"})]
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                found.check(f"MCP {tool} {arguments}", str(result.content) + str(result.structured_content))

    anyio.run(main)


def _store_attacks(memory: Memory, found: Findings) -> None:
    from engram.integrations.langgraph import EngramStore

    store = EngramStore(memory, tenant=ATTACKER)
    _attempt(found, "store search", lambda: [i.dict() for i in store.search((), query=found.marker, limit=100)])
    _attempt(found, "store list_namespaces", lambda: store.list_namespaces())
    for label in ("users", "victim", "*", ".."):
        _attempt(found, f"store search {label}", lambda lb=label: [i.dict() for i in store.search((lb,), limit=100)])
        _attempt(found, f"store get {label}", lambda lb=label: store.get((lb, "ana"), "k"))


def _victim_intact(memory: Memory, found: Findings) -> list[str]:
    """Victim records the attacker changed (content, status or version)."""
    changed = []
    for record in memory._store.get(VICTIM, sorted(found.victim_ids)):
        if record.version != 1 or found.marker not in record.content:
            changed.append(record.id)
    missing = found.victim_ids - {r.id for r in memory._store.get(VICTIM, sorted(found.victim_ids))}
    return changed + sorted(missing)


def side_channel(memory: Memory, word: str, documents: int) -> dict[str, Any]:
    """What the attacker sees of its own records for a query (their lexical signals),
    before and after the victim stores ``documents`` records holding one of the query's
    words. Any change is a side channel: the victim's data moved the attacker's ranking."""
    own = Scope(ATTACKER, ("users", "eve"))
    memory.remember(f"{word} is a rare name in my notes", own)
    memory.remember("common words and more common words in my notes", own)
    query = f"{word} common"

    def seen() -> list[float]:
        return [round(h.signals.lexical, 6) for h in memory.search(query, own, retriever="bm25", k=5)]

    before = seen()
    for i in range(documents):
        memory.remember(f"{word} visited the office on day {i}", Scope(VICTIM, ("users", "ana")))
    after = seen()
    return {"before": before, "after": after, "changed": before != after}


def turn_side_channel(memory: Memory, documents: int, own_turns: int = 150) -> dict[str, Any]:
    """The same for past conversations (issue 21 item 3): the attacker keeps more turns
    holding one of two query words than a search reads as candidates; the victim keeps
    ``documents`` turns holding one of them. What the attacker's search returns (threads,
    scores, the turns matched) must not move. Before, the candidates were pre-ranked by
    FTS5's bm25() over every tenant's turns: the victim's turns changed which of the
    attacker's own were read."""
    first, second = "wum" + _letters(6), "vex" + _letters(6)
    own = Scope(ATTACKER, ("users", "mallory"))
    for i in range(own_turns):
        memory.threads.record([f"{first} note {i}", f"{second} memo {i}"], own, thread_id=f"t{i % 7}")

    def seen() -> list[Any]:
        return [(e.thread_id, e.score, [t.seq for t in e.turns if t.matched])
                for e in memory.threads.search(f"{first} {second}", own, k=7)]

    before = seen()
    victim = Scope(VICTIM, ("users", "ana"))
    for start in range(0, documents, 100):
        memory.threads.record([f"{first} {first} visited" for _ in range(min(100, documents - start))], victim,
                              thread_id=f"v{start}")
    after = seen()
    return {"before": before[:2], "after": after[:2], "changed": before != after}


def run(backend: str, *, rounds: int = 1, pg_url: str | None = None, side_documents: int = 50) -> dict[str, Any]:
    target = _common.new_target(backend, pg_url=pg_url)
    try:
        totals = {"attempts": 0, "leaks": [], "server_errors": [], "changed": []}
        with _open(target.url) as memory:
            for _ in range(rounds):
                marker = "zq" + _letters(12)
                found = Findings(marker, _plant(memory, marker))
                for attack in (_python_attacks, _http_attacks, _mcp_attacks, _store_attacks):
                    attack(memory, found)
                totals["attempts"] += found.attempts
                totals["leaks"] += found.leaks
                totals["server_errors"] += found.server_errors
                totals["changed"] += _victim_intact(memory, found)
            channel = side_channel(memory, "zorblax" + _letters(6), side_documents)
            turns = turn_side_channel(memory, max(side_documents, 20) * 10)
        return {"backend": backend, "attempts": totals["attempts"], "leaks": len(totals["leaks"]),
                "first_leak": totals["leaks"][0] if totals["leaks"] else None,
                "server_errors": len(totals["server_errors"]), "victim_records_changed": len(totals["changed"]),
                "side_channel": channel, "turn_side_channel": turns,
                "ok": not totals["leaks"] and not totals["server_errors"] and not totals["changed"]
                and not channel["changed"] and not turns["changed"]}
    finally:
        target.close()


def main() -> int:
    parser = _common.parser(__doc__ or "")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--side-documents", type=int, default=50)
    args = parser.parse_args()
    results = [run(b, rounds=args.rounds, pg_url=args.pg_url, side_documents=args.side_documents)
               for b in _common.backends_of(args)]
    return _common.report("tenant_attack", results, args.json_out)


if __name__ == "__main__":
    raise SystemExit(main())
