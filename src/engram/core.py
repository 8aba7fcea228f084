"""The one write path. Every change to memory, whoever proposes it, passes here:

    producers: the Memory facade, the add() pipeline, background jobs, maintenance,
               import, reindex (and every surface through the facade)
        └─► WriteCore.admit(change)    PII policy of the tenant on the FINAL record
                                       → policy hooks (they see exactly what will be stored)
                                       → approval rules (approval_rules.py): a match is
                                         held as a pending change instead of written
              └─► WriteCore.commit(…)  vectors (one reuse rule) → version row → audit row
                                       → store.apply(): ONE transaction, the only caller

A producer builds ``Change`` values (what it wants the record to become and why);
it never builds rows. ``admit`` may refuse one change (PermissionDeniedError, of
which PIIForbiddenError is one) so a producer handling many candidates can report
that one as skipped and commit the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from .approval_rules import ApprovalMatch, ApprovalRules, proposal, proposal_audit
from .changes import Change, PolicyHook, WriteIntent
from .clock import Clock
from .embed.base import Embedder
from .errors import InvalidValueError
from .limits import InputLimits
from .model import Job, MemoryRecord, Operation, SearchHit, Status, Version
from .pii import ENCRYPTED_KEY, PIIPolicies, PIIPolicy, Redactor, check_labels, screen, screen_record
from .reads import ReadContext
from .side_fields import screened_batch
from .store.base import AuditDraft, Holding, RecordWrite, Store, Touch, WriteBatch
from .text.tokenize import DEFAULT_TOKENIZER, Tokenizer
from .values.episodes import EpisodeWrites, TurnDraft
from .values.governance import GovernanceWrites, PendingApprovalError, PendingChange, RecalledMemory, RecallEvent
from .writes import new_id, retire


@dataclass(frozen=True, slots=True)
class Admitted:
    """A change that passed the PII policy and the policy hooks. Only
    ``WriteCore.admit`` makes these; only ``WriteCore.commit`` takes them."""

    change: Change
    approval: ApprovalMatch | None = None  # an approval rule holds it: propose it, do not write it

    @property
    def record(self) -> MemoryRecord | None:
        return self.change.record


class WriteCore:
    """Holds what every write needs (store, embedder, clock, policies, PII policy,
    the store's tokenizer) and is the only caller of ``store.apply``."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        clock: Clock,
        *,
        policies: list[PolicyHook] | None = None,
        pii: PIIPolicies | None = None,
        approvals: ApprovalRules | None = None,
        limits: InputLimits | None = None,
        tokenizer: Tokenizer = DEFAULT_TOKENIZER,
    ) -> None:
        self.store = store
        # the store's tokenizer (search/store_terms.py): every record's terms come from it
        self.tokenizer = tokenizer
        self.embedder = embedder
        self.clock = clock
        self.policies: list[PolicyHook] = policies if policies is not None else []
        self.pii = pii or PIIPolicies()
        self.approvals = approvals or ApprovalRules()
        self.limits = limits or InputLimits()
        self._held = threading.local()

    @property
    def reads(self) -> ReadContext:
        """What code that only reads is given (reads.py): this core's store, embedder,
        clock, tokenizer, limits and PII policies, and no way to write."""
        return ReadContext(self.store, self.embedder, self.clock, self.tokenizer, self.limits, self.pii)

    @contextmanager
    def holding(self, holding: Holding) -> Iterator[None]:
        """Every commit of this thread inside the block is refused (WorkCancelledError,
        nothing written) unless the job or lease ``holding`` names is still there: a
        purge deletes them first, so background work begun before it writes nothing."""
        before = getattr(self._held, "value", None)
        self._held.value = holding
        try:
            yield
        finally:
            self._held.value = before

    def pii_for(self, tenant: str) -> PIIPolicy:
        return self.pii.for_tenant(tenant)

    # -- the gate ----------------------------------------------------------------------------

    def admit(self, change: Change) -> Admitted:
        """PII policy on the final record, then the policy hooks, then the approval
        rules. Raises PermissionDeniedError (PIIForbiddenError for personal data the
        tenant's policy forbids) and writes nothing; a change an approval rule holds
        comes back with its ``approval`` (``commit`` refuses it, ``propose`` keeps it)."""
        record = change.record
        if record is None and change.operation is not Operation.PURGE:
            raise InvalidValueError(f"a {change.operation.value} change needs the record's new state")
        found: frozenset[str] = frozenset()
        if record is not None and (change.previous is None or _sized(change.previous) != _sized(record)):
            self.limits.check_fields(content=record.content, reply_to=record.source.reply_to,
                                     metadata=record.metadata, tags=record.tags, category=record.category)
        if record is not None:
            # new text may be refused; a record only changing state is never stuck (forbidden values become markers)
            refuse = change.previous is None or _texts(change.previous) != _texts(record)
            policy = self.pii_for(record.scope.tenant)
            if change.previous is None:  # a new record: its labels are stored as given
                check_labels(record.scope.tenant, record.scope.namespace, policy)
            screened = screen(record, policy, refuse=refuse)
            record, found = screened.record, screened.kinds
            detail = {**change.detail, "pii": {k: policy.action_for(k) for k in sorted(found)}} if (
                refuse and found) else change.detail
            change = replace(change, record=record, history=self._screened_history(change.history), detail=detail)
        intent = WriteIntent(change.operation, change.actor, change.scope, record, change.previous)
        for hook in self.policies:
            hook(intent)
        held = self.approvals.match(intent, found) if change.approved is None and self.approvals.active else None
        return Admitted(change, held)

    def propose(self, admitted: Sequence[Admitted]) -> PendingChange:
        """One logical write (e.g. a supersede's two changes) held for a reviewer as one
        pending change; ``commit(governance=GovernanceWrites(pending=…))`` stores it."""
        match = next((a.approval for a in admitted if a.approval is not None), None)
        if match is None:
            raise InvalidValueError("no approval rule holds these changes; commit them")
        return proposal([a.change for a in admitted], match, self.clock.now())

    def _screened_history(self, history: tuple[Version, ...]) -> tuple[Version, ...]:
        return tuple(
            v if v.record is None else replace(v, record=screen_record(v.record, self.pii_for(v.record.scope.tenant)))
            for v in history
        )

    def commit(
        self,
        admitted: Sequence[Admitted],
        *,
        tenant: str | None = None,
        audit: Sequence[AuditDraft] = (),
        touches: Sequence[Touch] = (),
        jobs: Sequence[Job] = (),
        governance: GovernanceWrites | None = None,
        episodes: EpisodeWrites | None = None,
    ) -> list[MemoryRecord]:
        """Write admitted changes (and any extra audit rows, touches, jobs,
        governance rows — pending changes are audited as proposed — and episode rows:
        turns are screened by the tenant's PII policy here) in one transaction.
        Returns the records as stored."""
        tenant = self._tenant_of(admitted, tenant)
        self._check_new_labels(tenant, jobs, episodes)
        held = [a for a in admitted if a.approval is not None]
        if held:
            raise InvalidValueError(f"{len(held)} change(s) are held by an approval rule: propose them instead")
        governance = governance or GovernanceWrites()
        audit = (*audit, *(proposal_audit(p) for p in governance.pending))
        changes = [a.change for a in admitted]
        purged = [c for c in changes if c.operation is Operation.PURGE]
        kept = [c for c in changes if c.operation is not Operation.PURGE]
        records = [replace(c.record, embedding_model=self.embedder.name) for c in kept if c.record is not None]
        vectors = self._vectors(kept, records)
        pairs = list(zip(kept, records))
        now = self.clock.now()
        batch = WriteBatch(
            tenant,
            records=tuple(RecordWrite(r, self.tokenizer.index_text(r.indexed_text), v, _expected(c))
                          for (c, r), v in zip(pairs, vectors)),
            versions=tuple(v for c, r in pairs for v in _versions(c, r)),
            audit=(*(_audit(c, r, now) for c, r in pairs),
                   *(_purge_audit(c, now, governance.purged_scopes) for c in purged), *audit),
            purge_ids=tuple(c.previous.id for c in purged if c.previous is not None),
            touches=tuple(touches),
            jobs=tuple(jobs),
            governance=governance,
            episodes=self._screened_turns(tenant, episodes or EpisodeWrites()),
            holding=getattr(self._held, "value", None),
        )
        if (batch.records or batch.purge_ids or batch.audit or batch.touches or batch.jobs
                or not governance.empty or not batch.episodes.empty):
            self.store.apply(screened_batch(batch, self.pii_for(tenant)))  # every text beside the records
        return records

    def write(
        self, changes: Sequence[Change], *, audit: Sequence[AuditDraft] = (), tenant: str | None = None,
        governance: GovernanceWrites | None = None,
    ) -> list[MemoryRecord]:
        """Admit every change (any refusal raises and nothing is written), then commit.
        When an approval rule holds any of them, the whole write is stored as one
        pending change instead and PendingApprovalError says so."""
        if not changes and (governance is None or governance.empty):
            return []
        admitted = [self.admit(c) for c in changes]
        if any(a.approval is not None for a in admitted):
            pending = self.propose(admitted)
            self.commit([], tenant=pending.tenant, governance=GovernanceWrites(pending=(pending,)))
            raise PendingApprovalError(pending)
        return self.commit(admitted, audit=audit, tenant=tenant, governance=governance)

    def _check_new_labels(self, tenant: str, jobs: Sequence[Job], episodes: EpisodeWrites | None) -> None:
        """Namespaces new turns, threads and queued jobs are kept under: labels as the PII
        policy allows (new records are checked in ``admit``)."""
        namespaces = {tuple(job.payload.get("namespace") or ()) for job in jobs}
        if episodes is not None:
            namespaces |= {turn.namespace for turn in episodes.turns}
            namespaces |= {namespace for namespace, _thread, _meta in episodes.thread_metadata}
        if namespaces:
            policy = self.pii_for(tenant)
            for namespace in namespaces:
                check_labels(tenant, namespace, policy)

    def _screened_turns(self, tenant: str, episodes: EpisodeWrites) -> EpisodeWrites:
        """Turns reach disk as the PII policy allows: masked or encrypted, a forbidden
        value replaced by its marker (a conversation is kept, never refused), and
        indexed from the screened text only."""
        if not episodes.turns:
            return episodes
        policy = self.pii_for(tenant)
        return replace(episodes, turns=tuple(_screened_turn(turn, policy, self.tokenizer) for turn in episodes.turns))

    @staticmethod
    def _tenant_of(admitted: Sequence[Admitted], tenant: str | None) -> str:
        tenants = {a.change.scope.tenant for a in admitted} | ({tenant} if tenant else set())
        if len(tenants) != 1:
            raise InvalidValueError(f"one commit writes one tenant, got {sorted(tenants) or 'none'}")
        return tenants.pop()

    # -- vectors: one rule --------------------------------------------------------------------

    def _vectors(self, changes: Sequence[Change], records: Sequence[MemoryRecord]) -> list[np.ndarray | None]:
        """Reuse a vector only if it was made by the current model from exactly the text
        to be indexed: the producer's own, else the stored one of the previous state;
        embed the rest in one batch."""
        reuse = {c.previous.id for c, r in zip(changes, records)
                 if c.previous is not None and self._reusable(c.previous, r)}
        stored = self.stored_vectors(records[0].scope.tenant, sorted(reuse)) if reuse else {}
        out: list[np.ndarray | None] = []
        for change, record in zip(changes, records):
            if change.vector is not None and change.vector_text == record.indexed_text:
                out.append(change.vector)
            else:
                out.append(stored.get(change.previous.id) if change.previous is not None else None)
        missing = [i for i, vector in enumerate(out) if vector is None]
        if missing:
            for i, vector in zip(missing, self.embedder.embed([records[i].indexed_text for i in missing])):
                out[i] = vector
        return out

    def _reusable(self, previous: MemoryRecord, record: MemoryRecord) -> bool:
        return previous.indexed_text == record.indexed_text and previous.embedding_model == self.embedder.name

    def stored_vectors(self, tenant: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self.reads.stored_vectors(tenant, ids)

    # -- what is not a record change ----------------------------------------------------------

    def record_recall(
        self, hits: Sequence[SearchHit], actor: str, detail: Mapping[str, Any], *, tenants: Sequence[str] = (),
        latency_ms: float | None = None,
    ) -> str:
        """Which memories served an answer: a recall row (its id links the answer
        later), audit rows and access counts, per tenant (``tenants``: those searched,
        so a recall that found nothing is counted too). Returns the recall id."""
        now = self.clock.now()
        recall_id = new_id()
        by_tenant: dict[str, list[SearchHit]] = {tenant: [] for tenant in tenants}
        for hit in hits:
            by_tenant.setdefault(hit.record.scope.tenant, []).append(hit)
        for tenant, group in by_tenant.items():
            audit = [AuditDraft(actor=actor, operation=Operation.RECALL, at=now, record_id=h.record.id,
                                version=h.record.version, namespace=h.record.scope.namespace,
                                detail={**detail, "recall_id": recall_id, "score": round(h.score, 4)})
                     for h in group]
            event = RecallEvent(recall_id, tenant, now, actor,
                                tuple(RecalledMemory(h.record.id, h.record.version, h.score) for h in group),
                                latency_ms, detail.get("thread_id"), detail.get("answer_id"))
            self.commit([], tenant=tenant, audit=audit, touches=[Touch(h.record.id, now) for h in group],
                        governance=GovernanceWrites(recalls=(event,)))
        return recall_id

    def enqueue(self, job: Job) -> None:
        self.commit([], tenant=job.tenant, jobs=[job])


# -- change builders shared by every producer ------------------------------------------------


def superseding(
    old: MemoryRecord, new: MemoryRecord, *, actor: str, reason: str | None, at: datetime,
    detail: Mapping[str, Any] | None = None, vector: np.ndarray | None = None, vector_text: str | None = None,
) -> list[Change]:
    """A fact replaced by a newer one: the new record (linked back) and the old one
    retired as superseded, valid until ``at``. The one way anything supersedes."""
    new = replace(new, supersedes=old.id)
    # a change stated to have happened earlier ("last month") ends the old fact then, not now
    ended = new.valid_from if old.valid_from < new.valid_from < at else at
    return [
        Change(Operation.CREATE, new, None, actor, reason, {**(detail or {}), "supersedes": old.id},
               vector=vector, vector_text=vector_text),
        retired_by(old, new.id, actor=actor, reason=reason, at=at, detail=detail, valid_to=ended),
    ]


def retired_by(
    old: MemoryRecord, successor_id: str, *, actor: str, reason: str | None, at: datetime,
    detail: Mapping[str, Any] | None = None, valid_to: datetime | None = None,
) -> Change:
    """The old record as superseded by ``successor_id`` (which may already exist), valid
    until ``valid_to`` (default ``at``)."""
    ended = valid_to or at
    retired = retire(old, Status.SUPERSEDED, at, valid_to=min(old.valid_to, ended) if old.valid_to else ended,
                     superseded_by=successor_id)
    return Change(Operation.SUPERSEDE, retired, old, actor, reason, {**(detail or {}), "superseded_by": successor_id})


def _screened_turn(turn: TurnDraft, policy: PIIPolicy, tokenizer: Tokenizer) -> TurnDraft:
    redactor = Redactor(policy)
    content = redactor.text(turn.content, "turn", refuse=False)
    name = redactor.text(turn.name, "turn name", refuse=False) if turn.name else turn.name
    metadata = {**turn.metadata, ENCRYPTED_KEY: redactor.encrypted} if redactor.encrypted else turn.metadata
    return replace(turn, content=content, name=name, metadata=metadata, terms=tokenizer.index_text(content))


def _texts(record: MemoryRecord) -> tuple[Any, ...]:
    """What is screened; the ciphertexts of encrypted values are not text (key rotation changes only them)."""
    metadata = {k: v for k, v in record.metadata.items() if k != ENCRYPTED_KEY}
    return record.content, record.source.reply_to, metadata


def _sized(record: MemoryRecord) -> tuple[Any, ...]:
    """The fields the input limits bound; a change that leaves them alone is never refused for them."""
    return record.content, record.source.reply_to, record.metadata, record.tags, record.category


def _expected(change: Change) -> int | None:
    return change.previous.version if change.previous is not None else None


def _versions(change: Change, record: MemoryRecord) -> tuple[Version, ...]:
    if change.history:
        return change.history
    return (Version(record.id, record.version, change.operation, change.actor, record.updated_at, change.reason,
                    record),)


def _audit(change: Change, record: MemoryRecord, now: datetime) -> AuditDraft:
    """When the change happened: the new state's time, except an import's (its
    records keep their own times; the import happens now)."""
    at = now if change.operation is Operation.IMPORT else record.updated_at
    detail = {"reason": change.reason, **change.detail} if change.reason else dict(change.detail)
    return AuditDraft(actor=change.actor, operation=change.operation, at=at, record_id=record.id,
                      version=record.version, namespace=record.scope.namespace,
                      source_message_id=record.source.message_id, detail=detail)


def _purge_audit(change: Change, at: datetime, erased: Sequence[tuple[str, ...]]) -> AuditDraft:
    """That a purge happened, by whom and why; never what was purged. A record purged
    with its whole scope (a user erased) is audited without the scope's labels."""
    gone = change.previous
    assert gone is not None
    namespace = gone.scope.namespace
    if any(namespace[: len(scope)] == scope for scope in erased):
        return AuditDraft(actor=change.actor, operation=Operation.PURGE, at=at, record_id=gone.id,
                          version=gone.version, detail={"scope_erased": True})
    return AuditDraft(actor=change.actor, operation=Operation.PURGE, at=at, record_id=gone.id, version=gone.version,
                      namespace=namespace, detail={"reason": change.reason} if change.reason else {})
