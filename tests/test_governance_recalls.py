"""Which answer used which memory: recall ids from context()/recall(), answers linked
afterwards with the memories they used, and the provenance of a memory."""

import pytest

from engram import InvalidValueError, NotFoundError, Operation, Scope, Settings
from engram.governance.recalls import coverage
from engram.text.tokenize import query_terms


@pytest.fixture
def stocked(memory, alice):
    tea = memory.remember("Prefers green tea over coffee", alice, kind="preference")
    city = memory.remember("Lives in Lisbon near the river", alice)
    return memory, tea, city


def test_context_returns_a_recall_id_and_the_answer_links_the_memories_it_used(stocked, alice, clock):
    memory, tea, city = stocked
    block = memory.context("what should I drink? green tea or coffee, living in Lisbon", alice, thread_id="t1")
    assert block.recall_id and {h.record.id for h in block.hits} == {tea.id, city.id}
    clock.advance(seconds=3)
    linked = memory.audit.link_answer(block.recall_id, alice, answer_id="msg-7",
                                      answer="Since you prefer green tea over coffee, try a sencha.")
    assert (linked.answer_id, linked.used) == ("msg-7", (tea.id,))
    [trace] = memory.audit.answer("msg-7", alice)
    assert trace.recall.thread_id == "t1" and trace.recall.latency_ms is not None
    shown = {m.record_id: (m.used, m.record.content if m.record else None) for m in trace.memories}
    assert shown == {tea.id: (True, tea.content), city.id: (False, city.content)}
    assert [m.score for m in trace.memories] == sorted((m.score for m in trace.memories), reverse=True)
    assert memory.audit.answer(block.recall_id, alice)[0].recall.id == block.recall_id
    recall_rows = memory.audit.list(alice, operation="recall")
    assert {e.detail["recall_id"] for e in recall_rows} == {block.recall_id}


def test_citations_win_over_overlap_and_unknown_ids_are_ignored(stocked, alice):
    memory, tea, city = stocked
    recall = memory.recall("tea or coffee in Lisbon", alice, thread_id="t1")
    assert recall.id and {h.record.id for h in recall.hits} == {tea.id, city.id}
    linked = memory.audit.link_answer(recall.id, alice, answer_id="a1", answer="irrelevant", used=[city.id, "not-recalled"])
    assert linked.used == (city.id,)


def test_a_recall_that_found_nothing_is_recorded_too(memory, alice):
    block = memory.context("anything at all", alice)
    assert block.hits == () and block.recall_id
    assert memory.audit.link_answer(block.recall_id, alice, answer_id="a", answer="Hello!").used == ()


def test_without_recorded_recalls_there_is_no_recall_id(db_path, clock, alice):
    from engram import FakeHashEmbedder, Memory
    from engram.store.sqlite import SQLiteStore

    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock,
                settings=Settings(record_recalls=False)) as memory:
        memory.remember("Likes hiking", alice)
        assert memory.context("hiking", alice).recall_id is None
        assert memory.recall("hiking", alice).id is None


def test_bad_links_are_refused_and_change_nothing(stocked, alice):
    memory, _, _ = stocked
    block = memory.context("tea", alice)
    with pytest.raises(NotFoundError):
        memory.audit.link_answer("no-such-recall", alice, answer_id="a")
    with pytest.raises(NotFoundError):
        memory.audit.link_answer(block.recall_id, Scope("globex", ("users", "alice")), answer_id="a")
    for bad in ({"answer_id": ""}, {"answer_id": "a", "used": "tea"}, {"answer_id": "a", "answer": 5}):
        with pytest.raises(InvalidValueError):
            memory.audit.link_answer(block.recall_id, alice, **bad)
    assert memory.audit.answer(block.recall_id, alice)[0].recall.answer_id is None
    with pytest.raises(NotFoundError):
        memory.audit.answer("never-answered", alice)


def test_why_shows_where_a_memory_came_from(memory, alice, clock):
    result = memory.add([{"role": "user", "content": "I live in Lisbon.", "id": "m-1"}], alice, thread_id="t-9")
    record_id = result.events[0].record_id
    clock.advance(minutes=1)
    memory.update(record_id, alice, content="Lives in Lisbon, Portugal", reason="more precise", actor="alice")
    block = memory.context("Where do I live?", alice, thread_id="t-10")
    memory.audit.link_answer(block.recall_id, alice, answer_id="msg-3", answer="You live in Lisbon, Portugal.")
    why = memory.audit.why(record_id, alice)
    assert (why.thread_id, why.message_ids, why.extractor) == ("t-9", ("m-1",), "rules")
    assert [(v.version, v.operation, v.actor) for v in why.versions] == [
        (1, Operation.CREATE, "pipeline"), (2, Operation.UPDATE, "alice")]
    assert [e.operation for e in why.events] == [Operation.CREATE, Operation.UPDATE]
    assert [(a.answer_id, a.used) for a in why.answers] == [("msg-3", (record_id,))]
    with pytest.raises(NotFoundError):
        memory.audit.why(record_id, Scope("acme", ("users", "bob")))


def test_overlap_is_measured_on_the_memorys_terms():
    said = set(query_terms("She moved to Lisbon last spring"))
    assert coverage(said, "Lives in Lisbon") == 0.5  # "live" is not said, "lisbon" is
    assert coverage(said, "Moved to Lisbon") == 1.0
    assert coverage(said, "") == 0.0
