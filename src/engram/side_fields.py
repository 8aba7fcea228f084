"""The PII policy on every text a write stores beside the records (issue 21 item 4).

The write core screens each record's final state in ``admit`` (content, the question
it replies to, metadata keys and values, tags, category: refused when the policy
forbids what they hold; its source ids masked). Everything else a batch carries is
screened here, in ``commit``, with the same tenant's policy: version reasons and
actors, audit actors, message ids and details, pending changes (reason, detail, the
proposer), decisions and verdicts (reviewer, reason, review note), recalls (actor,
thread and answer ids), kept turns (thread and message ids, metadata) and thread
metadata, queued jobs (thread id, actor). These have no place for a ciphertext and
come with changes that must never be stuck, so what the policy does not allow is
masked (``[EMAIL]``, ``[PHONE]`` …) whatever its action, and nothing is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .model import Job, Version, freeze_mapping
from .pii import ENCRYPTED_KEY, PIIPolicy, mask_identifier, mask_values
from .store.base import AuditDraft, WriteBatch
from .values.episodes import EpisodeWrites
from .values.governance import GovernanceWrites


def screened_batch(batch: WriteBatch, policy: PIIPolicy) -> WriteBatch:
    """The batch with every side text masked as ``policy`` says (records untouched:
    ``admit`` screened them)."""
    return replace(
        batch,
        versions=tuple(_version(v, policy) for v in batch.versions),
        audit=tuple(_audit(a, policy) for a in batch.audit),
        governance=_governance(batch.governance, policy),
        episodes=_episodes(batch.episodes, policy),
        jobs=tuple(_job(j, policy) for j in batch.jobs),
    )


def _text(value: str | None, policy: PIIPolicy) -> str | None:
    return value if value is None else mask_identifier(value, policy)


def _mapping(value: Mapping[str, Any], policy: PIIPolicy) -> Mapping[str, Any]:
    kept = {k: v for k, v in value.items() if k == ENCRYPTED_KEY}  # ciphertexts and their tokens
    rest = mask_values({k: v for k, v in value.items() if k != ENCRYPTED_KEY}, policy)
    return freeze_mapping({**rest, **kept})


def _version(version: Version, policy: PIIPolicy) -> Version:
    return replace(version, reason=_text(version.reason, policy), actor=mask_identifier(version.actor, policy))


def _audit(draft: AuditDraft, policy: PIIPolicy) -> AuditDraft:
    return replace(draft, actor=mask_identifier(draft.actor, policy),
                   source_message_id=_text(draft.source_message_id, policy),
                   detail=dict(mask_values(dict(draft.detail), policy)))


def _governance(writes: GovernanceWrites, policy: PIIPolicy) -> GovernanceWrites:
    if writes.empty:
        return writes
    return replace(
        writes,
        pending=tuple(replace(
            p, actor=mask_identifier(p.actor, policy), reason=_text(p.reason, policy),
            detail=_mapping(p.detail, policy),
            changes=tuple(replace(c, reason=_text(c.reason, policy), detail=_mapping(c.detail, policy))
                          for c in p.changes))
            for p in writes.pending),
        decisions=tuple(replace(d, by=mask_identifier(d.by, policy), reason=_text(d.reason, policy))
                        for d in writes.decisions),
        verdicts=tuple(replace(v, reviewer=mask_identifier(v.reviewer, policy), note=_text(v.note, policy))
                       for v in writes.verdicts),
        recalls=tuple(replace(r, actor=mask_identifier(r.actor, policy), thread_id=_text(r.thread_id, policy),
                              answer_id=_text(r.answer_id, policy)) for r in writes.recalls),
        answers=tuple(replace(a, answer_id=mask_identifier(a.answer_id, policy)) for a in writes.answers),
    )


def _episodes(writes: EpisodeWrites, policy: PIIPolicy) -> EpisodeWrites:
    if not (writes.turns or writes.thread_metadata or writes.episodes):
        return writes
    return replace(
        writes,
        turns=tuple(replace(t, thread_id=mask_identifier(t.thread_id, policy), message_id=_text(t.message_id, policy),
                            metadata=_mapping(t.metadata, policy)) for t in writes.turns),
        thread_metadata=tuple((namespace, mask_identifier(thread, policy), _mapping(meta, policy))
                              for namespace, thread, meta in writes.thread_metadata),
        episodes=tuple(replace(e, thread_id=mask_identifier(e.thread_id, policy)) for e in writes.episodes),
    )


def _job(job: Job, policy: PIIPolicy) -> Job:
    payload = dict(job.payload)
    for key in ("thread_id", "actor"):
        if isinstance(payload.get(key), str):
            payload[key] = mask_identifier(payload[key], policy)
    if isinstance(payload.get("messages"), (list, tuple)):  # their text was screened when queued; ids and names
        payload["messages"] = [
            {**m, **{k: mask_identifier(m[k], policy) for k in ("id", "name") if isinstance(m.get(k), str)}}
            if isinstance(m, Mapping) else m for m in payload["messages"]]
    return replace(job, payload=freeze_mapping(payload))
