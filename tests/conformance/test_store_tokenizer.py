"""The tokenizer is a property of the store it indexes (issue 10, item 5): a store
records the tokenizer of its lexical terms, its writers and searchers use that one,
two stores with different modes in one process do not interfere, and a store whose
terms came from another tokenizer is rebuilt through the audited reindex path (or
refuses to open, naming the command)."""

from __future__ import annotations

import pytest

from engram import Operation, Settings, StaleTermsError
from engram.search.store_terms import LEGACY_TOKENIZER, TOKENIZER_KEY
from engram.store.base import AuditQuery, RecordFilter
from engram.text.tokenize import DEFAULT_TOKENIZER, Tokenizer

pytestmark = [pytest.mark.store_admin]  # the store roles it checks (conftest.py, ROLE_MARKERS)

SENTENCE = "Lisa在周末的图书馆活动中表现积极"
JIEBA_ONLY = "图书馆"  # jieba's search mode keeps the whole word; bigrams never make a 3-character term


def _finds(memory, scope, term: str) -> bool:
    """Whether the stored terms hold ``term`` (asked of the store, under any tokenizer)."""
    where = RecordFilter(namespace=scope.namespace, descendants=True)
    return bool(memory._store.lexical(scope.tenant, where, [term], 10))


def test_a_new_store_records_the_tokenizer_it_is_indexed_with(backend, alice):
    memory = backend.memory()
    assert memory.tokenizer == DEFAULT_TOKENIZER
    assert memory._store.meta(TOKENIZER_KEY) == DEFAULT_TOKENIZER.name
    other = backend.memory(settings=Settings(cjk_tokenizer=None))
    assert other.tokenizer == DEFAULT_TOKENIZER  # None: the store's own


def test_a_store_keeps_its_own_mode_when_none_is_asked(backend, alice):
    first = backend.memory(settings=Settings(cjk_tokenizer="jieba"))
    first.remember(SENTENCE, alice)
    first.close()
    again = backend.memory(settings=Settings(cjk_tokenizer=None))
    assert again.tokenizer == Tokenizer("jieba")
    assert _finds(again, alice, JIEBA_ONLY)
    assert again.search("图书馆", alice, retriever="bm25")


def test_two_stores_with_different_modes_in_one_process_do_not_interfere(make_backend, alice):
    jieba_memory = make_backend("sqlite").memory(settings=Settings(cjk_tokenizer="jieba"))
    bigram_memory = make_backend("sqlite").memory(settings=Settings(cjk_tokenizer="bigram"))
    # interleaved writes: whichever was constructed last must not decide the other's terms
    jieba_memory.remember(SENTENCE, alice)
    bigram_memory.remember(SENTENCE, alice)
    jieba_memory.remember("我用Python写后端服务", alice)
    assert _finds(jieba_memory, alice, JIEBA_ONLY)
    assert not _finds(bigram_memory, alice, JIEBA_ONLY)
    assert _finds(bigram_memory, alice, "馆活")  # a bigram across the word boundary
    assert not _finds(jieba_memory, alice, "馆活")
    assert jieba_memory._store.meta(TOKENIZER_KEY) == "v2:jieba"
    assert bigram_memory._store.meta(TOKENIZER_KEY) == "v2:bigram"
    for memory in (jieba_memory, bigram_memory):
        assert memory.search("图书馆活动", alice, retriever="bm25")[0].record.content == SENTENCE


def test_another_mode_rebuilds_the_terms_through_the_audited_reindex_path(backend, alice):
    first = backend.memory(settings=Settings(cjk_tokenizer="jieba"))
    record = first.remember(SENTENCE, alice)
    first.close()
    switched = backend.memory(settings=Settings(cjk_tokenizer="bigram"))
    assert switched._store.meta(TOKENIZER_KEY) == "v2:bigram"
    assert not _finds(switched, alice, JIEBA_ONLY)
    assert _finds(switched, alice, "馆活")
    rebuilt = switched.get(record.id, alice)
    assert rebuilt.version == record.version + 1
    assert rebuilt.content == record.content
    [event] = switched._store.audit(alice.tenant, AuditQuery(record_id=record.id, operation=Operation.REINDEX))
    assert event.detail["terms_from"] == "v2:jieba" and event.detail["terms_to"] == "v2:bigram"
    assert [v.operation for v in switched.history(record.id, alice)][-1] is Operation.REINDEX


def test_terms_from_an_engram_before_tokenizer_v2_are_rebuilt(backend, alice):
    first = backend.memory()
    record = first.remember("我用Python写后端服务", alice)
    first.close()
    backend.raw("DELETE FROM engram_meta")  # what an engram before v2 left: terms and no name
    reopened = backend.memory()
    assert reopened._store.meta(TOKENIZER_KEY) == DEFAULT_TOKENIZER.name
    [event] = reopened._store.audit(alice.tenant, AuditQuery(record_id=record.id, operation=Operation.REINDEX))
    assert event.detail["terms_from"] == LEGACY_TOKENIZER
    assert reopened.search("后端", alice, retriever="bm25")[0].record.id == record.id


def test_stale_terms_refuse_to_open_without_rebuild_and_name_the_command(backend, alice):
    first = backend.memory(settings=Settings(cjk_tokenizer="jieba"))
    record = first.remember(SENTENCE, alice)
    first.close()
    with pytest.raises(StaleTermsError, match="engram reindex"):
        backend.memory(settings=Settings(cjk_tokenizer="bigram", rebuild_terms=False))
    untouched = backend.memory()  # the store's own mode: opens, nothing was rewritten
    assert untouched.tokenizer == Tokenizer("jieba")
    assert untouched.get(record.id, alice).version == record.version
    assert untouched._store.meta(TOKENIZER_KEY) == "v2:jieba"
