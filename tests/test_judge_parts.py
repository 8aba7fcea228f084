"""The learned judge's parts: n-gram hashing, the relation reader, the weights file and
bad input. (tests/test_judge.py checks what the shipped weights judge.)"""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from engram.errors import ConfigError, InvalidValueError
from engram.pipeline.judge.features import dense, gathered, grams, normalised, text_buckets
from engram.pipeline.judge.heads import Heads
from engram.pipeline.judge.learned import WEIGHTS, LearnedJudge
from engram.pipeline.judge.subjects import other_subject, same_subject

ROOT = Path(__file__).parents[1]


def test_hashing_is_fixed_across_processes_and_runs():
    # The shipped weights were learned on these buckets: a changed hash silently breaks them.
    assert text_buckets("brb", (1, 2, 3), 14).tolist() == text_buckets("brb", (1, 2, 3), 14).tolist()
    assert text_buckets("brb", (1, 2, 3), 14)[:3].tolist() == FIXED_BRB_BUCKETS


FIXED_BRB_BUCKETS = [10157, 6720, 4894]  # " ", "b", "r" at bits=14, as the shipped weights were trained


def test_normalised_lowercases_digits_and_spaces():
    assert normalised("  I'm  34\nOK ") == " i'm 00 ok "


def test_gathered_equals_the_dense_product():
    texts = ["brb", "我住在北京", "", "my colleague Ravi is allergic to peanuts"]
    table = np.random.default_rng(0).standard_normal((2 ** 10, 5)).astype(np.float32)
    expected = dense(texts, (1, 2, 3), 10) @ table
    assert np.allclose(gathered(grams(texts, (1, 2, 3), 10), table), expected, atol=1e-5)


@pytest.mark.parametrize(("text", "subject"), [
    ("my colleague Ravi is allergic to peanuts", "other:colleague ravi"),
    ("Sarah, my wife, loves orchids", "other:wife sarah"),
    ("my son Leo is 7", "other:son leo"),
    ("my boss Aisha Rahman hates meetings", "other:boss aisha rahman"),
    ("I think my mom is diabetic", "other:mom"),
    ("wife is vegan now", "other:wife"),
    ("我同事小王对花生过敏", "other:colleague 小王"),
    ("老婆不吃辣", "other:wife"),
    ("王先生是我先生的客户", "other:husband"),
    ("my manager Sarah approved it", "other:boss sarah"),
    ("My Mum is a retired nurse", "other:mom"),
    ("Priya just started at Google", "other:priya"),
    ("they said it's fine", "other:someone"),
])
def test_other_subject_spells_relation_and_name(text, subject):
    assert other_subject(text) == subject


def test_weights_are_small_and_ship_in_the_package():
    assert WEIGHTS.stat().st_size < 3_000_000
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["engram"]
    assert any(pattern.endswith(".npz") for pattern in package_data)


def test_a_missing_or_broken_weights_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError):
        Heads(tmp_path / "absent.npz")
    broken = tmp_path / "broken.npz"
    np.savez(broken, weights=np.zeros((3, 3)))
    with pytest.raises(ConfigError):
        Heads(broken)


@pytest.fixture(scope="module")
def judge():
    return LearnedJudge()


def test_bad_input_is_a_typed_error(judge):
    with pytest.raises(InvalidValueError):
        judge.judge("one string, not a list")
    with pytest.raises(InvalidValueError):
        judge.judge(["fine", 3])  # type: ignore[list-item]
    with pytest.raises(InvalidValueError):
        judge.judge(["a", "b"], vectors=np.zeros((1, 512), dtype=np.float32))
    with pytest.raises(InvalidValueError):
        judge.judge(["a"], vectors=np.full((1, 512), np.nan, dtype=np.float32))


def test_no_texts_no_judgements(judge):
    assert judge.judge([]) == []


@pytest.mark.parametrize(("first", "second", "same"), [
    ("other:wife", "other:wife sarah", True),
    ("other:wife sarah", "other:wife sarah", True),
    ("other:sarah", "other:wife sarah", True),
    ("other:wife sarah", "other:wife anna", False),
    ("other:wife", "other:husband", False),
    ("other:sarah", "other:anna", False),
    ("other:someone", "other:someone", False),
    ("other:someone", "other:wife", False),
    ("user", "other:wife", False),
    ("team", "team", True),
])
def test_same_subject(first, second, same):
    assert same_subject(first, second) is same
    assert same_subject(second, first) is same
