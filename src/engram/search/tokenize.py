"""CJK-aware terms for lexical search, shared by every backend so they rank alike.

English and other space-separated scripts: lower-cased, NFKC-normalized words,
Snowball-stemmed. Chinese/Japanese runs: jieba's search-mode segmentation, CJK
bigrams, or both (``set_cjk_mode``); the default was chosen by measurement
(docs/BENCHMARKS.md). The backends index the space-joined terms verbatim.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import unicodedata
from functools import lru_cache
from typing import Literal

CJKMode = Literal["jieba", "bigram", "jieba+bigram"]

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_RUNS = re.compile(rf"([{_CJK}]+)|([^\W_]+)")
_CJK_CHAR = re.compile(rf"[{_CJK}]")

ENGLISH_STOPWORDS = frozenset(
    """a an the and or but if then of to in on at by for with from as is are was were be been
    being am do does did have has had i me my mine we us our you your he him his she her it its
    they them their this that these those what which who whom whose when where why how there here
    not no so than too very can could would should will shall may might must just about into over
    after before up down out off again also any some all each both few more most other such only own
    same s t don doesn didn isn wasn aren weren won ll ve re d m""".split()
)
CHINESE_STOPWORDS = frozenset(
    "的 了 是 在 和 与 及 或 就 都 而 也 还 又 着 过 吗 呢 吧 啊 呀 嘛 哦 么 之 其 这 那 这个 那个 一个 有 "
    "我 你 他 她 它 我们 你们 他们 什么 怎么 哪 哪里 为什么".split()
)

_state = threading.local()
_mode: CJKMode = "jieba+bigram"
_jieba_lock = threading.Lock()
_jieba = None


def set_cjk_mode(mode: CJKMode) -> None:
    global _mode
    if mode not in ("jieba", "bigram", "jieba+bigram"):
        raise ValueError(f"unknown CJK mode {mode!r}")
    _mode = mode
    _cjk_terms.cache_clear()


def _jieba_tokenizer():
    global _jieba
    with _jieba_lock:
        if _jieba is None:
            import logging

            import jieba

            jieba.setLogLevel(logging.WARNING)
            tokenizer = jieba.Tokenizer()
            # jieba writes its prefix-dictionary cache; keep it in a writable place.
            cache_dir = os.environ.get("ENGRAM_CACHE_DIR") or tempfile.gettempdir()
            tokenizer.cache_file = os.path.join(cache_dir, "engram-jieba.cache")
            tokenizer.initialize()
            _jieba = tokenizer
        return _jieba


def add_cjk_words(words: list[str]) -> None:
    """Teach the segmenter names the store has seen (a user dictionary)."""
    tokenizer = _jieba_tokenizer()
    for word in words:
        if _CJK_CHAR.search(word):
            tokenizer.add_word(word)
    _cjk_terms.cache_clear()


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


@lru_cache(maxsize=65536)
def _cjk_terms(run: str) -> tuple[str, ...]:
    terms: list[str] = []
    if _mode in ("jieba", "jieba+bigram"):
        terms += [w for w in _jieba_tokenizer().cut_for_search(run) if w.strip()]
    if _mode in ("bigram", "jieba+bigram"):
        terms += _bigrams(run)
    return tuple(terms)


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    stemmer = getattr(_state, "stemmer", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _state.stemmer = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word) if word.isascii() and word.isalpha() else word


def _normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _terms(text: str, *, drop_stopwords: bool) -> list[str]:
    out: list[str] = []
    for cjk, word in _RUNS.findall(_normalize(text)):
        if cjk:
            out += [t for t in _cjk_terms(cjk) if not (drop_stopwords and t in CHINESE_STOPWORDS)]
        elif not (drop_stopwords and word in ENGLISH_STOPWORDS):
            out.append(_stem(word))
    return out


def index_terms(text: str) -> list[str]:
    """Terms stored in the lexical index (stopwords kept: BM25 discounts them)."""
    return _terms(text, drop_stopwords=False)


def index_text(text: str) -> str:
    return " ".join(index_terms(text))


def query_terms(text: str) -> list[str]:
    """Distinct query terms, stopwords dropped unless nothing else is left."""
    terms = _terms(text, drop_stopwords=True) or _terms(text, drop_stopwords=False)
    return list(dict.fromkeys(terms))


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None
