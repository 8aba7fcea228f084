"""Record ids as a user types them: the whole id, or any unique prefix of at least
MIN_PREFIX characters (tables show ID_CHARS)."""

from __future__ import annotations

from ..errors import InvalidValueError, NotFoundError
from ..memory import Memory
from ..model import Scope

MIN_PREFIX = 8
SHOWN = 5


def resolve_id(memory: Memory, text: str, scope: Scope) -> str:
    """The one record id in ``scope`` (any status) that is ``text`` or starts with it.
    NotFoundError when none does; InvalidValueError when the prefix is too short or
    names several records (the message lists them)."""
    record_id = text.strip()
    try:
        return memory.get(record_id, scope).id
    except NotFoundError:
        if len(record_id) < MIN_PREFIX:
            raise NotFoundError(f"no memory {record_id!r} in scope {scope} (an id prefix needs at least "
                                f"{MIN_PREFIX} characters)") from None
    found = _starting_with(memory, record_id, scope)
    if not found:
        raise NotFoundError(f"no memory whose id starts with {record_id!r} in scope {scope}")
    if len(found) > 1:
        listed = ", ".join(found[:SHOWN]) + (f" and {len(found) - SHOWN} more" if len(found) > SHOWN else "")
        raise InvalidValueError(f"the id prefix {record_id!r} is ambiguous: it matches {len(found)} memories "
                                f"({listed}); give more characters")
    return found[0]


def _starting_with(memory: Memory, prefix: str, scope: Scope) -> list[str]:
    # A scan of the scope through the facade: fine for a person at a terminal; a
    # store-side prefix lookup would make it a range read.
    records = memory.scan(scope, include_descendants=True, statuses=None)
    return [r.id for r in records if r.id.startswith(prefix)]
