"""How a plain write (one without ``expected_version``) outlasts concurrent writers.

A read-then-write that loses a race to another writer raises ``ConflictError`` from the
store's compare-and-swap. A plain write reads again and retries, with a jittered
exponential backoff so that many writers on one record do not keep colliding, for as
long as the database itself would wait on a lock (``Settings.busy_timeout_ms``); only a
record rewritten without pause for that long makes it fail. A write with
``expected_version`` is a compare-and-swap and is never retried.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from .errors import ConflictError

T = TypeVar("T")
FIRST_PAUSE_S = 0.001
LONGEST_PAUSE_S = 0.05


def last_writer_wins(attempt: Callable[[], T], *, budget_s: float, compare_and_swap: bool = False) -> T:
    """``attempt()`` until it does not lose a race, for at most ``budget_s`` seconds."""
    if compare_and_swap:
        return attempt()
    deadline = time.monotonic() + budget_s
    pause = FIRST_PAUSE_S
    while True:
        try:
            return attempt()
        except ConflictError:
            if time.monotonic() + pause >= deadline:
                raise
            time.sleep(pause * random.uniform(0.5, 1.5))
            pause = min(pause * 2, LONGEST_PAUSE_S)
