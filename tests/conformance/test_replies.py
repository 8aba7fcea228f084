"""A turn said in reply to the other side's question is indexed with that question
(``Source.reply_to``), on every backend: found by the question's words, kept
through versions and export/import, never shown as its content."""

import io
from datetime import timedelta

import pytest

from engram import InvalidContentError, Settings, Source, ValidationError
from engram.replies import question_of
from engram.writes import MemoryDraft

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)

CONVERSATION = [
    ("assistant", "Which city did you move to last spring?"),
    ("user", "Lisbon. The light there is wonderful."),
    ("assistant", "That sounds lovely. What do you do for work now?"),
    ("user", "I restore old sailing boats."),
    ("user", "Also, I have started learning the cello."),
]


def _drafts(thread: str = "t1") -> list[MemoryDraft]:
    return [MemoryDraft(text, kind="episode", source=Source(actor=actor, thread_id=thread))
            for actor, text in CONVERSATION]


def test_an_answer_is_found_by_the_words_of_its_question(real_memory, alice):
    records = real_memory.remember_many(_drafts(), alice)
    assert [r.source.reply_to for r in records] == [
        None, CONVERSATION[0][1], None, "What do you do for work now?", None,
    ]
    hits = real_memory.search("what city did the user move to", alice, k=5)
    assert "Lisbon. The light there is wonderful." in [h.record.content for h in hits[:2]]
    lexical = real_memory.search("which city move spring", alice, k=5, retriever="bm25")
    assert "Lisbon. The light there is wonderful." in [h.record.content for h in lexical]


def test_the_question_never_becomes_the_content(memory, alice):
    answer = memory.remember_many(_drafts(), alice)[1]
    stored = memory.get(answer.id, alice)
    assert stored.content == "Lisbon. The light there is wonderful."
    assert stored.source.reply_to == "Which city did you move to last spring?"
    assert memory.history(answer.id, alice)[0].record.source.reply_to == stored.source.reply_to
    updated = memory.update(answer.id, alice, content="Lisbon, since May.")
    assert updated.source.reply_to == stored.source.reply_to


def test_only_a_question_from_the_other_side_of_the_same_thread_links(memory, alice):
    drafts = [
        MemoryDraft("Shall we meet on Monday?", source=Source(actor="user", thread_id="a")),
        MemoryDraft("Or rather Tuesday?", source=Source(actor="user", thread_id="a")),  # same speaker
        MemoryDraft("Tuesday works.", source=Source(actor="assistant", thread_id="b")),  # another thread
        MemoryDraft("Is it raining?", source=Source(actor="user")),
        MemoryDraft("No.", source=Source(actor="assistant")),  # no thread at all
        MemoryDraft("Where?", source=Source(actor="user", thread_id="c")),
        MemoryDraft("Here.", source=Source(actor="assistant", thread_id="c", reply_to="my own context")),
    ]
    records = memory.remember_many(drafts, alice)
    assert [r.source.reply_to for r in records] == [None] * 6 + ["my own context"]


def test_linking_can_be_switched_off(backend, clock, alice):
    memory = backend.memory(clock=clock, settings=Settings(reply_context=False))
    records = memory.remember_many(_drafts(), alice)
    assert all(r.source.reply_to is None for r in records)


@pytest.mark.parametrize("bad", ["", "   ", "with a NUL \x00 inside", "x" * 2_000])
def test_a_bad_reply_to_is_refused_and_nothing_is_written(backend, clock, alice, bad):
    memory = backend.memory(clock=clock, settings=Settings(max_content_chars=1_000))
    memory.remember("already here", alice)
    drafts = [MemoryDraft("fine"), MemoryDraft("answer", source=Source(actor="user", reply_to=bad))]
    with pytest.raises(InvalidContentError, match="reply_to"):
        memory.remember_many(drafts, alice)
    assert [r.content for r in memory.list(alice).items] == ["already here"]


def test_export_and_import_keep_the_question(make_backend, backend, clock, alice):
    source = backend.memory(clock=clock)
    answer = source.remember_many(_drafts(), alice)[1]
    buffer = io.StringIO()
    source.transfer.export_to(buffer, alice)
    target = make_backend(backend.name).memory(clock=clock)
    target.transfer.import_from(io.StringIO(buffer.getvalue()))
    assert target.get(answer.id, alice).source.reply_to == "Which city did you move to last spring?"
    hits = target.search("which city move spring", alice, k=3, retriever="bm25")
    assert answer.id in [h.record.id for h in hits]



@pytest.mark.parametrize("poison", ['"Which city\\u0000 did you move to last spring?"', '""', "42"])
def test_an_import_with_a_bad_reply_to_is_refused_and_writes_nothing(backend, clock, alice, poison):
    memory = backend.memory(clock=clock)
    memory.remember_many(_drafts(), alice)
    exported = io.StringIO()
    memory.transfer.export_to(exported, alice)
    text = exported.getvalue()
    field = '"reply_to": "Which city did you move to last spring?"'
    assert field in text
    before = memory.stats("acme")
    with pytest.raises(ValidationError, match="reply_to"):
        memory.transfer.import_from(io.StringIO(text.replace(field, f'"reply_to": {poison}')), on_conflict="replace")
    assert memory.stats("acme") == before


def test_turns_written_one_call_at_a_time_link_like_a_batch(memory, alice, clock):
    one_by_one = []
    for actor, text in CONVERSATION:
        one_by_one.append(memory.remember(text, alice, kind="episode", source=Source(actor=actor, thread_id="t1")))
        clock.advance(seconds=20)
    batched = memory.remember_many(_drafts("t2"), alice)
    assert [r.source.reply_to for r in one_by_one] == [r.source.reply_to for r in batched]
    assert one_by_one[1].source.reply_to == CONVERSATION[0][1]


def test_a_batch_continues_the_thread_already_stored(memory, alice, clock):
    memory.remember_many(_drafts()[:1], alice)  # the question, in an earlier call
    clock.advance(seconds=30)
    forgotten = memory.remember("What is your cat called?", alice,
                                source=Source(actor="assistant", thread_id="other"))
    memory.forget(forgotten.id, alice)  # forgotten, but it was still asked
    clock.advance(seconds=30)
    answer, other = memory.remember_many(
        [MemoryDraft("Lisbon.", source=Source(actor="user", thread_id="t1")),
         MemoryDraft("Mimi.", source=Source(actor="user", thread_id="other"))], alice)
    assert answer.source.reply_to == CONVERSATION[0][1]
    assert other.source.reply_to == "What is your cat called?"


def test_a_turn_dated_before_the_question_does_not_answer_it(memory, alice, clock):
    asked = memory.remember("Where do you live?", alice, source=Source(actor="assistant", thread_id="t"))
    earlier = memory.remember("I like tea.", alice, valid_from=asked.valid_from - timedelta(minutes=5),
                              source=Source(actor="user", thread_id="t"))
    assert earlier.source.reply_to is None


def test_stored_turns_of_other_scopes_and_threads_never_link(memory, alice, bob):
    memory.remember("Where do you live?", bob, source=Source(actor="assistant", thread_id="t"))
    memory.remember("Where do you work?", alice, source=Source(actor="assistant", thread_id="u"))
    answer = memory.remember("Berlin.", alice, source=Source(actor="user", thread_id="t"))
    assert answer.source.reply_to is None


@pytest.mark.parametrize(("turn", "question"), [
    ("Which city did you move to last spring?", "Which city did you move to last spring?"),
    ("That sounds lovely. What do you do for work now?", "What do you do for work now?"),
    ("Nice! Was it hard? And who helped you?", "Was it hard? And who helped you?"),
    ("Here are ten tips on sleep. " * 40 + "Anything else I can help with?", "Anything else I can help with?"),
    ("太好了！你现在住在哪里？", "你现在住在哪里？"),
    ("Really?!", "Really?"),
    ("??", ""),
])
def test_a_reply_keeps_the_questions_not_the_whole_turn(turn, question):
    assert question_of(turn) == question
