"""add(): trigger → extract → gate → PII screen → reconcile → admit → write, in one transaction.

Each step is a small function of its own module; this one chains them and turns
decisions into changes for the write core, which screens the final text, runs the
policy hooks and writes. A change the core refuses makes its candidate SKIPPED
(with the reason); the rest of the call is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Protocol

import numpy as np

from ..changes import Change
from ..core import Admitted, WriteCore, retired_by, superseding
from ..errors import ConflictError, LLMError, PermissionDeniedError, ValidationError
from ..governance.events import extract_detail
from ..llm.base import TokenUsage
from ..llm.deadline import within
from ..model import Kind, MemoryRecord, Message, Operation, Scope, Source, Status
from ..pii import ENCRYPTED_KEY, Redactor, mask_identifier, masked_for_display
from ..slots import single_valued
from ..store.base import AuditDraft, AuditQuery, RecordFilter
from ..store.codec import namespace_key
from ..values.governance import GovernanceWrites, PendingChange
from ..writes import MemoryDraft, build_record, new_id, retire, revise
from .candidate import Candidate
from .dates import resolve_relative
from .forget import ForgetContext, forget_targets, held_because, just_said, points_back, spoken_forgets
from .gate import GatePolicy, gate
from .judge import Judge
from .judging import USEM3, EmbedFn, JudgePolicy, Readings, judge_candidates, states_something
from .reconcile import (
    Decision,
    EventName,
    ReconcilePolicy,
    Similar,
    decide_by_rules,
    decide_by_slot,
    decide_with_llm,
    normalized,
    same_subject,
)
from .rules.forgets import ForgetRequest
from .stated_time import stated_time
from .topics import slot_changes, topics
from .trigger import TriggerPolicy, should_extract

MAX_CONFLICT_RETRIES = 3
MAX_ITEMS = 100  # candidates (and invalid items) one add() looks at; a model answering more is cut here
SLOT_SCAN = 200  # how many of a scope's newest memories a change of a one-value topic is compared with
_JUDGE_MAY_FIRE = frozenset({"too_short", "temporary_question"})  # trigger reasons the judge may overrule
# A kept turn's metadata key: "add" when Memory.add extracts it (now or in its background job),
# so consolidation moves its watermark past the turn without extracting it again.
EXTRACTED_BY = "extracted_by"


class Extractor(Protocol):
    @property
    def name(self) -> str: ...

    def extract(self, messages: Sequence[Message]) -> list[Candidate]: ...


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    trigger: TriggerPolicy = field(default_factory=TriggerPolicy)
    gate: GatePolicy = field(default_factory=GatePolicy)
    reconcile: ReconcilePolicy = field(default_factory=ReconcilePolicy)
    judge: JudgePolicy = field(default_factory=JudgePolicy)
    dedup_window: timedelta = timedelta(minutes=5)
    similar_k: int = 5
    add_deadline_s: float | None = 300.0  # every model call of one add() ends by then (engram.llm.deadline)


@dataclass(frozen=True, slots=True)
class AddEvent:
    event: EventName
    content: str  # what was written (after PII screening and any merge); masked for a SKIPPED candidate
    kind: Kind | None
    reason: str
    record_id: str | None = None  # the record written (or the one that made it a NOOP)
    version: int | None = None
    target_id: str | None = None  # the record updated or superseded
    source_message_ids: tuple[str, ...] = ()
    pending_id: str | None = None  # PENDING: the pending change a reviewer decides (memory.approvals.approve/reject)


@dataclass(frozen=True, slots=True)
class AddResult:
    events: tuple[AddEvent, ...]
    triggered: bool
    trigger_reason: str
    extractor: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    job_id: str | None = None
    error: str | None = None  # extraction failed: recorded here and as a SKIPPED event

    def of(self, event: EventName) -> list[AddEvent]:
        return [e for e in self.events if e.event == event]


@dataclass(frozen=True, slots=True)
class Extraction:
    """What an extractor returned: candidates, the items it had to drop (each
    becomes a SKIPPED event) and the tokens it spent."""

    candidates: list[Candidate]
    dropped: list[tuple[str, str]]  # (the item's text, why it was dropped)
    usage: TokenUsage


def extract(extractor: Any, messages: Sequence[Message]) -> Extraction:
    """Extractors with a ``run`` (the LLM one) report dropped items; others only candidates."""
    run = getattr(extractor, "run", None)
    if run is None:
        return Extraction(extractor.extract(messages), [], getattr(extractor, "last_usage", None) or TokenUsage())
    result = run(messages)
    dropped = [(_item_text(d.item), d.reason) for d in result.dropped]
    return Extraction(list(result.candidates), dropped, result.usage)


def _item_text(item: Any) -> str:
    content = item.get("content") if isinstance(item, dict) else None
    return content if isinstance(content, str) else repr(item)[:200]


def dedup_id(scope: Scope, content: str, now: datetime, window: timedelta) -> str:
    """The same fact arriving twice inside one window gets the same id, so even
    concurrent adds of it write one record (the second insert is a conflict → NOOP)."""
    width_ms = max(int(window.total_seconds() * 1000), 1)
    bucket = int(now.timestamp() * 1000) // width_ms * width_ms
    key = f"{scope.tenant}\x1f{namespace_key(scope.namespace)}\x1f{normalized(content)}\x1f{bucket}"
    return f"{bucket:012x}{hashlib.blake2b(key.encode(), digest_size=10).hexdigest()}"


@dataclass
class _Plan:
    """The admitted changes one add() will write, and what it tells the caller."""

    admitted: list[Admitted] = field(default_factory=list)
    events: list[AddEvent] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    added: dict[str, str] = field(default_factory=dict)  # normalized content → new record id
    pending: list[PendingChange] = field(default_factory=list)  # held by an approval rule


class AddRun:
    def __init__(self, core: WriteCore, pipeline: Pipeline, scope: Scope, thread_id: str | None, actor: str):
        self.core, self.pipeline, self.scope = core, pipeline, scope
        self.thread_id, self.actor = thread_id, actor
        self.settings = pipeline.settings
        self.policy = core.pii_for(scope.tenant)
        self.reads = core.reads  # the store, for the reads reconciliation makes
        self.usage = TokenUsage()
        self.said: list[Message] = []  # this run's turns, for the time a statement names
        self._recent_records: list[MemoryRecord] | None = None  # the scope's newest active memories
        self.readings = Readings(pipeline.judge, self._judge_vectors()) if pipeline.judge is not None else None

    def _valid_from(self, candidate: Candidate, now: datetime) -> datetime | None:
        """When the statement says it became true ("last month"), anchored at when it was
        said: in the statement, else in the turns it came from (the only user turn when
        the turns carry no ids)."""
        by_id = {m.id: m for m in self.said if m.id}
        sources = [by_id[i] for i in candidate.source_message_ids if i in by_id]
        users = [m for m in self.said if m.role == "user"]
        if not sources and len(users) == 1:
            sources = users
        said_at = next((m.at for m in sources if m.at is not None), None) or now
        return stated_time(candidate.content, said_at) or next(
            (found for m in sources if (found := stated_time(m.content, said_at)) is not None), None)

    def run(self, messages: Sequence[Message], *, force: bool = False) -> AddResult:
        decision = should_extract(messages, self.settings.trigger)
        if not (decision.fire or force) and self._judge_may_fire(decision.reason, messages):
            decision = replace(decision, fire=True, reason=f"judge: a durable statement ({decision.reason} by words)")
        if not (decision.fire or force):
            return AddResult((), False, decision.reason, self.pipeline.extractor.name)
        reason = decision.reason if decision.fire else "forced"
        self.said = list(messages)
        with within(self.settings.add_deadline_s):
            return self._extract_and_write(messages, reason)

    def _extract_and_write(self, messages: Sequence[Message], reason: str) -> AddResult:
        try:
            extraction = extract(self.pipeline.extractor, messages)
        except LLMError as exc:
            self.usage = getattr(self.pipeline.extractor, "last_usage", None) or TokenUsage()
            event = AddEvent("SKIPPED", "", None, f"extraction failed: {exc}")
            return AddResult((event,), True, reason, self.pipeline.extractor.name, self.usage, error=str(exc))
        self.usage = extraction.usage
        for attempt in range(MAX_CONFLICT_RETRIES):
            try:
                return self._write(extraction, reason)
            except ConflictError:
                if attempt == MAX_CONFLICT_RETRIES - 1:
                    raise  # someone keeps changing the same records; let the caller retry later
        raise AssertionError("unreachable")

    def _write(self, extraction: Extraction, trigger_reason: str) -> AddResult:
        plan = _Plan()
        plan.events += [AddEvent("SKIPPED", self._shown(text), None, f"invalid item from the model: {why}")
                        for text, why in extraction.dropped[:MAX_ITEMS]]
        candidates = extraction.candidates[:MAX_ITEMS]
        over = len(extraction.candidates) - len(candidates) + max(len(extraction.dropped) - MAX_ITEMS, 0)
        if over > 0:  # one event for all of them: a runaway answer must not become a runaway row
            plan.events.append(AddEvent("SKIPPED", "", None, f"{over} more item(s) than the {MAX_ITEMS} one add() "
                                                           "takes: not read"))
        covered = frozenset(c.said for c in candidates if c.said)
        candidates = self._judged(self._forgets(candidates, plan), plan, covered)
        kept, skipped = gate(candidates, self.settings.gate)
        kept = [self._dated(c) for c in kept]
        plan.events += [self._skipped(c, why) for c, why in skipped]
        kept = self._screen(kept, plan)
        vectors = self._vectors([c.content for c in kept]) if kept else []
        for candidate, vector in zip(kept, vectors):
            self._reconcile(candidate, vector, plan)
        if plan.admitted or plan.events:
            self.core.commit(plan.admitted, tenant=self.scope.tenant, audit=[self._extract_audit(plan)],
                             governance=GovernanceWrites(pending=tuple(plan.pending)))
        return AddResult(tuple(plan.events), True, trigger_reason, self.pipeline.extractor.name, self.usage)

    def _vectors(self, texts: list[str]) -> list[np.ndarray]:
        """The store embedder's vectors of the texts, those the judge already had reused."""
        known = self.readings.vectors if self.readings is not None else {}
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        fresh = dict(zip(missing, self.core.embedder.embed(missing))) if missing else {}
        return [known[t] if t in known else fresh[t] for t in texts]

    def _judge_may_fire(self, reason: str, messages: Sequence[Message]) -> bool:
        """A turn the trigger's words pass over as too short or as a passing question, request or
        state that the judge reads as a durable statement ("我单身", "上个月搬到深圳了，还在适应这边的
        天气") is extracted after all; small talk ("hi", "thanks", "哈哈") is not read again."""
        if self.readings is None or not self.pipeline.fill_from_judge or reason not in _JUDGE_MAY_FIRE:
            return False
        return states_something(self.readings, messages, self.settings.judge)

    def _judged(self, candidates: list[Candidate], plan: _Plan, covered: frozenset[str]) -> list[Candidate]:
        """The judge's reading of every sentence (pipeline/judging.py): what is not durable
        goes, durable sentences no rule read come in, each candidate gets a subject and a slot."""
        if self.readings is None:
            return candidates
        judged = judge_candidates(self.readings, candidates, self.said, policy=self.settings.judge,
                                  fill=self.pipeline.fill_from_judge, covered=covered)
        plan.events += [self._skipped(c, why) for c, why in judged.skipped]
        return judged.kept

    def _judge_vectors(self) -> EmbedFn | None:
        """The store's embedder when it is the one the judge reads (one model loaded, not two)."""
        embedder = self.core.embedder
        if embedder.name != USEM3:
            return None
        return lambda texts: np.asarray(embedder.embed(list(texts)), dtype=np.float32)

    def _forgets(self, candidates: Sequence[Candidate], plan: _Plan) -> list[Candidate]:
        """Carry out the spoken forgets of these turns; the memories to reconcile remain
        (minus those said just before in this add() that a "forget that" took back)."""
        taken_back: set[int] = set()
        for position, request in spoken_forgets(self.said):
            context = ForgetContext(self.scope, self.thread_id, self.said, position, self.core.clock.now(),
                                    mask_identifier(self.thread_id, self.policy) if self.thread_id else None)
            if points_back(request):
                found = just_said(self.reads, candidates, context, request)
                if found.candidates:
                    taken_back.update(id(c) for c in found.candidates)
                    plan.events += [self._skipped(c, f"the user asked to forget it: {request.text!r}")
                                    for c in found.candidates]
                    continue
                targets, why = list(found.records), f"a spoken forget with nothing to take back: {found.why}"
            else:
                targets = forget_targets(self.reads, context, request)
                why = "a spoken forget that matched no memory"
            self._forget(request, self.said[position], targets, why, plan)
        return [c for c in candidates if id(c) not in taken_back]

    def _forget(self, request: ForgetRequest, message: Message, targets: Sequence[MemoryRecord], why: str,
                plan: _Plan) -> None:
        """FORGET changes through the write core for the targets a conversation may retire; a
        NOOP saying why for those it may not (pinned, written by the application, read-only)."""
        now = self.core.clock.now()
        reason = f"the user asked: {request.text}"
        sources = (message.id,) if message.id else ()
        if not targets:
            plan.events.append(AddEvent("NOOP", self._shown(request.text), None, why, None, source_message_ids=sources))
        for target in targets:
            if target.id in plan.touched:
                continue
            held = held_because(target)
            if held is not None:
                plan.events.append(AddEvent("NOOP", self._shown(target.content), target.kind, held, target.id,
                                            source_message_ids=sources))
                continue
            change = Change(Operation.FORGET, retire(target, Status.DELETED, now), target, self.actor, reason,
                            {"event": "FORGET", "thread_id": self.thread_id, "source_message_ids": list(sources)})
            plan.admitted.append(self.core.admit(change))
            plan.touched.add(target.id)
            plan.events.append(AddEvent("FORGET", self._shown(target.content), target.kind, reason, target.id,
                                        target.version + 1, target.id, sources))

    def _screen(self, candidates: list[Candidate], plan: _Plan) -> list[Candidate]:
        """The tenant's PII policy on each candidate, before reconciliation, so masked
        text is compared with masked text; the core screens the final text again."""
        out = []
        for candidate in candidates:
            redactor = Redactor(self.policy)
            try:
                content = redactor.text(candidate.content)
            except PermissionDeniedError as exc:
                plan.events.append(self._skipped(candidate, str(exc)))
                continue
            metadata = dict(candidate.metadata)
            if redactor.encrypted:
                metadata[ENCRYPTED_KEY] = redactor.encrypted
            out.append(replace(candidate, content=content, metadata=metadata))
        return out

    def _similar(self, candidate: Candidate, vector: np.ndarray) -> list[Similar]:
        """The nearest active memories by meaning; for a change, also those that share its
        words or name what it ended (a change rarely reads like the fact it ends)."""
        where = RecordFilter(namespace=self.scope.namespace, statuses=(Status.ACTIVE,))
        store, model, tenant = self.reads.store, self.core.embedder.name, self.scope.tenant
        scores = {s.id: s.score for s in store.nearest(tenant, where, model, vector, self.settings.similar_k)}
        more: list[str] = []
        if "change" in candidate.metadata or candidate.ends:
            terms = self.core.tokenizer.query_terms(" ".join((candidate.content, *candidate.ends)))
            more = [s.id for s in store.lexical(tenant, where, terms, self.settings.similar_k) if s.id not in scores]
            more += [r.id for r in self._of_changed_slots(candidate, where) if r.id not in scores and r.id not in more]
        more += [r.id for r in self._of_same_slot(candidate, where) if r.id not in scores and r.id not in more]
        for record_id, other in store.vectors(tenant, more, model).items():
            scores[record_id] = float(np.dot(vector, other))
        records = {r.id: r for r in store.get(tenant, list(scores))}
        ranked = sorted(scores.items(), key=lambda item: -item[1])
        return [Similar(records[i], score) for i, score in ranked if i in records]

    def _of_same_slot(self, candidate: Candidate, where: RecordFilter) -> list[MemoryRecord]:
        """The active memories of the candidate's subject and single-valued slot, however far
        in meaning ("closed on a house in Oakland" / "lives in Berkeley")."""
        if not single_valued(candidate.slot):
            return []
        return [r for r in self._recent(where) if r.slot == candidate.slot
                and same_subject(r.subject, candidate.subject)]

    def _recent(self, where: RecordFilter) -> list[MemoryRecord]:
        """The scope's newest active memories, read once per add()."""
        if self._recent_records is None:
            self._recent_records = self.reads.store.query(self.scope.tenant, where, order="created_at",
                                                         descending=True, limit=SLOT_SCAN)
        return self._recent_records

    def _of_changed_slots(self, candidate: Candidate, where: RecordFilter) -> list[MemoryRecord]:
        """The newest active memories of a one-value topic the candidate says changed (where the
        user lives, works, which medication): a move is rarely near its old address in meaning."""
        changed = slot_changes(candidate.content)
        if not changed:
            return []
        return [r for r in self._recent(where) if changed & topics(r.content)]

    def _reconcile(self, candidate: Candidate, vector: np.ndarray, plan: _Plan) -> None:
        key = normalized(candidate.content)
        if key in plan.added:
            plan.events.append(_event("NOOP", candidate, "repeated within this conversation", plan.added[key]))
            return
        decision = self._not_older(candidate, self._decide(candidate, self._similar(candidate, vector)))
        if decision.target is not None and decision.target.id in plan.touched and decision.event != "NOOP":
            decision = Decision("ADD", f"{decision.reason}; target already changed in this add")
        twin = self._stored_twin(candidate, decision) if decision.event in ("ADD", "SUPERSEDE") else None
        if twin is not None:  # the model asked to add what is stored already (same text, same window)
            decision = Decision("NOOP", f"already stored as {twin.id}", twin)
        if decision.also:
            decision = replace(decision, also=tuple(r for r in decision.also if r.id not in plan.touched))
        if decision.event == "NOOP":
            target = decision.target.id if decision.target else None
            plan.events.append(_event("NOOP", candidate, decision.reason, target))
            return
        try:
            changes = self._changes(candidate, vector, decision)
        except ValidationError as exc:  # over an input limit (tags, metadata …): this item only is dropped
            plan.events.append(self._skipped(candidate, f"invalid item: {exc}"))
            return
        self._accept(candidate, decision, changes, plan)

    def _dated(self, candidate: Candidate) -> Candidate:
        """Relative time in the words made absolute at when it was said ("last month" →
        "in February 2026"), so the memory stays true when read later."""
        said = self._said_at(candidate) or self.core.clock.now()
        content = resolve_relative(candidate.content, said)
        return candidate if content == candidate.content else replace(candidate, content=content)

    def _not_older(self, candidate: Candidate, decision: Decision) -> Decision:
        """An older statement never replaces a newer one: a turn extracted late (a replay,
        a delayed job) that was said before its target was written changes nothing."""
        target = decision.target
        said = self._said_at(candidate)
        if decision.event in ("SUPERSEDE", "UPDATE") and target is not None and said is not None \
                and said < target.created_at:
            return Decision("NOOP", f"said at {said:%Y-%m-%d %H:%M}, before {target.id} was written", target)
        return decision

    def _said_at(self, candidate: Candidate) -> datetime | None:
        times = [m.at for m in self.said if m.at is not None and (not candidate.source_message_ids
                                                                  or m.id in candidate.source_message_ids)]
        return max(times) if times else None

    def _decide(self, candidate: Candidate, similar: list[Similar]) -> Decision:
        policy = self.settings.reconcile
        structural = decide_by_slot(candidate, similar, policy)
        if structural is not None:
            return structural
        if self.pipeline.reconciler is None:
            return decide_by_rules(candidate, similar, policy)
        relevant = [s for s in similar if s.similarity >= policy.slot_similarity]
        decision, usage = decide_with_llm(self.pipeline.reconciler, candidate, relevant, policy)
        if usage is not None:
            self.usage = self.usage + usage
        return decision

    def _changes(self, candidate: Candidate, vector: np.ndarray, decision: Decision) -> list[Change]:
        """The changes a decision asks for; the first one is the record the event reports."""
        now = self.core.clock.now()
        detail = self._detail(candidate, decision)
        target = decision.target
        if decision.event == "UPDATE" and target is not None:
            fields = {"content": decision.content or candidate.content,
                      "importance": max(target.importance, candidate.importance),
                      "confidence": max(target.confidence, candidate.confidence),
                      "slot": target.slot or candidate.slot}
            new = replace(revise(target, fields, now, self.core.limits), source=self._source(candidate))
            return [Change(Operation.UPDATE, new, target, self.actor, decision.reason, detail,
                           vector=vector, vector_text=candidate.content)]
        record = self._new_record(candidate, decision.content or candidate.content, now)
        if decision.event == "SUPERSEDE" and target is not None:
            changes = superseding(target, record, actor=self.actor, reason=decision.reason, at=now, detail=detail,
                                  vector=vector, vector_text=candidate.content)
            return changes + [retired_by(other, record.id, actor=self.actor, reason=decision.reason, at=now,
                                         detail=detail) for other in decision.also]
        return [Change(Operation.CREATE, record, None, self.actor, decision.reason, detail,
                       vector=vector, vector_text=candidate.content)]

    def _accept(self, candidate: Candidate, decision: Decision, changes: list[Change], plan: _Plan) -> None:
        """Admit every change of one candidate, or report the candidate SKIPPED."""
        try:
            admitted = [self.core.admit(change) for change in changes]
        except PermissionDeniedError as exc:
            plan.events.append(self._skipped(candidate, f"refused: {exc}"))
            return
        except ValidationError as exc:
            plan.events.append(self._skipped(candidate, f"invalid item: {exc}"))
            return
        written = admitted[0].record
        assert written is not None
        plan.touched.update(a.change.previous.id for a in admitted if a.change.previous is not None)
        plan.touched.add(written.id)
        target = decision.target.id if decision.target is not None else None
        if any(a.approval is not None for a in admitted):  # an approval rule holds it: a reviewer decides
            pending = self.core.propose(admitted)
            plan.pending.append(pending)
            plan.events.append(AddEvent("PENDING", written.content, candidate.kind,
                                        f"{decision.event} awaits approval ({pending.rule})", written.id,
                                        written.version, target, candidate.source_message_ids, pending.id))
            return
        plan.admitted += admitted
        if decision.event != "UPDATE":
            plan.added[normalized(candidate.content)] = written.id
        plan.events.append(AddEvent(decision.event, written.content, candidate.kind, decision.reason, written.id,
                                    written.version, target, candidate.source_message_ids))

    def _stored_twin(self, candidate: Candidate, decision: Decision) -> MemoryRecord | None:
        """The active record the new one would be (its id is the text's within the dedup
        window): writing it again would conflict with itself, retried forever."""
        content = decision.content or candidate.content
        twin_id = dedup_id(self.scope, content, self.core.clock.now(), self.settings.dedup_window)
        found = self.reads.store.get(self.scope.tenant, [twin_id])
        if found and found[0].status is Status.ACTIVE and found[0].id not in (
                decision.target.id if decision.target is not None else None,):
            return found[0]
        return None

    def _new_record(self, candidate: Candidate, content: str, now: datetime) -> MemoryRecord:
        record = build_record(self._draft(candidate, content, now), self.scope, now, self.core.limits,
                              self.core.embedder.name)
        if self._id_taken(record.id):
            record = replace(record, id=new_id())
        # an active one was written by a concurrent add(): the insert conflicts, the retry sees a NOOP
        return record

    def _id_taken(self, record_id: str) -> bool:
        """Whether the id already named a record that is no longer active: the same fact
        forgotten meanwhile, or purged (an id names one record for ever: a purged record's
        audit rows keep it). The audit is read before the record, so a concurrent add()
        committing that very id between the two reads is seen as active, never as purged."""
        audited = bool(self.reads.store.audit(self.scope.tenant, AuditQuery(record_id=record_id, limit=1)))
        existing = self.reads.store.get(self.scope.tenant, [record_id])
        if existing:
            return existing[0].status is not Status.ACTIVE
        return audited

    def _draft(self, candidate: Candidate, content: str, now: datetime) -> MemoryDraft:
        metadata = dict(candidate.metadata)
        metadata["source_message_ids"] = list(candidate.source_message_ids)
        metadata["extractor"] = candidate.extractor
        return MemoryDraft(
            content=content, kind=candidate.kind, importance=candidate.importance, confidence=candidate.confidence,
            category=candidate.category, tags=candidate.tags, metadata=metadata, source=self._source(candidate),
            id=dedup_id(self.scope, content, now, self.settings.dedup_window),
            valid_from=self._valid_from(candidate, now), subject=candidate.subject, slot=candidate.slot,
        )

    def _source(self, candidate: Candidate) -> Source:
        first = candidate.source_message_ids[0] if candidate.source_message_ids else None
        return Source(actor=self.actor, thread_id=self.thread_id, message_id=first)

    def _detail(self, candidate: Candidate, decision: Decision) -> dict[str, Any]:
        return {"event": decision.event, "extractor": candidate.extractor, "thread_id": self.thread_id,
                "source_message_ids": list(candidate.source_message_ids)}

    def _shown(self, text: str) -> str:
        return masked_for_display(text, self.policy)

    def _skipped(self, candidate: Candidate, reason: str) -> AddEvent:
        return replace(_event("SKIPPED", candidate, reason), content=self._shown(candidate.content))

    def _extract_audit(self, plan: _Plan) -> AuditDraft:
        counts: dict[str, int] = {}
        for event in plan.events:
            counts[event.event] = counts.get(event.event, 0) + 1
        return AuditDraft(
            actor=self.actor, operation=Operation.EXTRACT, at=self.core.clock.now(),
            namespace=self.scope.namespace,
            detail={"thread_id": self.thread_id, "extractor": self.pipeline.extractor.name, "events": counts,
                    "prompt_tokens": self.usage.prompt_tokens, "completion_tokens": self.usage.completion_tokens,
                    **extract_detail(plan.events)},
        )


def _event(event: EventName, candidate: Candidate, reason: str, record_id: str | None = None) -> AddEvent:
    return AddEvent(event, candidate.content, candidate.kind, reason, record_id,
                    source_message_ids=candidate.source_message_ids)


@dataclass(frozen=True, slots=True)
class Pipeline:
    """The extractor (rules by default, an LLM when configured), an optional LLM
    reconciler, and the policies."""

    extractor: Extractor
    reconciler: Any = None
    settings: PipelineSettings = field(default_factory=PipelineSettings)
    judge: Judge | None = None  # reads subject, slot and what each sentence does (None: the rules alone)
    fill_from_judge: bool = True  # durable sentences the extractor missed become memories (rules only)

    @classmethod
    def default(cls, llm: Any = None, settings: PipelineSettings | None = None, *, rules: str = "both",
                judge: Judge | None = None) -> Pipeline:
        """``rules``: the embedded extractor's mode (RuleExtractor) when there is no LLM;
        ``judge``: pipeline/judge (the learned one is ``judge.learned.default_judge()``)."""
        settings = settings or PipelineSettings()
        if llm is None:
            from .rules import RuleExtractor

            return cls(RuleExtractor(rules), None, settings, judge)
        from .llm_extract import LLMExtractor
        from .llm_reconcile import LLMReconciler

        # an LLM reads every sentence itself: the judge checks and labels what it proposes, adds nothing
        return cls(LLMExtractor(llm), LLMReconciler(llm), settings, judge, fill_from_judge=False)
