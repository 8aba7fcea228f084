"""Hybrid search ordering with the real embedded model, and proof that the
backends rank alike: same BM25 (FTS5's formula over the same terms), same
cosine, hence the same fused order."""

import pytest

from engram import Scope
from engram.store.base import RecordFilter
from engram.text.tokenize import query_terms

from . import pgtools

pytestmark = [pytest.mark.records]  # the store roles it checks (conftest.py, ROLE_MARKERS)

CORPUS = [
    "I prefer concise reports with bullet points",
    "The office is closed on Fridays",
    "My daughter is allergic to peanuts",
    "Deploys go out every Tuesday after the standup",
    "Alice's manager is Bob, who approves travel",
    "我喜欢喝绿茶，不喜欢咖啡",
    "周末我通常去公园跑步",
    "项目截止日期是下个月十五号",
    "The staging database runs PostgreSQL 16",
    "Use metric units in every answer",
    "Green tea in the morning, never coffee after noon",
    "The quarterly report is due on the fifteenth",
]

QUERIES = [
    ("how should reports be written", "I prefer concise reports with bullet points"),
    ("food allergies in the family", "My daughter is allergic to peanuts"),
    ("what day are deploys", "Deploys go out every Tuesday after the standup"),
    ("我喜欢喝什么茶", "我喜欢喝绿茶，不喜欢咖啡"),
    ("周末做什么运动", "周末我通常去公园跑步"),
    ("截止日期", "项目截止日期是下个月十五号"),
    ("which database version does staging use", "The staging database runs PostgreSQL 16"),
    ("who approves travel", "Alice's manager is Bob, who approves travel"),
]


@pytest.fixture
def corpus_memory(real_memory, alice):
    real_memory.remember_many(CORPUS, alice)
    return real_memory


@pytest.mark.parametrize(("query", "expected"), QUERIES)
def test_hybrid_search_puts_the_answer_first(corpus_memory, alice, query, expected):
    hits = corpus_memory.search(query, alice, k=3)
    assert hits[0].record.content == expected
    assert hits == sorted(hits, key=lambda h: (-h.score, h.record.id))


def test_retrievers_each_find_their_matches(corpus_memory, alice):
    lexical = corpus_memory.search("peanuts", alice, retriever="bm25")
    assert [h.record.content for h in lexical] == ["My daughter is allergic to peanuts"]
    vector = corpus_memory.search("nut allergy", alice, retriever="vector", k=1)
    assert vector[0].record.content == "My daughter is allergic to peanuts"
    assert corpus_memory.search("zzzz qqqq", alice, retriever="bm25") == []


def test_search_never_crosses_scopes(corpus_memory, alice, bob):
    corpus_memory.remember("Bob prefers long reports", bob)
    assert all(h.record.scope == alice for h in corpus_memory.search("reports", alice, k=20))
    assert [h.record.content for h in corpus_memory.search("reports", bob, k=20)] == ["Bob prefers long reports"]


def test_both_backends_rank_alike(make_backend, clock):
    """The same corpus on SQLite and PostgreSQL: identical BM25 scores, cosine scores
    and fused order, for English and Chinese queries."""
    if pgtools.SKIP_REASON:
        pytest.skip(pgtools.SKIP_REASON)
    scope = Scope("acme", ("users", "alice"))
    other = Scope("acme", ("users", "bob"))
    memories = []
    for name in ("sqlite", "postgres"):
        memory = make_backend(name).memory(embedder=pgtools.use_embedder(), clock=clock)
        records = memory.remember_many(CORPUS, scope)
        memory.remember_many(["Bob's reports are long", "Bob drinks coffee"], other)
        memory.forget(records[1].id, scope)  # forgotten records still count in BM25 statistics, as in FTS5
        memories.append(memory)
    sqlite_mem, pg_mem = memories
    rename = {a.id: b.id for a, b in zip(sqlite_mem.list(scope, statuses=None, limit=100).items,
                                         pg_mem.list(scope, statuses=None, limit=100).items)}
    where = RecordFilter(namespace=scope.namespace)
    for query, _ in QUERIES + [("reports coffee tea", None), ("the of and", None)]:
        terms = query_terms(query)
        lite = sqlite_mem._store.lexical("acme", where, terms, 20)
        post = pg_mem._store.lexical("acme", where, terms, 20)
        assert sorted((rename[h.id], round(h.score, 6)) for h in lite) == sorted(
            (h.id, round(h.score, 6)) for h in post), query
        vector = pgtools.use_embedder().embed([query], role="query")[0]
        lite_v = sqlite_mem._store.nearest("acme", where, "usem3", vector, 5)
        post_v = pg_mem._store.nearest("acme", where, "usem3", vector, 5)
        assert [rename[h.id] for h in lite_v] == [h.id for h in post_v], query
        assert [h.score for h in lite_v] == pytest.approx([h.score for h in post_v], abs=1e-5)
        lite_hits = sqlite_mem.search(query, scope, k=5)
        post_hits = pg_mem.search(query, scope, k=5)
        assert [rename[h.record.id] for h in lite_hits] == [h.record.id for h in post_hits], query
        assert [h.score for h in lite_hits] == pytest.approx([h.score for h in post_hits], abs=1e-5)


def _ranking(memory, scope, query):
    where = RecordFilter(namespace=scope.namespace)
    lexical = [(h.id, round(h.score, 9)) for h in memory._store.lexical(scope.tenant, where, query_terms(query), 20)]
    hybrid = [(h.record.id, round(h.score, 9)) for h in memory.search(query, scope, k=10)]
    return lexical, hybrid


def test_another_tenants_data_never_moves_a_tenants_scores(memory):
    """Issue 11: with one index for all tenants, each document tenant B stored with a
    word moved tenant A's BM25 score for it, so A could learn what B stored. Scores and
    order in A stay the same whatever B (or another user of A's tenant) writes."""
    ana = Scope("acme", ("users", "ana"))
    memory.remember_many(["Ana met Zofia at the harbour", "Ana's sister lives in Porto",
                          "Zofia recommended a book about harbours", "Weekly groceries: bread and milk"], ana)
    before = {q: _ranking(memory, ana, q) for q in ("zofia", "harbour sister", "bread porto zofia")}
    assert before["zofia"][0]  # the query matches in A
    intruder = Scope("globex", ("users", "ana"))  # same namespace, other tenant
    for i in range(40):
        memory.remember(f"zofia zofia harbour note {i}", intruder)
    memory.remember_many([f"zofia at the harbour with her sister {i}" for i in range(20)],
                         Scope("acme", ("users", "bob")))  # another user of the same tenant
    after = {q: _ranking(memory, ana, q) for q in before}
    assert after == before


def test_a_scope_and_its_descendants_use_their_own_statistics(memory):
    """A query over a prefix scores with the statistics of every scope below it, and
    only those: documents elsewhere in the tenant do not count."""
    team = Scope("acme", ("teams", "red"))
    memory.remember_many(["red team plans the launch", "launch checklist reviewed"], team.child("alice"))
    memory.remember_many(["launch party on friday"], team.child("bob"))
    where = RecordFilter(namespace=team.namespace, descendants=True)
    before = [(h.id, round(h.score, 9)) for h in memory._store.lexical("acme", where, ["launch"], 10)]
    assert len(before) == 3
    memory.remember_many([f"launch {i}" for i in range(30)], Scope("acme", ("teams", "blue")))
    assert [(h.id, round(h.score, 9)) for h in memory._store.lexical("acme", where, ["launch"], 10)] == before
    memory.remember("another launch note", team.child("carol"))
    assert len(memory._store.lexical("acme", where, ["launch"], 10)) == 4


def test_rank_fields_are_what_ranking_reads_of_each_record(memory, alice, bob, clock):
    """store.rank_fields: the columns rerank reads, equal to the records' own fields,
    whether a search has just cached the scope or not; unknown and other tenants' ids drop out."""
    from datetime import timedelta

    from engram.model import Source
    from engram.store.codec import microseconds

    kept = memory.remember("tea in the morning", alice, importance=0.8, source=Source(thread_id="s1"),
                           valid_to=clock.now() + timedelta(days=3))
    clock.advance(seconds=90)
    other = memory.remember("coffee after lunch", alice, importance=0.2, expires_at=clock.now() + timedelta(days=1))
    gone = memory.forget(memory.remember("to forget", alice).id, alice)
    foreign = memory.remember("not yours", Scope("other", ("users", "alice")))
    store = memory._store
    for searched in (False, True):
        if searched:
            memory.search("tea", alice)  # SQLite now serves these from its cached scope columns
        ids = [other.id, "no-such-id", kept.id, gone.id, foreign.id]
        fields = store.rank_fields(alice.tenant, ids, memory.embedder.name)
        assert sorted(fields.ids) == sorted([kept.id, other.id, gone.id])
        by_id = {key: index for index, key in enumerate(fields.ids)}
        for record in (kept, other, gone):
            stored = memory._store.get(alice.tenant, [record.id])[0]
            i = by_id[record.id]
            assert fields.importance[i] == stored.importance
            assert int(fields.updated_us[i]) == microseconds(stored.updated_at)
            assert fields.valid_from[i] == stored.valid_from.timestamp()
            assert fields.valid_to[i] == (stored.valid_to.timestamp() if stored.valid_to else float("inf"))
            assert fields.expires_at[i] == (stored.expires_at.timestamp() if stored.expires_at else float("inf"))
            assert bool(fields.deleted[i]) == (stored.status.value == "deleted")
            assert fields.threads[i] == stored.source.thread_id
    assert store.rank_fields(alice.tenant, [], memory.embedder.name).ids == ()
