"""Benchmark loaders: the shapes they build and the errors they raise on bad files."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

import pytest

from engram.errors import BenchmarkDataError
from engram.eval.data import (
    dialogue_lines,
    load,
    load_locomo,
    load_longmemeval,
    load_madial,
    parse_locomo_date,
    parse_longmemeval_date,
)


def _locomo_sample(**overrides):
    sample = {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a photo of a cat"},
            ],
            "session_2_date_time": "10:00 am on 9 May, 2023",
            "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "The cat is called Tom."}],
        },
        "qa": [
            {"question": "What pet did Ann adopt?", "answer": "a cat", "evidence": ["D1:1"], "category": 4},
            {"question": "Name?", "answer": "Tom", "evidence": ["D2:1; D1:1"], "category": 1},
            {"question": "Broken", "answer": "x", "evidence": ["D9:99"], "category": 2},
        ],
    }
    sample.update(overrides)
    return sample


def _write(path, data):
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_locomo_loads_turns_and_evidence(tmp_path):
    data = load_locomo(_write(tmp_path / "locomo.json", [_locomo_sample()]))
    unit, = data.units
    assert [d.id for d in unit.docs] == ["D1:1", "D1:2", "D2:1"]
    assert unit.docs[0].text == "Ann: I adopted a cat."
    assert "a photo of a cat" in unit.docs[1].text
    assert unit.docs[0].group == "S1" and unit.docs[2].group == "S2"
    assert unit.docs[0].at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert unit.docs[1].at > unit.docs[0].at  # turns keep their order in time
    assert [q.gold for q in unit.queries] == [frozenset({"D1:1"}), frozenset({"D2:1", "D1:1"})]
    assert data.notes == {"evidence_ids_split": 1, "evidence_ids_skipped": 1, "questions_without_evidence": 1}


def test_missing_file_is_named(tmp_path):
    with pytest.raises(BenchmarkDataError, match="nope.json: no such file"):
        load("locomo", tmp_path / "nope.json")


def test_invalid_json_names_file_and_line(tmp_path):
    bad = tmp_path / "locomo.json"
    bad.write_text('[{"sample_id": "a",\n  oops}]', encoding="utf-8")
    with pytest.raises(BenchmarkDataError, match=r"locomo.json: line 2"):
        load_locomo(bad)


def test_locomo_first_bad_record_is_named(tmp_path):
    good, bad = _locomo_sample(), _locomo_sample(sample_id="conv-2")
    del bad["qa"][1]["evidence"]
    with pytest.raises(BenchmarkDataError, match=r"conversation 'conv-2', qa #1: missing field 'evidence'"):
        load_locomo(_write(tmp_path / "l.json", [good, bad]))


def test_locomo_bad_turn_and_top_level(tmp_path):
    sample = _locomo_sample()
    sample["conversation"]["session_2"][0]["text"] = 5
    with pytest.raises(BenchmarkDataError, match=r"session_2 turn #0: field 'text' should be str"):
        load_locomo(_write(tmp_path / "l.json", [sample]))
    with pytest.raises(BenchmarkDataError, match="expected a non-empty list"):
        load_locomo(_write(tmp_path / "l2.json", {"not": "a list"}))


def _lme_item(qid="q1", **overrides):
    item = {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": "Where did I go?",
        "answer": "Paris",
        "question_date": "2023/05/14 (Sun) 09:58",
        "haystack_session_ids": ["s1", "answer_s2"],
        "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 11:00"],
        "haystack_sessions": [
            [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}],
            [{"role": "user", "content": "I went to Paris", "has_answer": True},
             {"role": "assistant", "content": "Lovely", "has_answer": False}],
        ],
        "answer_session_ids": ["answer_s2"],
    }
    item.update(overrides)
    return item


def test_longmemeval_gz_user_turns_and_abstention(tmp_path):
    path = tmp_path / "lme.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        json.dump([_lme_item(), _lme_item("q2_abs")], out)
    data = load_longmemeval(path)
    unit, = data.units
    assert [d.id for d in unit.docs] == ["s1_1", "answer_s2_1"]
    query, = unit.queries
    assert query.gold == frozenset({"answer_s2_1"}) and query.gold_groups == frozenset({"answer_s2"})
    assert data.notes["abstention_skipped"] == 1
    both = load_longmemeval(path, roles=("user", "assistant"))
    assert len(both.units[0].docs) == 4


def test_longmemeval_haystack_listing_a_session_twice_loads_and_reports_the_merge(tmp_path):
    """Real LongMemEval_S files list some sessions twice; identical copies are indexed
    once, a copy with other turns keeps its own turn ids inside the same session."""
    item = _lme_item()
    twice = _lme_item(
        "q2",
        haystack_session_ids=["s1", "answer_s2", "s1", "s1"],
        haystack_dates=["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 11:00", "2023/05/01 (Mon) 10:00",
                        "2023/05/03 (Wed) 09:00"],
        haystack_sessions=[*item["haystack_sessions"], item["haystack_sessions"][0],
                           [{"role": "user", "content": "Hello again", "has_answer": True}]],
    )
    data = load_longmemeval(_write(tmp_path / "lme.json", [item, twice]))
    unit = data.units[1]
    assert [d.id for d in unit.docs] == ["s1_1", "answer_s2_1", "s1~2_1"]
    assert len({d.id for d in unit.docs}) == len(unit.docs)
    query, = unit.queries
    assert query.gold == frozenset({"answer_s2_1", "s1~2_1"})
    assert query.gold_groups == frozenset({"answer_s2", "s1"})  # the differing copy is still session s1
    assert data.notes["duplicate_sessions_merged"] == 1
    assert data.notes["duplicate_sessions_kept_apart"] == 1
    assert data.notes["questions_with_duplicate_sessions"] == 1


def test_longmemeval_mismatched_haystack(tmp_path):
    path = _write(tmp_path / "lme.json", [_lme_item(), _lme_item("q3", haystack_dates=["2023/05/01 (Mon) 10:00"])])
    with pytest.raises(BenchmarkDataError, match=r"question 'q3': haystack_session_ids, haystack_sessions"):
        load_longmemeval(path)


def _madial_files(tmp_path, *, relevant=(1,), with_owner=True):
    memory = tmp_path / "madial_en_memory.jsonl"
    rows = [{"1": {"time": "2023-12-25", "scene": "Activity", "emotion": "Happy", "event": "Bart danced."}},
            {"2": {"time": "2023-01-02", "scene": "Activity", "emotion": "Sad", "event": "Lisa lost a ball."}}]
    if with_owner:
        rows[0]["1"]["user-id"], rows[1]["2"]["user-id"] = 1, 2
    memory.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    dialogue = tmp_path / "madial_en_dialogue_dev.jsonl"
    item = {"id": 7, "user-id": 1, "test-turn": [3], "relevant-id": list(relevant),
            "dialogue": ["<BOD>\n", '<Bart>: "I will dance!"\n', '<Assistant>: "Great."\n',
                         '<Assistant>: "Remember the party?"\n', "<EOD>\n"]}
    dialogue.write_text(json.dumps(item) + "\n", encoding="utf-8")
    return dialogue, memory


def test_madial_query_is_dialogue_before_test_turn(tmp_path):
    dialogue, _ = _madial_files(tmp_path)
    data = load_madial(dialogue)
    unit, = data.units
    assert unit.id == "user-1" and [d.id for d in unit.docs] == ["1"]
    assert unit.queries[0].text == "Bart: I will dance!\nAssistant: Great."
    assert unit.queries[0].gold == frozenset({"1"})


def test_madial_unknown_relevant_id(tmp_path):
    dialogue, _ = _madial_files(tmp_path, relevant=(1, 99))
    with pytest.raises(BenchmarkDataError, match=r"line 1: relevant-id 99 is not in madial_en_memory.jsonl"):
        load_madial(dialogue)


def test_madial_owner_borrowed_from_sibling_archive(tmp_path):
    dialogue, _ = _madial_files(tmp_path, with_owner=False)
    zh = tmp_path / "madial_zh_memory.jsonl"
    zh.write_text(json.dumps({"1": {"event": "x", "user-id": 1}}) + "\n" + json.dumps({"2": {"event": "y", "user-id": 2}}),
                  encoding="utf-8")
    data = load_madial(dialogue)
    assert data.notes["memory_owner"] == "madial_zh_memory.jsonl"
    assert [d.id for d in data.units[0].docs] == ["1"]
    zh.unlink()
    shared = load_madial(dialogue)  # no owner anywhere: the whole archive is the corpus
    assert shared.notes["memory_owner"] == "none" and len(shared.units[0].docs) == 2


def test_madial_missing_memory_archive(tmp_path):
    dialogue, memory = _madial_files(tmp_path)
    memory.unlink()
    with pytest.raises(BenchmarkDataError, match="madial_en_memory.jsonl: no such file"):
        load_madial(dialogue)


def test_madial_bad_line(tmp_path):
    dialogue, _ = _madial_files(tmp_path)
    dialogue.write_text(dialogue.read_text() + "{not json\n", encoding="utf-8")
    with pytest.raises(BenchmarkDataError, match=r"madial_en_dialogue_dev.jsonl: line 2: not valid JSON"):
        load_madial(dialogue)


def test_date_parsers():
    assert parse_locomo_date("10:04 am on 19 January, 2023") == datetime(2023, 1, 19, 10, 4, tzinfo=UTC)
    assert parse_locomo_date("12:30 am on 1 May, 2023").hour == 0
    assert parse_locomo_date("sometime") is None
    assert parse_longmemeval_date("2023/05/14 (Sun) 09:58") == datetime(2023, 5, 14, 9, 58, tzinfo=UTC)
    assert parse_longmemeval_date("") is None


def test_dialogue_lines_drop_markers():
    assert dialogue_lines(["<BOD>\n", '<Bart>:"你好"\n', "plain\n", "<EOD>"]) == [("Bart", "你好"), ("", "plain")]
