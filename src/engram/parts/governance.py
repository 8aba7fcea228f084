"""The governance parts of ``Memory``: ``memory.approvals``, ``memory.audit``,
``memory.quality`` and ``memory.keys``. Each is thin: it validates its arguments and
calls one function of approvals, recalls, quality or keys, over the one write core;
the read verbs are given only its read context (``reads.py``)."""

from __future__ import annotations

import builtins
import random
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from ..core import WriteCore
from ..errors import InvalidValueError, NotFoundError
from ..governance import approvals as _approvals
from ..governance import keys as _keys
from ..governance import quality as _quality
from ..governance import recalls as _recalls
from ..governance.keys import KeyStatus, Revealed, Rotation
from ..governance.quality import QualityReport, SampleForReview
from ..governance.recalls import Provenance, RecallTrace
from ..limits import check_count, check_offset
from ..model import AuditEvent, MemoryRecord, Operation, Scope, check_scope, parse_enum, utc
from ..pii import mask_identifier
from ..reads import ReadContext
from ..store.base import AuditQuery
from ..values.governance import PendingChange, PendingStatus, RecallEvent, SampleQuery, Verdict, WriteSample

DEFAULT_WINDOW = timedelta(days=1)
DEFAULT_SAMPLE_SINCE = timedelta(days=7)


class Part:
    """A named part of ``Memory``, over the same write core as every other."""

    def __init__(self, core: WriteCore) -> None:
        self._core = core

    @property
    def _reads(self) -> ReadContext:
        """What the read verbs get: the core's store, clock and policies, and no way to write."""
        return self._core.reads

    def _governed(self, record_id: str, scope: Scope) -> MemoryRecord:
        check_scope(scope)
        found = self._reads.store.get(scope.tenant, [record_id]) if isinstance(record_id, str) else []
        if not found or not scope.contains(found[0].scope):
            raise NotFoundError(f"no memory {record_id!r} in scope {scope}")
        return found[0]


class Approvals(Part):
    """``memory.approvals``: changes an approval rule held for a reviewer."""

    def list(
        self, scope: Scope, *, status: PendingStatus | str | Sequence[PendingStatus | str] | None = "pending",
        limit: int = 100, offset: int = 0, record_id: str | None = None,
    ) -> builtins.list[PendingChange]:
        """Changes held in a scope and below it, oldest first (``status=None``: any
        status; one past its expiry shows as expired)."""
        check_scope(scope)
        check_count(limit, "limit")
        check_offset(offset)
        return _approvals.listing(self._reads, scope, _statuses(status), limit=limit, offset=offset,
                                  record_id=record_id)

    def get(self, pending_id: str, scope: Scope) -> PendingChange:
        check_scope(scope)
        return _approvals.get(self._reads, scope, pending_id)

    def approve(
        self, pending_id: str, scope: Scope, *, reviewer: str, reason: str | None = None,
        edit: Mapping[str, Any] | None = None,
    ) -> builtins.list[MemoryRecord]:
        """Write a pending change as ``reviewer`` (``edit``: fields of its record to change
        first). ConflictError when the record changed since it was proposed, or when the
        change was decided or expired meanwhile; nothing is written then."""
        check_scope(scope)
        return _approvals.approve(self._core, scope, pending_id, reviewer=reviewer, reason=reason, edit=edit)

    def reject(self, pending_id: str, scope: Scope, *, reviewer: str, reason: str | None = None) -> PendingChange:
        """Refuse a pending change; nothing of it is written, the audit keeps the reason."""
        check_scope(scope)
        return _approvals.reject(self._core, scope, pending_id, reviewer=reviewer, reason=reason)

    def expire(self) -> int:
        """Mark pending changes past their expiry as expired (every tenant);
        ``memory.maintenance.run()`` does it."""
        return _approvals.expire_due(self._core)


class Audit(Part):
    """``memory.audit``: the audit trail, where a memory came from, and which answer
    used which memory."""

    def list(
        self, scope: Scope, *, record_id: str | None = None, operation: Operation | str | None = None,
        since: datetime | None = None, limit: int = 100, newest_first: bool = False,
        exclude: Sequence[Operation | str] = (),
    ) -> builtins.list[AuditEvent]:
        """Audit events of a scope and below it, oldest first (``newest_first``: the
        latest ``limit``, newest first); ``exclude``: operations left out (e.g. recalls)."""
        check_scope(scope)
        op = parse_enum(Operation, operation, "operation") if operation is not None else None
        since = None if since is None else utc(since, "since")
        left_out = tuple(parse_enum(Operation, o, "exclude") for o in exclude)
        events = self._reads.store.audit(scope.tenant, AuditQuery(record_id, op, since, limit, bool(newest_first),
                                                                  left_out))
        return [e for e in events if e.namespace[: len(scope.namespace)] == scope.namespace]

    def why(self, record_id: str, scope: Scope) -> Provenance:
        """Where a memory came from (thread, messages, extractor, versions, approvals) and
        which recalls served it since."""
        return _recalls.provenance(self._reads, self._governed(record_id, scope))

    def link_answer(
        self, recall_id: str, scope: Scope, *, answer_id: str, answer: str | None = None,
        used: Sequence[str] | None = None,
    ) -> RecallEvent:
        """Link the answer ``answer_id`` to the recall (``ContextBlock.recall_id``) it was
        produced from; ``used`` (the model's citations) or ``answer`` (its text, compared
        with each memory) says which recalled memories it used. The text is not stored."""
        check_scope(scope)
        return _recalls.link_answer(self._core, scope.tenant, recall_id, answer_id=answer_id, answer=answer,
                                    used=used)

    def recent_recalls(self, scope: Scope, *, limit: int = 5) -> builtins.list[RecallTrace]:
        """The latest ``limit`` recalls that served memories of the scope (or below it),
        newest first, each with those memories as they are now."""
        check_scope(scope)
        return _recalls.recent(self._reads, scope, limit)

    def answer(self, ident: str, scope: Scope) -> builtins.list[RecallTrace]:
        """The memories behind an answer id (or one recall id): what was in the prompt,
        with scores, and which the answer used."""
        check_scope(scope)
        if isinstance(ident, str):  # an answer id is stored as the PII policy leaves it
            ident = mask_identifier(ident, self._reads.pii_for(scope.tenant))
        return _recalls.trace(self._reads, scope.tenant, ident)


class Quality(Part):
    """``memory.quality``: write accuracy (sampled writes a person judges) and the
    quality report."""

    def sample(
 self, scope: Scope, *, n: int = 20, since: datetime | None = None, actor: str | None = None,
 seed: int | None = None,
    ) -> builtins.list[WriteSample]:
        """Queue up to ``n`` random writes of the scope (and below) made since ``since``
        (default: the last 7 days; ``actor``: an fnmatch pattern) for review."""
        check_scope(scope)
        start = utc(since) if since is not None else self._core.clock.now() - DEFAULT_SAMPLE_SINCE
        return _quality.sample_writes(self._core, scope, n=n, since=start, actor=actor, rng=random.Random(seed))

    def list(self, scope: Scope, *, reviewed: bool | None = False, limit: int = 100) -> builtins.list[SampleForReview]:
        """Queued samples (by default those awaiting a verdict), each with the version as written."""
        check_scope(scope)
        check_count(limit, "limit")
        query = SampleQuery(namespace=scope.namespace, reviewed=reviewed, limit=limit)
        return _quality.for_review(self._reads, self._reads.store.write_samples(scope.tenant, query))

    def mark(
 self, sample_id: str, scope: Scope, verdict: Verdict | str, *, reviewer: str, note: str | None = None,
    ) -> WriteSample:
        """Judge a sampled write: correct, wrong or should_not_store."""
        check_scope(scope)
        return _quality.mark(self._core, scope, sample_id, verdict, reviewer=reviewer, note=note)

    def report(
       self, tenant: str, *, since: datetime | None = None, window: timedelta = DEFAULT_WINDOW,
       repeat_window: timedelta = timedelta(hours=1),
    ) -> QualityReport:
        """Write accuracy, recall hit rate, repeat rate, writes and skips, PII actions,
        pending approvals and recall latency of one tenant since ``since`` (default: the
        last ``window``)."""
        Scope(tenant)
        start = utc(since) if since is not None else self._reads.clock.now() - window
        return _quality.report(self._reads, tenant, since=start, repeat_window=repeat_window)


class Keys(Part):
    """``memory.keys``: the encryption keys of personal data, and reveal."""

    def status(self, tenant: str) -> KeyStatus:
        """Which configured key decrypts how many stored values (fingerprints only)."""
        Scope(tenant)
        return _keys.status(self._reads, tenant)

    def rotate(self, tenant: str | None = None, *, actor: str = "app") -> builtins.list[Rotation]:
        """Re-encrypt values stored under an older key with the current (first) one, in
        one tenant or all; reads keep working meanwhile (every configured key decrypts)."""
        tenants = [Scope(tenant).tenant] if tenant is not None else self._reads.store.tenants()
        return [_keys.rotate(self._core, name, actor=actor) for name in tenants]

    def reveal(self, record_id: str, scope: Scope, *, actor: str, reason: str | None = None) -> Revealed:
        """A memory with its encrypted personal data decrypted, for a reader the caller
        has authorised; every reveal is audited (``reveal``, with ``actor`` and ``reason``)."""
        if not isinstance(actor, str) or not actor.strip():
            raise InvalidValueError("a reveal needs the actor it is audited under")
        return _keys.reveal(self._core, self._governed(record_id, scope), actor=actor, reason=reason)


def _statuses(status: Any) -> tuple[PendingStatus, ...]:
    if status is None:
        return ()
    items = [status] if isinstance(status, str) else list(status)
    return tuple(parse_enum(PendingStatus, s, "pending status") for s in items)
