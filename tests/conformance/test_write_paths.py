"""One governed write path (issue 10): every way of writing memory, on every backend,
goes through the write core. Each path is driven with planted personal data; then
the raw database (the SQLite file and its WAL, every PostgreSQL table of the schema)
must hold no plaintext of a kind the default policy masks or forbids, and a policy
hook that counts calls must have seen each change exactly once."""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from engram import Memory, MemoryDraft, Operation, PermissionDeniedError, PIIForbiddenError, PIIPolicy, Scope
from engram.llm.fake import ScriptedLLM
from engram.pipeline.llm_extract import LLMExtractor
from engram.pipeline.llm_reconcile import LLMReconciler
from engram.pipeline.run import Pipeline

from .conftest import Backend
from .faces import Blocking

pytestmark = [pytest.mark.records, pytest.mark.job_queue]  # the store roles it checks (conftest.py, ROLE_MARKERS)

ALICE = Scope.for_user("acme", "alice")


def resident_id(first17: str = "11010519900307123") -> str:
    """A Chinese resident ID number with a valid check character."""
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(d) * w for d, w in zip(first17, weights, strict=True))
    return first17 + "10X98765432"[total % 11]


PHONE, CARD, PASSWORD = "13812345678", "4111 1111 1111 1111", "hunter2secret"
CN_ID = resident_id()
PLANTED = f"Call Ana on {PHONE}; her ID number is {CN_ID} and the team card is {CARD}."
FORBIDDEN = f"The admin password is {PASSWORD}"
# what must never be found in the database, in any encoding the stores use
NEEDLES = (PHONE, CN_ID, CARD, CARD.replace(" ", ""), PASSWORD)


def llm_answer(*contents: str) -> str:
    items = [{"kind": "fact", "content": c, "confidence": 0.9, "importance": 0.8, "source_ids": ["m1"]}
             for c in contents]
    return json.dumps({"memories": items})


def say(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text, "id": "msg-1"}]


# -- the write paths ---------------------------------------------------------------------------


def remember(memory: Memory, backend: Backend) -> None:
    memory.remember(PLANTED, ALICE)
    with pytest.raises(PIIForbiddenError):
        memory.remember(FORBIDDEN, ALICE)


def remember_many(memory: Memory, backend: Backend) -> None:
    memory.remember_many([MemoryDraft(PLANTED, metadata={"note": PLANTED}), "a harmless fact"], ALICE)


def update(memory: Memory, backend: Backend) -> None:
    record = memory.remember("Ana's contact details", ALICE)
    memory.update(record.id, ALICE, content=PLANTED, metadata={"phone": PHONE})


def supersede(memory: Memory, backend: Backend) -> None:
    record = memory.remember("Ana has no phone", ALICE)
    memory.supersede(record.id, ALICE, PLANTED)


def add_with_rules(memory: Memory, backend: Backend) -> None:
    memory.add(say(f"My name is Ana Lima. My phone number is {PHONE}. {FORBIDDEN}."), ALICE, thread_id="t1")


def add_with_llm_merge(memory: Memory, backend: Backend) -> None:
    memory.remember("Ana can be reached by phone", ALICE)
    merge = json.dumps({"event": "UPDATE", "target_id": "0", "content": f"Ana can be reached on {PHONE}",
                        "reason": "more precise"})
    memory._pipeline = Pipeline(LLMExtractor(ScriptedLLM([llm_answer("Ana can be reached by phone",
                                                                    FORBIDDEN)])),
                                LLMReconciler(ScriptedLLM([merge])))
    result = memory.add(say("Ana's number, and the admin password"), ALICE)
    assert {e.event for e in result.events} == {"UPDATE", "SKIPPED"}


def background_add(memory: Memory, backend: Backend) -> None:
    memory._pipeline = Pipeline(LLMExtractor(ScriptedLLM([llm_answer(PLANTED)])))
    job = memory.add(say(f"{PLANTED} {FORBIDDEN}"), ALICE, background=True).job_id
    assert memory.jobs.drain() == 1
    done = memory.jobs.list("acme")[0]
    # a done job drops its turns and keeps only its scope (so that a purge of the scope finds it)
    assert done.id == job and done.status.value == "done" and dict(done.payload) == {
        "namespace": list(ALICE.namespace)}


def import_jsonl(memory: Memory, backend: Backend) -> None:
    elsewhere = Path(tempfile.mkdtemp()) / "elsewhere.db"  # plaintext allowed there, never in the tested one
    lenient = Memory.open(str(elsewhere), embedder=memory.embedder, clock=memory.clock,
                          pii=PIIPolicy(default="allow", actions={}))
    source = Scope("elsewhere", ("users", "alice"))
    record = lenient.remember("Ana's phone", source)
    lenient.update(record.id, source, content=PLANTED)  # two versions, both in the file
    dump = io.StringIO()
    lenient.transfer.export_to(dump, source)
    lenient.close()
    assert PHONE in dump.getvalue()
    memory.transfer.import_from(io.StringIO(dump.getvalue().replace('"elsewhere"', '"acme"')))


def deepagents_file(memory: Memory, backend: Backend) -> None:
    from engram.integrations.deepagents import EngramBackend

    files = EngramBackend(memory, namespace=ALICE.namespace, tenant="acme")
    assert files.write("/memories/contacts.md", PLANTED).error is None
    assert files.write("/memories/admin.md", FORBIDDEN).error is not None


def langgraph_put(memory: Memory, backend: Backend) -> None:
    from engram.integrations.langgraph import EngramStore

    face = memory._face if isinstance(memory, Blocking) else memory  # the async face: EngramStore takes AsyncMemory
    store = EngramStore(face, tenant="acme", index={"fields": ["text"]})
    store.put(("users", "alice"), "contact", {"text": PLANTED, "phone": PHONE})
    with pytest.raises(PermissionDeniedError):
        store.put(("users", "alice"), "admin", {"text": FORBIDDEN})


def http_create(memory: Memory, backend: Backend) -> None:
    from fastapi.testclient import TestClient

    from engram.server.http import create_app

    client = TestClient(create_app(memory, api_keys={"key-acme-0123456789": "acme"}))
    headers = {"Authorization": "Bearer key-acme-0123456789"}
    created = client.post("/v1/memories", json={"content": PLANTED, "scope": {"user": "alice"}}, headers=headers)
    assert created.status_code == 201, created.text
    refused = client.post("/v1/memories", json={"content": FORBIDDEN, "scope": {"user": "alice"}}, headers=headers)
    assert refused.status_code == 403, refused.text


def maintenance(memory: Memory, backend: Backend) -> None:
    memory.remember(PLANTED, ALICE, expires_at=memory.clock.now() + timedelta(seconds=1))
    memory.remember(PLANTED, ALICE)  # a duplicate to fold
    memory.clock.advance(seconds=2)
    report = memory.maintenance.run()
    assert report.expired == 1


def reindex(memory: Memory, backend: Backend) -> None:
    from engram import FakeHashEmbedder

    memory.remember(PLANTED, ALICE)
    other = Memory(backend.store(), embedder=FakeHashEmbedder(name="fake-hash-2"), clock=memory.clock,
                   policies=memory.policies)
    assert other.maintenance.reindex() == 1


PATHS: dict[str, Callable[[Memory, Backend], None]] = {
    f.__name__: f for f in (remember, remember_many, update, supersede, add_with_rules, add_with_llm_merge,
                            background_add, import_jsonl, deepagents_file, langgraph_put, http_create, maintenance,
                            reindex)
}


@dataclass
class CountingHook:
    """A policy hook that refuses nothing and counts what it is shown."""

    calls: int = 0

    def __call__(self, intent) -> None:
        self.calls += 1


def database_bytes(backend: Backend) -> bytes:
    if backend.name == "sqlite":
        files = [Path(backend.target), Path(backend.target + "-wal")]
        return b"".join(f.read_bytes() for f in files if f.exists())
    tables = [row[0] for row in backend.raw(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (backend.schema,))]
    rows = [backend.raw(f'SELECT t::text FROM "{table}" t') for table in tables]
    return "\n".join(str(value) for found in rows for row in found for value in row).encode()


RECORD_OPERATIONS = {op.value for op in Operation} - {"recall", "extract"}


def record_audit_rows(memory: Memory) -> int:
    return sum(1 for tenant in ("acme",) for e in memory.audit.list(Scope(tenant), limit=10_000)
                    if e.operation.value in RECORD_OPERATIONS)


@pytest.mark.parametrize("path", list(PATHS))
def test_no_plaintext_of_masked_or_forbidden_pii_reaches_the_database(backend, clock, path):
    from engram import Settings

    hook = CountingHook()
    memory = backend.memory(clock=clock, policies=[hook], settings=Settings(auto_worker=False))
    PATHS[path](memory, backend)
    stored = database_bytes(backend)
    found = [needle for needle in NEEDLES if needle.encode() in stored]
    assert found == [], f"{path} left plaintext in the {backend.name} database: {found}"
    # every change the path wrote was shown to the hook exactly once (one audit row per change)
    assert hook.calls == record_audit_rows(memory) > 0


def test_masked_values_keep_their_kind_and_raise_sensitivity(memory):
    record = memory.remember(PLANTED, ALICE, metadata={"contact": {"phones": [PHONE]}})
    assert record.content == "Call Ana on [PHONE]; her ID number is [CN_ID] and the team card is [CARD]."
    assert record.metadata["contact"]["phones"] == ["[PHONE]"]
    assert record.sensitivity.value == "secret"  # an ID number and a card
    assert memory.get(record.id, ALICE) == record


def test_ids_in_metadata_are_not_mistaken_for_personal_data(memory):
    ids = {"message": "0192a4c6b1e27d3f8a9b0c1d2e3f4a5b", "uuid": "123e4567-e89b-12d3-a456-426614174000"}
    record = memory.remember("a fact with ids", ALICE, metadata=ids)
    assert dict(record.metadata) == ids and record.sensitivity.value == "normal"


def test_a_tenant_policy_from_configuration_applies_to_that_tenant_only(backend, clock):
    from engram import PIIPolicies, Settings

    config = json.dumps({"tenants": {"acme": {"actions": {"phone": "forbid"}}}})
    memory = backend.memory(clock=clock, settings=Settings(pii_policy=config))
    assert isinstance(memory._core.pii, PIIPolicies)
    with pytest.raises(PIIForbiddenError, match="phone"):
        memory.remember(f"Ana: {PHONE}", ALICE)
    other = memory.remember(f"Ana: {PHONE}", Scope.for_user("globex", "ana"))
    assert other.content == "Ana: [PHONE]"
    assert memory.stats("acme").extra["pii_policy"]["phone"] == "forbid"


def test_forgetting_is_never_blocked_by_a_stricter_policy(backend, clock):
    lenient = backend.memory(clock=clock, pii=PIIPolicy(default="allow", actions={}))
    record = lenient.remember(f"Ana: {PHONE}", ALICE)
    strict = backend.memory(clock=clock, pii=PIIPolicy(actions={"phone": "forbid"}))
    forgotten = strict.forget(record.id, ALICE, reason="user asked")
    assert forgotten.status.value == "deleted" and PHONE not in forgotten.content
