"""The lexical tokenizer: script boundaries, normalization, modes, versioned name."""

from __future__ import annotations

import pytest

from engram.errors import InvalidValueError
from engram.text import tokenize
from engram.text.tokenize import DEFAULT_TOKENIZER, Tokenizer, index_terms, index_text, query_terms


def test_a_latin_word_does_not_swallow_the_chinese_after_it():
    terms = index_terms("我用Python写后端服务")
    assert "python" in terms
    assert "后端" in terms  # was part of one term "python写后端服务"
    assert not any("python" in t and t != "python" for t in terms)


JIEBA_BIGRAM = Tokenizer("jieba+bigram")


def test_chinese_before_and_after_a_latin_name_are_separate_runs():
    terms = JIEBA_BIGRAM.index_terms("Lisa在周末的图书馆活动中表现积极")
    assert "lisa" in terms
    assert {"图书馆", "活动", "积极"} <= set(terms)
    assert {"lisa", "图书", "书馆", "活动", "积极"} <= set(index_terms("Lisa在周末的图书馆活动中表现积极"))  # bigrams
    terms = JIEBA_BIGRAM.index_terms("张三在iPhone上设置了提醒")
    assert "iphon" in terms  # stemmed like every Latin word
    assert {"张三", "提醒", "设置"} <= set(terms)


def test_numbers_next_to_chinese_are_their_own_terms():
    assert JIEBA_BIGRAM.index_terms("我在2019年搬到上海")[:3] == ["我", "在", "我在"]
    assert index_terms("我在2019年搬到上海") == ["我在", "2019", "年搬", "搬到", "到上", "上海"]
    terms = JIEBA_BIGRAM.index_terms("我在2019年搬到上海")
    assert "2019" in terms and "上海" in terms
    assert not any(t.startswith("2019") and t != "2019" for t in terms)
    assert JIEBA_BIGRAM.index_terms("3月5日") == ["3", "月", "月", "5", "日", "日"]
    assert index_terms("3月5日") == ["3", "月", "5", "日"]


def test_full_width_latin_and_digits_fold_to_ascii():
    assert index_terms("Ｐｙｔｈｏｎ") == index_terms("Python")
    terms = index_terms("２０２３年去了Ｔｏｋｙｏ")
    assert "2023" in terms and "tokyo" in terms and "去了" in terms
    # full-width punctuation separates like ASCII punctuation
    assert index_terms("后端，前端") == index_terms("后端, 前端")


def test_japanese_kana_is_segmented_like_chinese():
    terms = index_terms("東京でラーメンを食べた")
    assert "東京" in terms
    assert "ラー" in terms and "メン" in terms  # kana bigrams
    assert query_terms("ラーメン")  # a kana-only query has terms to match


def test_half_width_katakana_folds_to_full_width():
    assert index_terms("ﾗｰﾒﾝ") == index_terms("ラーメン")


def test_emoji_are_dropped_and_split_runs():
    terms = index_terms("今天好开心😀我们去爬山🏔️了")
    assert not any(ch in "".join(terms) for ch in "😀🏔️")
    assert "开心" in terms and "爬山" in terms
    assert "心我" not in terms  # the emoji ends the run; no bigram spans it
    assert index_terms("👍🎉") == []


def test_ideographic_zero_and_extension_b_count_as_cjk():
    assert "二〇" in index_terms("二〇二三年")
    assert index_terms("𠮷野家") != []  # U+20BB7, outside the basic plane
    assert tokenize.has_cjk("𠮷")


def test_english_words_are_stemmed_and_stopwords_dropped_from_queries():
    assert index_terms("The cats were running") == ["the", "cat", "were", "run"]
    assert query_terms("The cats were running") == ["cat", "run"]
    assert query_terms("the of and") == ["the", "of", "and"]  # nothing else left: keep them


def test_query_terms_are_distinct_and_drop_chinese_stopwords():
    terms = query_terms("我的后端和我的前端")
    assert len(terms) == len(set(terms))
    assert "我" not in terms and "的" not in terms
    assert "后端" in terms


def test_underscores_and_hyphens_split_words():
    assert index_terms("snake_case e-mail") == ["snake", "case", "e", "mail"]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("bigram", ["上海", "海天", "天气"]),
        ("jieba", ["上海", "天气"]),
        ("jieba+bigram", ["上海", "天气", "上海", "海天", "天气"]),
    ],
)
def test_modes(mode, expected):
    assert Tokenizer(mode).index_terms("上海天气") == expected


def test_name_identifies_version_and_mode():
    assert Tokenizer().name == f"v{tokenize.TOKENIZER_VERSION}:bigram"
    assert Tokenizer("jieba+bigram").name == f"v{tokenize.TOKENIZER_VERSION}:jieba+bigram"
    assert tokenize.TOKENIZER_VERSION >= 2  # v1 had the script-boundary bug
    assert Tokenizer("bigram").name != Tokenizer("jieba").name
    assert Tokenizer("bigram") == Tokenizer("bigram")


def test_unknown_mode_is_a_typed_error():
    with pytest.raises(InvalidValueError):
        Tokenizer("whitespace")  # type: ignore[arg-type]


def test_module_functions_use_the_default_tokenizer():
    text = "我用Python写后端服务"
    assert index_terms(text) == DEFAULT_TOKENIZER.index_terms(text)
    assert index_text(text) == " ".join(DEFAULT_TOKENIZER.index_terms(text))
    assert query_terms(text) == DEFAULT_TOKENIZER.query_terms(text)


def test_tokenizers_of_different_modes_do_not_share_cached_terms():
    text = "图书馆活动"
    assert Tokenizer("bigram").index_terms(text) == ["图书", "书馆", "馆活", "活动"]
    assert "图书馆" in Tokenizer("jieba").index_terms(text)
    assert "馆活" not in Tokenizer("jieba").index_terms(text)


def test_global_mode_switch_is_gone():
    assert not hasattr(tokenize, "set_cjk_mode")
    assert not hasattr(tokenize, "add_cjk_words")


def test_bm25_finds_a_chinese_word_written_after_a_latin_one(memory, alice):
    memory.remember("我用Python写后端服务", alice)
    memory.remember("Lisa在周末的图书馆活动中表现积极", alice)
    memory.remember("我在2019年搬到上海", alice)
    assert [h.record.content for h in memory.search("后端", alice, retriever="bm25")] == ["我用Python写后端服务"]
    assert [h.record.content for h in memory.search("图书馆", alice, retriever="bm25")] == [
        "Lisa在周末的图书馆活动中表现积极"]
    assert [h.record.content for h in memory.search("上海", alice, retriever="bm25")] == ["我在2019年搬到上海"]
