"""Any OpenAI-compatible /embeddings endpoint (EMBEDDING_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError, EmbeddingError, LLMError
from ..llm.http import post_json
from .base import Role, checked_rows

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIEmbedder:
    def __init__(
        self, model: str, *, dim: int, base_url: str = DEFAULT_BASE_URL, api_key: str | None = None,
        timeout: float = 30.0, max_retries: int = 3, batch_size: int = 256,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.dim = dim
        self._url = base_url.rstrip("/") + "/embeddings"
        self._api_key = api_key
        self._timeout = timeout
        self._max_retries = max_retries
        self._batch_size = batch_size

    @classmethod
    def from_env(cls, model: str | None = None) -> OpenAIEmbedder:
        model = model or os.environ.get("EMBEDDING_MODEL")
        if not model:
            raise ConfigError("set EMBEDDING_MODEL (and OPENAI_BASE_URL / OPENAI_API_KEY) for OpenAI embeddings")
        base_url = os.environ.get("OPENAI_BASE_URL", DEFAULT_BASE_URL)
        api_key = os.environ.get("OPENAI_API_KEY")
        if base_url == DEFAULT_BASE_URL and not api_key:
            raise ConfigError("set OPENAI_API_KEY to use OpenAI embeddings")
        dim = int(os.environ.get("EMBEDDING_DIM", "0")) or None
        embedder = cls(model, dim=dim or 1, base_url=base_url, api_key=api_key)
        if dim is None:
            embedder.dim = embedder._request(["dimension probe"]).shape[1]
        return embedder

    def embed(self, texts: Sequence[str], *, role: Role = "passage") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(list(texts[i : i + self._batch_size])) for i in range(0, len(texts), self._batch_size)]
        return checked_rows(self.name, self.dim, texts, np.vstack(parts))

    def _request(self, texts: list[str]) -> np.ndarray:
        try:
            answer = post_json(self._url, {"model": self.model, "input": texts}, api_key=self._api_key,
                               timeout=self._timeout, max_retries=self._max_retries)
        except LLMError as exc:
            raise EmbeddingError(f"embedding request to {self._url} failed: {exc}") from exc
        try:
            rows = sorted(answer["data"], key=lambda item: item["index"])
            return np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"unexpected embeddings answer from {self._url}: {exc}") from exc
