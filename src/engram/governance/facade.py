"""The governance methods of ``Memory`` (it inherits them): thin, each validates its
arguments and calls one function of approvals, recalls, quality or keys."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ..core import WriteCore
from ..errors import InvalidValueError, NotFoundError
from ..limits import check_offset
from ..model import MemoryRecord, Scope, check_scope, parse_enum, utc
from . import approvals as _approvals
from . import keys as _keys
from . import quality as _quality
from . import recalls as _recalls
from .keys import KeyStatus, Revealed, Rotation
from .quality import QualityReport, SampleForReview
from .recalls import Provenance, RecallTrace
from .values import PendingChange, PendingStatus, RecallEvent, SampleQuery, Verdict, WriteSample

DEFAULT_WINDOW = timedelta(days=1)
DEFAULT_SAMPLE_SINCE = timedelta(days=7)
_ALL = 10**7


class GovernanceFacade:
    """Approvals, answers ↔ recalls, write accuracy, quality metrics, keys and reveal."""

    core: WriteCore

    # -- approvals ----------------------------------------------------------------------------

    def approvals(
        self, scope: Scope, *, status: PendingStatus | str | Sequence[PendingStatus | str] | None = "pending",
        limit: int = 100, offset: int = 0, record_id: str | None = None,
    ) -> list[PendingChange]:
        """Changes held by an approval rule in a scope and below it, oldest first
        (``status=None``: any status; one past its expiry shows as expired)."""
        check_scope(scope)
        _check_count(limit, "limit")
        check_offset(offset)
        return _approvals.listing(self.core, scope, _statuses(status), limit=limit, offset=offset, record_id=record_id)

    def pending_change(self, pending_id: str, scope: Scope) -> PendingChange:
        check_scope(scope)
        return _approvals.get(self.core, scope, pending_id)

    def approve(
        self, pending_id: str, scope: Scope, *, reviewer: str, reason: str | None = None,
        edit: Mapping[str, Any] | None = None,
    ) -> list[MemoryRecord]:
        """Write a pending change as ``reviewer`` (``edit``: fields of its record to change
        first). ConflictError when the record changed since it was proposed, or when the
        change was decided or expired meanwhile; nothing is written then."""
        check_scope(scope)
        return _approvals.approve(self.core, scope, pending_id, reviewer=reviewer, reason=reason, edit=edit)

    def reject(self, pending_id: str, scope: Scope, *, reviewer: str, reason: str | None = None) -> PendingChange:
        """Refuse a pending change; nothing of it is written, the audit keeps the reason."""
        check_scope(scope)
        return _approvals.reject(self.core, scope, pending_id, reviewer=reviewer, reason=reason)

    def expire_pending(self) -> int:
        """Mark pending changes past their expiry as expired (every tenant); ``maintain`` runs it."""
        return _approvals.expire_due(self.core)

    # -- which answer used which memory -------------------------------------------------------

    def answered(
        self, recall_id: str, scope: Scope, *, answer_id: str, answer: str | None = None,
        used: Sequence[str] | None = None,
    ) -> RecallEvent:
        """Link the answer ``answer_id`` to the recall (``ContextBlock.recall_id``) it was
        produced from; ``used`` (the model's citations) or ``answer`` (its text, compared
        with each memory) says which recalled memories it used. The text is not stored."""
        check_scope(scope)
        return _recalls.link_answer(self.core, scope.tenant, recall_id, answer_id=answer_id, answer=answer, used=used)

    def answer_trace(self, ident: str, scope: Scope) -> list[RecallTrace]:
        """The memories behind an answer id (or one recall id): what was in the prompt,
        with scores, and which the answer used."""
        check_scope(scope)
        return _recalls.trace(self.core, scope.tenant, ident)

    def why(self, record_id: str, scope: Scope) -> Provenance:
        """Where a memory came from (thread, messages, extractor, versions, approvals) and
        which recalls served it since."""
        return _recalls.provenance(self.core, self._governed(record_id, scope))

    # -- write accuracy and quality -----------------------------------------------------------

    def sample_writes(
        self, scope: Scope, *, n: int = 20, since: datetime | None = None, actor: str | None = None,
        seed: int | None = None,
    ) -> list[WriteSample]:
        """Queue up to ``n`` random writes of the scope (and below) made since ``since``
        (default: the last 7 days; ``actor``: an fnmatch pattern) for review."""
        check_scope(scope)
        start = utc(since) if since is not None else self.core.clock.now() - DEFAULT_SAMPLE_SINCE
        return _quality.sample_writes(self.core, scope, n=n, since=start, actor=actor, rng=random.Random(seed))

    def write_samples(
        self, scope: Scope, *, reviewed: bool | None = False, limit: int = 100,
    ) -> list[SampleForReview]:
        """Queued samples (by default those awaiting a verdict), each with the version as written."""
        check_scope(scope)
        _check_count(limit, "limit")
        found = self.core.store.write_samples(scope.tenant, SampleQuery(namespace=scope.namespace, reviewed=reviewed,
                                                                        limit=limit))
        return _quality.for_review(self.core, found)

    def mark_sample(
        self, sample_id: str, scope: Scope, verdict: Verdict | str, *, reviewer: str, note: str | None = None,
    ) -> WriteSample:
        """Judge a sampled write: correct, wrong or should_not_store."""
        check_scope(scope)
        return _quality.mark(self.core, scope, sample_id, verdict, reviewer=reviewer, note=note)

    def quality(
        self, tenant: str, *, since: datetime | None = None, window: timedelta = DEFAULT_WINDOW,
        repeat_window: timedelta = timedelta(hours=1),
    ) -> QualityReport:
        """Write accuracy, recall hit rate, repeat rate, writes and skips, PII actions,
        pending approvals and recall latency of one tenant since ``since`` (default: the
        last ``window``)."""
        Scope(tenant)
        start = utc(since) if since is not None else self.core.clock.now() - window
        return _quality.report(self.core, tenant, since=start, repeat_window=repeat_window)

    # -- keys and reveal ----------------------------------------------------------------------

    def key_status(self, tenant: str) -> KeyStatus:
        """Which configured key decrypts how many stored values (fingerprints only)."""
        Scope(tenant)
        return _keys.status(self.core, tenant)

    def rotate_keys(self, tenant: str | None = None, *, actor: str = "app") -> list[Rotation]:
        """Re-encrypt values stored under an older key with the current (first) one, in
        one tenant or all; reads keep working meanwhile (every configured key decrypts)."""
        tenants = [Scope(tenant).tenant] if tenant is not None else self.core.store.tenants()
        return [_keys.rotate(self.core, name, actor=actor) for name in tenants]

    def reveal(self, record_id: str, scope: Scope, *, actor: str, reason: str | None = None) -> Revealed:
        """A memory with its encrypted personal data decrypted, for a reader the caller
        has authorised; every reveal is audited (``reveal``, with ``actor`` and ``reason``)."""
        if not isinstance(actor, str) or not actor.strip():
            raise InvalidValueError("a reveal needs the actor it is audited under")
        return _keys.reveal(self.core, self._governed(record_id, scope), actor=actor, reason=reason)

    def tenants(self) -> list[str]:
        """The tenants that hold memories."""
        return self.core.store.tenants()

    # -- helpers ------------------------------------------------------------------------------

    def _governed(self, record_id: str, scope: Scope) -> MemoryRecord:
        check_scope(scope)
        found = self.core.store.get(scope.tenant, [record_id]) if isinstance(record_id, str) else []
        if not found or not scope.contains(found[0].scope):
            raise NotFoundError(f"no memory {record_id!r} in scope {scope}")
        return found[0]


def _check_count(value: Any, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _ALL:
        raise InvalidValueError(f"{what} must be a positive integer, got {value!r}")


def _statuses(status: Any) -> tuple[PendingStatus, ...]:
    if status is None:
        return ()
    items = [status] if isinstance(status, str) else list(status)
    return tuple(parse_enum(PendingStatus, s, "pending status") for s in items)
