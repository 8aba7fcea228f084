"""Keep only candidates worth remembering."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model import check_unit_interval
from .candidate import Candidate


@dataclass(frozen=True, slots=True)
class GatePolicy:
    min_confidence: float = 0.7
    min_importance: float = 0.3

    def __post_init__(self) -> None:
        check_unit_interval(self.min_confidence, "min_confidence")
        check_unit_interval(self.min_importance, "min_importance")


def gate(candidates: Sequence[Candidate], policy: GatePolicy) -> tuple[list[Candidate], list[tuple[Candidate, str]]]:
    """Split candidates into kept ones and (skipped, reason) pairs."""
    kept, skipped = [], []
    for candidate in candidates:
        if candidate.confidence < policy.min_confidence:
            skipped.append((candidate, f"confidence {candidate.confidence:.2f} < {policy.min_confidence:.2f}"))
        elif candidate.importance < policy.min_importance:
            skipped.append((candidate, f"importance {candidate.importance:.2f} < {policy.min_importance:.2f}"))
        else:
            kept.append(candidate)
    return kept, skipped
