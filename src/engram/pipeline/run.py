"""add(): trigger → extract → gate → PII policy → reconcile → write, in one transaction.

Each step is a small function of its own module; this one only chains them and
turns decisions into rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConflictError, LLMError
from ..llm.base import TokenUsage
from ..model import Kind, MemoryRecord, Message, Operation, Scope, Source, Status
from ..store.base import AuditDraft, RecordFilter
from ..store.codec import namespace_key
from ..writes import MemoryDraft, batch_of, build_record, change, new_id, retire, revise
from .candidate import Candidate
from .gate import GatePolicy, gate
from .pii import PIIPolicy, apply_pii_policy
from .reconcile import Decision, EventName, ReconcilePolicy, Similar, decide_by_rules, decide_with_llm, normalized
from .trigger import TriggerPolicy, should_extract

if TYPE_CHECKING:
    from ..memory import Memory

MAX_CONFLICT_RETRIES = 3


class Extractor(Protocol):
    name: str

    def extract(self, messages: Sequence[Message]) -> list[Candidate]: ...


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    trigger: TriggerPolicy = field(default_factory=TriggerPolicy)
    gate: GatePolicy = field(default_factory=GatePolicy)
    pii: PIIPolicy = field(default_factory=PIIPolicy)
    reconcile: ReconcilePolicy = field(default_factory=ReconcilePolicy)
    dedup_window: timedelta = timedelta(minutes=5)
    similar_k: int = 5


@dataclass(frozen=True, slots=True)
class AddEvent:
    event: EventName
    content: str
    kind: Kind | None
    reason: str
    record_id: str | None = None  # the record written (or the one that made it a NOOP)
    version: int | None = None
    target_id: str | None = None  # the record updated or superseded
    source_message_ids: tuple[str, ...] = ()


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


def _usage_of(extractor: Any) -> TokenUsage:
    return getattr(extractor, "last_usage", None) or TokenUsage()


def extract_candidates(extractor: Extractor, messages: Sequence[Message]) -> tuple[list[Candidate], TokenUsage]:
    return extractor.extract(messages), _usage_of(extractor)


def dedup_id(scope: Scope, content: str, now, window: timedelta) -> str:
    """The same fact arriving twice inside one window gets the same id, so even
    concurrent adds of it write one record (the second insert is a conflict → NOOP)."""
    width_ms = max(int(window.total_seconds() * 1000), 1)
    bucket = int(now.timestamp() * 1000) // width_ms * width_ms
    key = f"{scope.tenant}\x1f{namespace_key(scope.namespace)}\x1f{normalized(content)}\x1f{bucket}"
    return f"{bucket:012x}{hashlib.blake2b(key.encode(), digest_size=10).hexdigest()}"


@dataclass
class _Plan:
    """The rows one add() will write, and what it told the caller."""

    changes: list = field(default_factory=list)
    events: list[AddEvent] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    added: dict[str, str] = field(default_factory=dict)  # normalized content → new record id


class AddRun:
    def __init__(self, memory: Memory, pipeline: Pipeline, scope: Scope, thread_id: str | None, actor: str):
        self.memory, self.pipeline, self.scope = memory, pipeline, scope
        self.thread_id, self.actor = thread_id, actor
        self.settings = pipeline.settings
        self.usage = TokenUsage()

    def run(self, messages: Sequence[Message], *, force: bool = False) -> AddResult:
        decision = should_extract(messages, self.settings.trigger)
        if not (decision.fire or force):
            return AddResult((), False, decision.reason, self.pipeline.extractor.name)
        reason = decision.reason if decision.fire else "forced"
        try:
            candidates, self.usage = extract_candidates(self.pipeline.extractor, messages)
        except LLMError as exc:
            self.usage = _usage_of(self.pipeline.extractor)
            event = AddEvent("SKIPPED", "", None, f"extraction failed: {exc}")
            return AddResult((event,), True, reason, self.pipeline.extractor.name, self.usage, error=str(exc))
        for attempt in range(MAX_CONFLICT_RETRIES):
            try:
                return self._write(candidates, reason)
            except ConflictError:
                if attempt == MAX_CONFLICT_RETRIES - 1:
                    raise  # someone keeps changing the same records; let the caller retry later

    def _write(self, candidates: list[Candidate], trigger_reason: str) -> AddResult:
        plan = _Plan()
        kept, skipped = gate(candidates, self.settings.gate)
        plan.events += [_skipped(c, why) for c, why in skipped]
        kept = self._apply_pii(kept, plan)
        vectors = self.memory.embedder.embed([c.content for c in kept]) if kept else []
        for candidate, vector in zip(kept, vectors):
            self._reconcile(candidate, vector, plan)
        if plan.changes or plan.events:
            audit = self._extract_audit(plan)
            self.memory.store.apply(batch_of(self.scope.tenant, plan.changes, audit=(audit,)))
        return AddResult(tuple(plan.events), True, trigger_reason, self.pipeline.extractor.name, self.usage)

    def _apply_pii(self, candidates: list[Candidate], plan: _Plan) -> list[Candidate]:
        out = []
        for candidate in candidates:
            outcome = apply_pii_policy(candidate, self.settings.pii)
            if outcome.candidate is None:
                plan.events.append(_skipped(candidate, outcome.reason or "PII policy"))
            else:
                out.append(outcome.candidate)
        return out

    def _similar(self, vector) -> list[Similar]:
        where = RecordFilter(namespace=self.scope.namespace, statuses=(Status.ACTIVE,))
        store, model = self.memory.store, self.memory.embedder.name
        scored = store.nearest(self.scope.tenant, where, model, vector, self.settings.similar_k)
        records = {r.id: r for r in store.get(self.scope.tenant, [s.id for s in scored])}
        return [Similar(records[s.id], s.score) for s in scored if s.id in records]

    def _reconcile(self, candidate: Candidate, vector, plan: _Plan) -> None:
        key = normalized(candidate.content)
        if key in plan.added:
            plan.events.append(_event("NOOP", candidate, "repeated within this conversation", plan.added[key]))
            return
        decision = self._decide(candidate, self._similar(vector))
        if decision.target is not None and decision.target.id in plan.touched and decision.event != "NOOP":
            decision = Decision("ADD", f"{decision.reason}; target already changed in this add")
        self._plan_decision(candidate, vector, decision, plan)

    def _decide(self, candidate: Candidate, similar: list[Similar]) -> Decision:
        policy = self.settings.reconcile
        if self.pipeline.reconciler is None:
            return decide_by_rules(candidate, similar, policy)
        relevant = [s for s in similar if s.similarity >= policy.slot_similarity]
        decision, usage = decide_with_llm(self.pipeline.reconciler, candidate, relevant, policy)
        if usage is not None:
            self.usage = self.usage + usage
        return decision

    def _plan_decision(self, candidate: Candidate, vector, decision: Decision, plan: _Plan) -> None:
        now = self.memory.clock.now()
        if decision.event == "NOOP":
            target = decision.target.id if decision.target else None
            plan.events.append(_event("NOOP", candidate, decision.reason, target))
        elif decision.event == "UPDATE" and decision.target is not None:
            self._plan_update(candidate, vector, decision, plan, now)
        elif decision.event == "SUPERSEDE" and decision.target is not None:
            new = self._plan_add(candidate, vector, decision, plan, now, supersedes=decision.target)
            old = retire(decision.target, Status.SUPERSEDED, now, valid_to=now, superseded_by=new.id)
            self._check(Operation.SUPERSEDE, old, decision.target)
            plan.changes.append(change(old, operation=Operation.SUPERSEDE, actor=self.actor, at=now,
                                       reason=decision.reason, embedding=self._stored_vector(old),
                                       expected_version=decision.target.version, detail={"superseded_by": new.id}))
            plan.touched.add(old.id)
            plan.events[-1] = replace(plan.events[-1], target_id=old.id)
        else:
            self._plan_add(candidate, vector, decision, plan, now)

    def _plan_add(self, candidate, vector, decision: Decision, plan: _Plan, now, supersedes=None) -> MemoryRecord:
        content = decision.content or candidate.content
        record = build_record(self._draft(candidate, content, now), self.scope, now,
                              self.memory.settings.max_content_chars, self.memory.embedder.name)
        if self.memory.store.get(self.scope.tenant, [record.id]):  # same fact, forgotten meanwhile
            record = replace(record, id=new_id())
        if supersedes is not None:
            record = replace(record, supersedes=supersedes.id)
        self._check(Operation.CREATE, record, None)
        if content != candidate.content:
            vector = self.memory.embedder.embed([content])[0]
        plan.changes.append(change(record, operation=Operation.CREATE, actor=self.actor, at=now,
                                   reason=decision.reason, embedding=vector, expected_version=None,
                                   detail=self._detail(candidate, decision)))
        plan.added[normalized(candidate.content)] = record.id
        plan.touched.add(record.id)
        plan.events.append(_event(decision.event, candidate, decision.reason, record.id, record.version))
        return record

    def _plan_update(self, candidate, vector, decision: Decision, plan: _Plan, now) -> None:
        target = decision.target
        fields = {"content": decision.content or candidate.content,
                  "importance": max(target.importance, candidate.importance),
                  "confidence": max(target.confidence, candidate.confidence)}
        new = revise(target, fields, now, self.memory.settings.max_content_chars)
        new = replace(new, source=self._source(candidate))
        self._check(Operation.UPDATE, new, target)
        if new.content != candidate.content:
            vector = self.memory.embedder.embed([new.content])[0]
        plan.changes.append(change(new, operation=Operation.UPDATE, actor=self.actor, at=now, reason=decision.reason,
                                   embedding=vector, expected_version=target.version,
                                   detail=self._detail(candidate, decision)))
        plan.touched.add(target.id)
        plan.events.append(_event("UPDATE", candidate, decision.reason, target.id, new.version, target.id))

    def _draft(self, candidate: Candidate, content: str, now) -> MemoryDraft:
        metadata = dict(candidate.metadata)
        sensitivity = metadata.pop("sensitivity", "normal")
        metadata["source_message_ids"] = list(candidate.source_message_ids)
        metadata["extractor"] = candidate.extractor
        return MemoryDraft(
            content=content, kind=candidate.kind, importance=candidate.importance, confidence=candidate.confidence,
            category=candidate.category, tags=candidate.tags, metadata=metadata, sensitivity=sensitivity,
            source=self._source(candidate), id=dedup_id(self.scope, content, now, self.settings.dedup_window),
        )

    def _source(self, candidate: Candidate) -> Source:
        first = candidate.source_message_ids[0] if candidate.source_message_ids else None
        return Source(actor=self.actor, thread_id=self.thread_id, message_id=first)

    def _detail(self, candidate: Candidate, decision: Decision) -> dict[str, Any]:
        return {"event": decision.event, "extractor": candidate.extractor, "thread_id": self.thread_id,
                "source_message_ids": list(candidate.source_message_ids)}

    def _stored_vector(self, record: MemoryRecord):
        return self.memory.store.vectors(self.scope.tenant, [record.id], self.memory.embedder.name).get(record.id)

    def _check(self, operation: Operation, record: MemoryRecord | None, previous: MemoryRecord | None) -> None:
        self.memory._check_policies(operation, self.actor, record, previous)

    def _extract_audit(self, plan: _Plan) -> AuditDraft:
        counts: dict[str, int] = {}
        for event in plan.events:
            counts[event.event] = counts.get(event.event, 0) + 1
        return AuditDraft(
            actor=self.actor, operation=Operation.EXTRACT, at=self.memory.clock.now(),
            namespace=self.scope.namespace,
            detail={"thread_id": self.thread_id, "extractor": self.pipeline.extractor.name, "events": counts,
                    "prompt_tokens": self.usage.prompt_tokens, "completion_tokens": self.usage.completion_tokens},
        )


def _event(event: EventName, candidate: Candidate, reason: str, record_id: str | None = None,
           version: int | None = None, target_id: str | None = None) -> AddEvent:
    return AddEvent(event, candidate.content, candidate.kind, reason, record_id, version, target_id,
                    candidate.source_message_ids)


def _skipped(candidate: Candidate, reason: str) -> AddEvent:
    return _event("SKIPPED", candidate, reason)


@dataclass(frozen=True, slots=True)
class Pipeline:
    """The extractor (rules by default, an LLM when configured), an optional LLM
    reconciler, and the policies."""

    extractor: Extractor
    reconciler: Any = None
    settings: PipelineSettings = field(default_factory=PipelineSettings)

    @classmethod
    def default(cls, llm=None, settings: PipelineSettings | None = None) -> Pipeline:
        settings = settings or PipelineSettings()
        if llm is None:
            from .rules import RuleExtractor

            return cls(RuleExtractor(), None, settings)
        from .llm_extract import LLMExtractor
        from .llm_reconcile import LLMReconciler

        return cls(LLMExtractor(llm), LLMReconciler(llm), settings)
