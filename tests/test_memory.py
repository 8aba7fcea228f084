"""The Memory facade on SQLite: writes, versions, audit, governance, bad input."""

from datetime import timedelta

import pytest

from engram import (
    ConflictError,
    InvalidContentError,
    InvalidValueError,
    Kind,
    NotFoundError,
    Operation,
    PermissionDeniedError,
    Scope,
    Status,
)


def test_remember_then_get_round_trips_every_field(memory, alice, clock):
    record = memory.remember(
        "Prefers concise reports", alice, kind="preference", importance=0.7, confidence=0.9,
        category="style", tags=["reports"], metadata={"team": "sales", "level": 3},
        expires_at=clock.now() + timedelta(days=30),
    )
    stored = memory.get(record.id, alice)
    assert stored == record
    assert stored.kind is Kind.PREFERENCE and stored.version == 1 and stored.status is Status.ACTIVE
    assert dict(stored.metadata) == {"team": "sales", "level": 3}
    assert stored.embedding_model == "fake-hash"


def test_every_change_is_a_new_version_with_who_when_why(memory, alice, clock):
    record = memory.remember("Lives in Berlin", alice)
    clock.advance(days=1)
    memory.update(record.id, alice, content="Lives in Munich", reason="moved", actor="agent-1")
    clock.advance(days=1)
    memory.forget(record.id, alice, reason="asked to forget", actor="alice")
    history = memory.history(record.id, alice)
    assert [(v.version, v.operation) for v in history] == [
        (1, Operation.CREATE), (2, Operation.UPDATE), (3, Operation.FORGET)
    ]
    assert [v.record.content for v in history] == ["Lives in Berlin", "Lives in Munich", "Lives in Munich"]
    assert [v.actor for v in history] == ["app", "agent-1", "alice"]
    assert history[1].reason == "moved" and history[1].at == history[0].at + timedelta(days=1)
    assert history[2].record.status is Status.DELETED


def test_audit_rows_match_versions(memory, alice):
    record = memory.remember("Likes tea", alice)
    memory.update(record.id, alice, importance=0.9)
    events = memory.audit.list(alice, record_id=record.id)
    assert [(e.operation, e.version) for e in events] == [(Operation.CREATE, 1), (Operation.UPDATE, 2)]


def test_forgotten_memories_leave_search_but_keep_history(memory, alice):
    record = memory.remember("Allergic to peanuts", alice)
    assert memory.search("peanuts", alice)
    memory.forget(record.id, alice)
    assert memory.search("peanuts", alice) == []
    assert memory.get(record.id, alice).status is Status.DELETED


def test_supersede_keeps_the_old_fact_linked_and_closed(memory, alice, clock):
    old = memory.remember("Works at Acme", alice, kind="fact", importance=0.6)
    clock.advance(hours=1)
    retired, new = memory.supersede(old.id, alice, "Works at Globex", reason="changed jobs")
    assert retired.status is Status.SUPERSEDED and retired.valid_to == clock.now()
    assert retired.superseded_by == new.id and new.supersedes == old.id and new.importance == 0.6
    assert [h.record.id for h in memory.search("works", alice)] == [new.id]


def test_purge_removes_record_and_versions_and_audits_without_content(memory, alice):
    record = memory.remember("Secret diagnosis", alice)
    memory.update(record.id, alice, content="Secret diagnosis, updated")
    memory.purge(record.id, alice, reason="GDPR request")
    with pytest.raises(NotFoundError):
        memory.get(record.id, alice)
    assert memory._store.versions("acme", record.id) == []
    purge_events = memory.audit.list(alice, record_id=record.id, operation=Operation.PURGE)
    assert len(purge_events) == 1
    assert "Secret" not in str(purge_events[0].detail)
    raw = memory._store.execute_raw("SELECT count(*) FROM lexical_postings WHERE term = 'secret'")
    assert raw == [(0,)]


def test_purge_scope_removes_a_whole_user_and_nothing_else(memory, alice, bob):
    for text in ("a one", "a two"):
        memory.remember(text, alice)
    memory.remember("nested", alice.child("private"))
    memory.remember("b one", bob)
    assert memory.purge_scope(alice).records == 3
    assert memory.list(bob).items[0].content == "b one"


def test_compare_and_swap_update(memory, alice):
    record = memory.remember("v1", alice)
    memory.update(record.id, alice, content="v2", expected_version=1)
    with pytest.raises(ConflictError):
        memory.update(record.id, alice, content="v3", expected_version=1)
    assert memory.get(record.id, alice).content == "v2"


def test_read_only_memories_refuse_changes_unless_overridden(memory, alice):
    record = memory.remember("Expense limit is 5000", alice, kind="rule", read_only=True)
    with pytest.raises(PermissionDeniedError):
        memory.update(record.id, alice, content="Expense limit is 9000")
    with pytest.raises(PermissionDeniedError):
        memory.forget(record.id, alice)
    memory.update(record.id, alice, content="Expense limit is 6000", override_read_only=True)
    assert memory.get(record.id, alice).version == 2


def test_policy_hook_can_refuse_a_write_and_nothing_is_stored(memory, alice):
    def no_budgets(intent):
        if intent.record is not None and "budget" in intent.record.content.lower():
            raise PermissionDeniedError("policy: budgets need approval")

    memory.policies.append(no_budgets)
    with pytest.raises(PermissionDeniedError, match="approval"):
        memory.remember_many(["ok fact", "the travel budget is 500"], alice)
    assert memory.list(alice).items == ()


def test_get_outside_scope_is_not_found(memory, alice, bob):
    record = memory.remember("alice only", alice)
    with pytest.raises(NotFoundError):
        memory.get(record.id, bob)
    with pytest.raises(NotFoundError):
        memory.get(record.id, Scope("other-tenant"))
    assert memory.get(record.id, Scope("acme")).id == record.id


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"content": ""}, InvalidContentError),
        ({"content": "   "}, InvalidContentError),
        ({"content": "x" * 8001}, InvalidContentError),
        ({"content": 42}, InvalidContentError),
        ({"content": "ok", "importance": float("nan")}, InvalidValueError),
        ({"content": "ok", "confidence": 2}, InvalidValueError),
        ({"content": "ok", "kind": "opinion"}, InvalidValueError),
        ({"content": "ok", "metadata": {"x": float("nan")}}, InvalidValueError),
        ({"content": "ok", "tags": "single-string"}, InvalidValueError),
    ],
)
def test_bad_input_is_a_typed_error_and_changes_nothing(memory, alice, kwargs, error):
    existing = memory.remember("already stored", alice)
    before = memory.stats()
    content = kwargs.pop("content")
    with pytest.raises(error):
        memory.remember(content, alice, **kwargs)
    assert memory.stats() == before
    assert memory.get(existing.id, alice) == existing


def test_a_batch_with_one_bad_item_writes_nothing(memory, alice):
    with pytest.raises(InvalidContentError):
        memory.remember_many(["good", ""], alice)
    assert memory.list(alice).items == ()


def test_update_rejects_unknown_fields_and_empty_changes(memory, alice):
    record = memory.remember("x", alice)
    with pytest.raises(InvalidValueError, match="editable"):
        memory.update(record.id, alice, id="other")
    with pytest.raises(InvalidValueError):
        memory.update(record.id, alice)


def test_expired_memories_are_not_recalled(memory, alice, clock):
    memory.remember("Temporary door code 4711", alice, expires_at=clock.now() + timedelta(hours=1))
    assert memory.search("door code", alice)
    clock.advance(hours=2)
    assert memory.search("door code", alice) == []


def test_list_pages_through_everything(memory, alice):
    memory.remember_many([f"fact number {i}" for i in range(7)], alice)
    first = memory.list(alice, limit=5)
    second = memory.list(alice, offset=first.next_offset, limit=5)
    assert len(first.items) == 5 and len(second.items) == 2 and second.next_offset is None
    assert len({r.id for r in first.items + second.items}) == 7


def test_context_records_which_memories_served_an_answer(memory, alice):
    record = memory.remember("Prefers concise reports", alice, kind="preference")
    block = memory.context("how long should the report be", alice, answer_id="answer-7")
    assert record.id in {hit.record.id for hit in block.hits}
    recalls = memory.audit.list(alice, record_id=record.id, operation=Operation.RECALL)
    assert recalls and recalls[0].detail["answer_id"] == "answer-7"
    assert memory.get(record.id, alice).access_count == 1


def test_restore_brings_a_forgotten_memory_back_in_the_same_history(memory, alice):
    record = memory.remember("Likes jazz", alice)
    memory.forget(record.id, alice, reason="mistake")
    restored = memory.restore(record.id, alice, reason="user said it again", content="Likes jazz and blues")
    assert restored.status is Status.ACTIVE and restored.version == 3
    assert [v.operation for v in memory.history(record.id, alice)] == [
        Operation.CREATE, Operation.FORGET, Operation.RESTORE
    ]
    assert memory.search("blues", alice)[0].record.id == record.id
    with pytest.raises(InvalidValueError, match="already active"):
        memory.restore(record.id, alice)
