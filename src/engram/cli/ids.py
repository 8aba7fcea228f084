"""Record and pending-change ids as a user types them: the whole id, or any unique
prefix of at least MIN_PREFIX characters (tables show ID_CHARS)."""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import InvalidValueError, NotFoundError
from ..memory import Memory
from ..model import Scope
from ..values.governance import PendingChange

MIN_PREFIX = 8
SHOWN = 5
_PAGE = 500


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
    return _one(_starting_with(memory, record_id, scope), record_id, scope, "memory", "memories")


def resolve_pending_id(memory: Memory, text: str, scope: Scope) -> str:
    """A pending change's id from the whole id or a unique prefix (as ``resolve_id``)."""
    pending_id = text.strip()
    try:
        return memory.approvals.get(pending_id, scope).id
    except NotFoundError:
        if len(pending_id) < MIN_PREFIX:
            raise NotFoundError(f"no pending change {pending_id!r} in scope {scope} (an id prefix needs at least "
                                f"{MIN_PREFIX} characters)") from None
    ids = [p.id for p in _all_pending(memory, scope) if p.id.startswith(pending_id)]
    return _one(ids, pending_id, scope, "pending change", "pending changes")


def _one(found: list[str], prefix: str, scope: Scope, what: str, many: str) -> str:
    if not found:
        raise NotFoundError(f"no {what} whose id starts with {prefix!r} in scope {scope}")
    if len(found) > 1:
        listed = ", ".join(found[:SHOWN]) + (f" and {len(found) - SHOWN} more" if len(found) > SHOWN else "")
        raise InvalidValueError(f"the id prefix {prefix!r} is ambiguous: it matches {len(found)} {many} "
                                f"({listed}); give more characters")
    return found[0]


def _all_pending(memory: Memory, scope: Scope) -> Iterator[PendingChange]:
    offset = 0
    while page := memory.approvals.list(scope, status=None, limit=_PAGE, offset=offset):
        yield from page
        offset += _PAGE


def _starting_with(memory: Memory, prefix: str, scope: Scope) -> list[str]:
    # A scan of the scope through the facade: fine for a person at a terminal; a
    # store-side prefix lookup would make it a range read.
    records = memory.scan(scope, include_descendants=True, statuses=None)
    return [r.id for r in records if r.id.startswith(prefix)]
