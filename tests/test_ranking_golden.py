"""Search results must not change when the read path does (issue 22): rankings of a
fixed corpus, recorded with the per-record read path (main at b621fb1, before the
columnar cache), are compared with what search returns now — ids in order, scores
and every signal.

The corpus exercises what ranking reads from a record: several scopes and a
subtree, kinds, importance, update times (recency), validity windows (expired,
ended, not yet valid, as-of reads), superseded and forgotten records, threads with
neighbouring turns (context lifts), dates a query names (time lift), duplicates
(diversify), Chinese, and an ensemble embedder (z-fused parts).

To re-record after an intended ranking change: ENGRAM_REGEN_GOLDEN=1 pytest this file,
and say why in the commit.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from engram import FakeClock, FakeHashEmbedder, Memory, Scope, Source
from engram.config import Settings
from engram.embed import EnsembleEmbedder
from engram.store.sqlite import SQLiteStore

GOLDEN = Path(__file__).parent / "data" / "ranking_golden.json.gz"
START = datetime(2023, 5, 1, 9, 0, tzinfo=UTC)

WORDS = ("tea coffee report deadline berlin lyon sister project atlas budget review chess piano dentist "
         "flight hotel invoice meeting monday friday allergy peanuts garden dog cat salsa train museum").split()
ZH = ("我妹妹 搬到 上海 喜欢 喝 绿茶 周末 爬山 项目 截止 日期 报告 开会 医生 过敏 花生").split()
QUERIES = (
    "what tea does she drink", "when is the atlas project deadline", "my sister moved to berlin",
    "peanuts allergy dentist", "what happened in May 2023", "meeting on friday about the budget review",
    "我妹妹 搬到 哪里", "绿茶 周末", "chess piano museum train", "invoice hotel flight in June 2023",
    "the garden and the dog", "coffee",
)


def _sentence(rnd: random.Random) -> str:
    if rnd.random() < 0.25:
        return "".join(rnd.sample(ZH, rnd.randint(3, 6)))
    return " ".join(rnd.sample(WORDS, rnd.randint(3, 8)))


def _build(memory: Memory, clock: FakeClock) -> None:
    rnd = random.Random(22)
    scopes = [Scope.for_user("acme", "alice"), Scope.for_user("acme", "bob"), Scope("acme", ("users", "alice", "work")),
              Scope.for_org("acme", "ops")]
    kinds = ("fact", "preference", "rule", "todo", "episode")
    ids: list[tuple[str, Scope]] = []
    for index in range(240):
        scope = scopes[index % len(scopes)] if rnd.random() < 0.7 else scopes[0]
        text = _sentence(rnd)
        if index % 37 == 5 and ids:  # a word-for-word duplicate of an earlier memory of the same scope
            text = memory.get(*ids[-1]).content if ids[-1][1] == scope else text
        thread = f"t{rnd.randint(0, 9)}" if rnd.random() < 0.6 else None
        valid_from = START + timedelta(days=rnd.randint(0, 90), seconds=rnd.choice((0, 30, 60, 90, 300)))
        extra: dict = {}
        roll = rnd.random()
        if roll < 0.06:
            extra["expires_at"] = valid_from + timedelta(days=rnd.randint(1, 200))
        elif roll < 0.12:
            extra["valid_to"] = valid_from + timedelta(days=rnd.randint(1, 200))
        record = memory.remember(
            text, scope, kind=kinds[rnd.randrange(len(kinds))], importance=round(rnd.random(), 3),
            source=Source(actor="user", thread_id=thread, reply_to="what about it?" if rnd.random() < 0.1 else None),
            valid_from=valid_from, **extra)
        ids.append((record.id, scope))
        clock.advance(seconds=rnd.randint(60, 6 * 3600))
    forgotten = rnd.sample(ids, 12)
    for record_id, scope in forgotten:
        memory.forget(record_id, scope)
    for record_id, scope in rnd.sample([pair for pair in ids if pair not in forgotten], 12):
        memory.update(record_id, scope, content=_sentence(rnd) + " updated")
    clock.advance(days=30)


def _hit(hit) -> dict:
    s = hit.signals
    values = [hit.score, s.lexical, s.vector, s.relevance, s.recency, s.importance, s.validity, s.overlap]
    return {"id": int(hit.record.id, 16), "values": [float(f"{value:.12g}") for value in values]}


def _cases(memory: Memory, full: bool) -> dict[str, list[dict]]:
    alice, bob = Scope.for_user("acme", "alice"), Scope.for_user("acme", "bob")
    org = Scope.for_org("acme", "ops")
    out: dict[str, list[dict]] = {}
    for number, query in enumerate(QUERIES):
        out[f"q{number}/hybrid"] = [_hit(h) for h in memory.search(query, alice, k=10)]
        out[f"q{number}/deep"] = [_hit(h) for h in memory.search(query, alice, k=60)]
        out[f"q{number}/context"] = [_hit(h) for h in memory.context(query, [alice, org], k=8).hits]
        if not full:  # the other fusions: the main cases only
            continue
        out[f"q{number}/bob"] = [_hit(h) for h in memory.search(query, bob, k=5)]
        out[f"q{number}/subtree"] = [_hit(h) for h in memory.search(query, alice, k=10, include_descendants=True)]
        out[f"q{number}/bm25"] = [_hit(h) for h in memory.search(query, alice, k=10, retriever="bm25")]
        out[f"q{number}/vector"] = [_hit(h) for h in memory.search(query, alice, k=10, retriever="vector")]
        out[f"q{number}/kinds"] = [_hit(h) for h in memory.search(query, alice, k=10, kinds=["fact", "rule"])]
        out[f"q{number}/as_of"] = [_hit(h) for h in memory.search(query, alice, k=10,
                                                                   as_of=START + timedelta(days=40))]
        out[f"q{number}/all_statuses"] = [_hit(h) for h in memory.search(query, alice, k=10, statuses=None)]
        out[f"q{number}/no_diversify"] = [_hit(h) for h in memory.search(query, alice, k=10, diversify=False)]
    return out


def _run(tmp_path: Path, name: str, embedder, settings: Settings | None = None, *,
         full: bool = True) -> dict[str, list[dict]]:
    clock = FakeClock(START)
    path = str(tmp_path / f"{name}.db")
    with Memory(SQLiteStore(path), embedder=embedder, clock=clock,
                settings=settings or Settings(record_recalls=False)) as memory:
        _build(memory, clock)
        return _cases(memory, full)


@pytest.fixture
def counted_ids(monkeypatch):
    """Record ids from a counter: the recorded ids (and ties broken by id) are reproducible."""
    import itertools

    import engram.core
    import engram.writes

    counter = itertools.count(1)

    def next_id() -> str:
        return f"{next(counter):032x}"

    for module in (engram.writes, engram.core):
        monkeypatch.setattr(module, "new_id", next_id)


def rankings(tmp_path: Path) -> dict[str, dict[str, list[dict]]]:
    ensemble = EnsembleEmbedder([FakeHashEmbedder(32, "hash32"), FakeHashEmbedder(48, "hash48")])
    return {
        "hybrid-minmax": _run(tmp_path, "minmax", FakeHashEmbedder()),
        "hybrid-rrf": _run(tmp_path, "rrf", FakeHashEmbedder(), Settings(record_recalls=False, fusion="rrf"),
                           full=False),
        "hybrid-weighted": _run(tmp_path, "weighted", FakeHashEmbedder(),
                                Settings(record_recalls=False, fusion="weighted"), full=False),
        "ensemble": _run(tmp_path, "ensemble", ensemble),
    }


def test_rankings_equal_the_recorded_ones(tmp_path, counted_ids):
    found = rankings(tmp_path)
    if os.environ.get("ENGRAM_REGEN_GOLDEN"):
        GOLDEN.write_bytes(gzip.compress(json.dumps(found, separators=(",", ":"), sort_keys=True).encode(), mtime=0))
    expected = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    assert sorted(found) == sorted(expected)
    compared = 0
    for setting, cases in expected.items():
        for case, hits in cases.items():
            got = found[setting][case]
            assert [h["id"] for h in got] == [h["id"] for h in hits], f"{setting} {case}"
            for mine, theirs in zip(got, hits):
                assert mine["values"] == pytest.approx(theirs["values"], rel=1e-9, abs=1e-11), f"{setting} {case}"
                compared += 1
    assert compared > 2000  # the corpus answers: most cases return hits
