"""CJK-aware terms for lexical search, shared by every backend so they rank alike.

English and other space-separated scripts: lower-cased, NFKC-normalized words,
Snowball-stemmed. Chinese/Japanese runs: jieba's search-mode segmentation, CJK
bigrams, or both (``Tokenizer(mode)``); the default was chosen by measurement
(docs/BENCHMARKS.md). The backends index the space-joined terms verbatim.

A word run never crosses a script boundary: "我用Python写后端" is "我用" |
"python" | "写后端", and "2023年6月" is "2023" | "年" | "6" | "月". (Version 1
let a Latin word or a number swallow the Chinese after it, so "后端" was not a
term of that sentence at all.) ``Tokenizer.name`` carries the version, so a
store can tell that its stored terms came from another tokenizer.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, get_args

from ..errors import InvalidValueError

CJKMode = Literal["jieba", "bigram", "jieba+bigram"]
CJK_MODES: tuple[str, ...] = get_args(CJKMode)
# docs/BENCHMARKS.md ("Chinese-first quality"): bigram BM25 >= jieba+bigram for every MADial
# user, hybrid equal, and no segmenter dictionary to load.
DEFAULT_CJK_MODE: CJKMode = "bigram"
# Bump whenever the terms of some text change, so stores can tell old terms from new.
TOKENIZER_VERSION = 2

# Kana, CJK ideographs (unified, extension A, compatibility, extensions B-H), the
# iteration marks 々/〆 and the ideographic zero 〇 ("二〇二三年"). Hangul is
# written with spaces between words and stays with the word runs.
_CJK = r"\u3005-\u3007\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
# A word is letters and digits of any other script; CJK and underscores end it.
_RUNS = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")
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
_jieba_lock = threading.Lock()
_jieba: Any = None


@dataclass(frozen=True, slots=True)
class Tokenizer:
    """Turns text into lexical terms. Pure: the same text always gives the same
    terms for the same ``name``, so index-time and query-time terms agree."""

    mode: CJKMode = DEFAULT_CJK_MODE

    def __post_init__(self) -> None:
        if self.mode not in CJK_MODES:
            raise InvalidValueError(f"unknown CJK mode {self.mode!r}; use one of {', '.join(CJK_MODES)}")

    @property
    def name(self) -> str:
        """What produced a store's terms: the tokenizer version and the CJK mode."""
        return f"v{TOKENIZER_VERSION}:{self.mode}"

    def index_terms(self, text: str) -> list[str]:
        """Terms stored in the lexical index (stopwords kept: BM25 discounts them)."""
        return _terms(text, self.mode, drop_stopwords=False)

    def index_text(self, text: str) -> str:
        return " ".join(self.index_terms(text))

    def query_terms(self, text: str) -> list[str]:
        """Distinct query terms, stopwords dropped unless nothing else is left."""
        terms = _terms(text, self.mode, drop_stopwords=True) or _terms(text, self.mode, drop_stopwords=False)
        return list(dict.fromkeys(terms))


DEFAULT_TOKENIZER = Tokenizer()


def _jieba_tokenizer() -> Any:
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


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


@lru_cache(maxsize=65536)
def _cjk_terms(run: str, mode: CJKMode) -> tuple[str, ...]:
    terms: list[str] = []
    if mode in ("jieba", "jieba+bigram"):
        terms += [w for w in _jieba_tokenizer().cut_for_search(run) if w.strip()]
    if mode in ("bigram", "jieba+bigram"):
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
    # NFKC folds full-width Latin and digits ("Ｐｙｔｈｏｎ２"), half-width kana and
    # compatibility ideographs into their ordinary forms before anything is split.
    return unicodedata.normalize("NFKC", text).lower()


def _terms(text: str, mode: CJKMode, *, drop_stopwords: bool) -> list[str]:
    out: list[str] = []
    for cjk, word in _RUNS.findall(_normalize(text)):
        if cjk:
            out += [t for t in _cjk_terms(cjk, mode) if not (drop_stopwords and t in CHINESE_STOPWORDS)]
        elif not (drop_stopwords and word in ENGLISH_STOPWORDS):
            out.append(_stem(word))
    return out


# Module-level helpers over the default tokenizer. Callers that know their store's
# tokenizer should use it instead (a store owns the tokenizer its terms came from).


def index_terms(text: str) -> list[str]:
    return DEFAULT_TOKENIZER.index_terms(text)


def index_text(text: str) -> str:
    return DEFAULT_TOKENIZER.index_text(text)


def query_terms(text: str) -> list[str]:
    return DEFAULT_TOKENIZER.query_terms(text)


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


def names_word(text: str, word: str) -> bool:
    """Whether ``text`` says ``word``: as a whole word, any case; a Chinese word anywhere."""
    if has_cjk(word):
        return word in text
    return re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE) is not None
