"""Training the judge's heads and writing them as the package's weights file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engram.pipeline.judge.features import grams
from engram.pipeline.judge.heads import HEADS, VECTOR_DIM

from .dataset import SLOTS, SUBJECT_KINDS, UTTERANCES, Row
from .softmax import Design, Model, fit

ORDERS = (1, 2, 3)
BITS = 14
CLASSES = {"utterance": UTTERANCES, "subject": SUBJECT_KINDS, "slot": SLOTS}
_CONDITIONAL = ("fact", "change", "forget")  # the subject and slot heads learn from these rows only
# How much a pair's texts weigh per head: they are all durable, so at full weight they
# would tilt the utterance head toward keeping (chosen by cross-validation, docs/JUDGE.md).
PAIR_WEIGHT = {"utterance": 0.5, "subject": 1.0, "slot": 1.0}


@dataclass(frozen=True)
class HeadConfig:
    alpha: float  # the n-gram block's scale (0: the sentence vector alone)
    l2: float


def embed(texts: Sequence[str]) -> np.ndarray:
    from engram.embed.local import USEEmbedder

    embedder = USEEmbedder()
    return np.vstack([embedder.embed(list(texts[i:i + 256])) for i in range(0, len(texts), 256)])


def design(texts: Sequence[str], vectors: np.ndarray, orders: Sequence[int] = ORDERS, bits: int = BITS) -> Design:
    batch = grams(texts, orders, bits)
    sizes = np.diff(batch.starts)
    rows = np.repeat(np.arange(len(texts)), sizes)
    vals = np.repeat(batch.weights, sizes).astype(np.float32)
    return Design(vectors.astype(np.float32), rows, batch.buckets, vals, 2 ** bits)


def head_rows(rows: Sequence[Row], head: str) -> np.ndarray:
    if head == "utterance":
        return np.arange(len(rows))
    return np.array([i for i, r in enumerate(rows) if r.utterance in _CONDITIONAL], dtype=np.int64)


def labels(rows: Sequence[Row], head: str) -> np.ndarray:
    names = CLASSES[head]
    return np.array([names.index(getattr(r, head)) for r in rows], dtype=np.int64)


def balance(rows: Sequence[Row]) -> np.ndarray:
    """Each writer weighs the same in total (one writer's volume must not set the boundary)."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.writer] = counts.get(r.writer, 0) + 1
    return np.array([len(rows) / (len(counts) * counts[r.writer]) for r in rows])


def train_head(full: Design, rows: Sequence[Row], head: str, config: HeadConfig) -> Model:
    index = head_rows(rows, head)
    chosen = [rows[i] for i in index]
    sub = full.subset(index).scaled(config.alpha) if config.alpha else _vectors_only(full.subset(index))
    weight = balance(chosen) * np.array([PAIR_WEIGHT[head] if r.source == "pairs" else 1.0 for r in chosen])
    keep = weight > 0
    if not keep.all():
        chosen, sub, weight = [r for r, k in zip(chosen, keep) if k], sub.subset(np.flatnonzero(keep)), weight[keep]
    model = fit(sub, labels(chosen, head), len(CLASSES[head]), config.l2, sample_weight=weight)
    if not config.alpha:
        return model
    scaled = model.weights.copy()
    scaled[VECTOR_DIM:] *= config.alpha  # fold the block's scale in: the judge reads unscaled n-grams
    return Model(scaled, model.bias)


def _vectors_only(d: Design) -> Design:
    empty = np.zeros(0, dtype=np.int64)
    return Design(d.dense, empty, empty, np.zeros(0, dtype=np.float32), d.width)


def save(models: dict[str, Model], path: Path, version: str, orders: Sequence[int] = ORDERS,
         bits: int = BITS) -> None:
    weights = np.hstack([models[h].weights for h in HEADS]).astype(np.float16)
    bias = np.concatenate([models[h].bias for h in HEADS]).astype(np.float32)
    np.savez_compressed(
        path, weights=weights, bias=bias, orders=np.array(orders, dtype=np.int64), bits=np.array(bits),
        version=np.array(version), **{f"{h}_classes": np.array(CLASSES[h]) for h in HEADS},
    )
