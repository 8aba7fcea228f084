"""A wall-clock budget shared by every model call of one unit of work.

``add()`` runs inside ``within(seconds)``; each HTTP call to a model provider
(``engram.llm.http.post_json``) ends by the earlier of its own deadline and the one
in force here, retries and ``Retry-After`` waits included, so one slow or rate-limited
provider cannot hold an ``add()`` longer than configured (``Settings.add_deadline_s``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_DEADLINE: ContextVar[float | None] = ContextVar("engram_llm_deadline", default=None)


@contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Model calls made inside end within ``seconds`` from now (None: no extra bound);
    nested budgets keep the earlier deadline."""
    if seconds is None:
        yield
        return
    current = _DEADLINE.get()
    moment = time.monotonic() + seconds
    token = _DEADLINE.set(moment if current is None else min(current, moment))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def current_deadline() -> float | None:
    """The ``time.monotonic()`` moment the work in progress must end by, if any."""
    return _DEADLINE.get()
