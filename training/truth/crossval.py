"""Folds for cross-validation: by writer (train on one, test on the other), by slot group
(slots never seen in training), or seeded k-fold when only one writer has data yet."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from engram.slots import Slot

from .dataset import Row

SEED = 27
# Slot groups left out together, so a held-out slot has no near twin in training.
SLOT_GROUPS: tuple[tuple[str, ...], ...] = (
    ("residence", "hometown", "commute", "timezone"),
    ("employer", "job_title", "manager", "work_hours", "work_mode"),
    ("diet", "allergies", "health"),
    ("children", "family", "relationship", "pets"),
    ("tools", "skills", "languages", "school"),
    ("likes", "dislikes", "hobbies", "goals"),
    ("reply_language", "reply_style", "rules", "budget"),
    ("name", "age", "birthday", "phone", "email", "vehicle"),
)
assert {s for g in SLOT_GROUPS for s in g} == {s.value for s in Slot} - {"other"}

Fold = tuple[str, np.ndarray, np.ndarray]  # name, train rows, test rows


def by_writer(rows: Sequence[Row]) -> Iterator[Fold]:
    names = sorted({r.writer for r in rows})
    for name in names:
        test = np.array([i for i, r in enumerate(rows) if r.writer == name])
        train = np.array([i for i, r in enumerate(rows) if r.writer != name])
        if len(train) and len(test):
            yield f"train {'+'.join(n for n in names if n != name)} -> test {name}", train, test


def k_fold(rows: Sequence[Row], k: int = 5) -> Iterator[Fold]:
    order = np.random.default_rng(SEED).permutation(len(rows))
    for part in range(k):
        test = np.sort(order[part::k])
        train = np.setdiff1d(np.arange(len(rows)), test)
        yield f"fold {part + 1}/{k}", train, test


def selection_folds(rows: Sequence[Row]) -> list[Fold]:
    """Writer folds once two writers each have enough lines, else k-fold."""
    sizes = [sum(r.writer == w for r in rows) for w in {r.writer for r in rows}]
    if len(sizes) >= 2 and min(sizes) >= 150:
        return list(by_writer(rows))
    return list(k_fold(rows))


def by_slot_group(rows: Sequence[Row]) -> Iterator[Fold]:
    """Test: the durable rows of one slot group; train: every row outside that group."""
    for group in SLOT_GROUPS:
        inside = np.array([r.slot in group and r.utterance in ("fact", "change") for r in rows])
        touched = np.array([r.slot in group for r in rows])
        test = np.flatnonzero(inside)
        train = np.flatnonzero(~touched)
        if len(test):
            yield "+".join(group), train, test
