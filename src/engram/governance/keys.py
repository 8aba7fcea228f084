"""Keys and personal data at rest: rotation, key status and audited reveal.

Keys for the ``encrypt`` PII action come from configuration — ``ENGRAM_ENCRYPTION_KEY``
holds one Fernet key or several, newest first, comma-separated — or from a key
provider hook (``PIIPolicies(key_provider=...)``: tenant → keys, e.g. from a KMS).
The first key encrypts; every key decrypts (MultiFernet). To rotate: put the new key
first and keep the old ones, run ``rotate`` (``engram keys rotate``) — each record
holding values under an older key is re-encrypted with the new one through the write
core (a ``rekey`` version and audit row each, plus one summary row), while reads keep
working with both keys — then drop the old key once ``status`` shows nothing under it.

Earlier versions keep the ciphertexts of their time (history is immutable): dropping
an old key makes those snapshots unreadable, which is how a key's data is shredded.

A masked value is gone for good; an encrypted one is shown only through ``reveal``,
which the caller authorises (the HTTP API asks for a key with the ``reveal``
permission) and which writes a ``reveal`` audit row per record revealed.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..changes import Change
from ..core import WriteCore
from ..errors import ConfigError, ConflictError
from ..model import MemoryRecord, Operation, freeze_mapping
from ..pii import ENCRYPTED_KEY, KEY_ENV, find_pii, key_list
from ..reads import ReadContext
from ..store.base import AuditDraft, RecordFilter

PAGE = 200
ROTATION_PASSES = 3


def fingerprint(key: str) -> str:
    """What the audit and ``status`` show of a key: never the key itself."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def generate_key() -> str:
    from cryptography.fernet import Fernet

    return Fernet.generate_key().decode()


@dataclass(frozen=True, slots=True)
class Ring:
    """A tenant's keys: the first encrypts, all decrypt."""

    keys: tuple[str, ...]
    fernets: tuple[Any, ...]

    @classmethod
    def of(cls, reads: ReadContext, tenant: str) -> Ring:
        keys = tuple(key_list(reads.pii_for(tenant).encryption_key))
        if not keys:
            raise ConfigError(f"no encryption key for tenant {tenant!r}: set {KEY_ENV} or a key provider")
        try:
            from cryptography.fernet import Fernet
        except ImportError as exc:
            raise ConfigError("PII encryption needs the 'cryptography' package: "
                              "pip install 'engram-agentmem[crypto]'") from exc
        try:
            return cls(keys, tuple(Fernet(k.encode()) for k in keys))
        except ValueError:
            raise ConfigError(f"{KEY_ENV}: a key is not a Fernet key") from None

    def which(self, cipher: str) -> str | None:
        """The fingerprint of the key that decrypts ``cipher``, or None."""
        from cryptography.fernet import InvalidToken

        for key, fernet in zip(self.keys, self.fernets):
            try:
                fernet.decrypt(cipher.encode())
                return fingerprint(key)
            except InvalidToken:
                continue
        return None

    def decrypt(self, cipher: str) -> str | None:
        from cryptography.fernet import InvalidToken, MultiFernet

        try:
            return MultiFernet(list(self.fernets)).decrypt(cipher.encode()).decode()
        except InvalidToken:
            return None

    def rotate(self, cipher: str) -> str:
        from cryptography.fernet import MultiFernet

        return MultiFernet(list(self.fernets)).rotate(cipher.encode()).decode()


def _encrypted(record: MemoryRecord) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(record.metadata.get(ENCRYPTED_KEY) or {}).items()}


def _holding(reads: ReadContext, tenant: str) -> Iterator[MemoryRecord]:
    """Every record of the tenant (any status) holding encrypted values, page by page."""
    where = RecordFilter(descendants=True, statuses=())
    offset = 0
    while True:
        page = reads.store.query(tenant, where, limit=PAGE, offset=offset)
        yield from (r for r in page if _encrypted(r))
        if len(page) < PAGE:
            return
        offset += PAGE


# -- status and rotation ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeyStatus:
    tenant: str
    keys: tuple[str, ...]  # fingerprints, the one that encrypts first
    records: int  # records holding encrypted values
    values: Mapping[str, int]  # fingerprint → encrypted values it decrypts
    unreadable: int  # values no configured key decrypts


def status(reads: ReadContext, tenant: str) -> KeyStatus:
    ring = Ring.of(reads, tenant)
    values: Counter[str] = Counter()
    unreadable = records = 0
    for record in _holding(reads, tenant):
        records += 1
        for cipher in _encrypted(record).values():
            which = ring.which(cipher)
            if which is None:
                unreadable += 1
            else:
                values[which] += 1
    return KeyStatus(tenant, tuple(fingerprint(k) for k in ring.keys), records, dict(values), unreadable)


@dataclass(frozen=True, slots=True)
class Rotation:
    tenant: str
    key: str  # fingerprint of the key everything is now encrypted with
    records: int  # records re-encrypted (a new version each)
    values: int
    unreadable: int  # values no configured key decrypts (left as they are)


def rotate(core: WriteCore, tenant: str, *, actor: str) -> Rotation:
    """Re-encrypt every value not under the tenant's first key with it; audited."""
    ring = Ring.of(core.reads, tenant)
    current = fingerprint(ring.keys[0])
    records = values = 0
    for _ in range(ROTATION_PASSES):  # a record changed meanwhile is retried on the next pass
        changes, unreadable = _rekey_changes(core.reads, tenant, ring, current, actor)
        done = 0
        for start in range(0, len(changes), PAGE):
            batch = changes[start : start + PAGE]
            try:
                core.write(batch)
            except ConflictError:
                continue
            done += len(batch)
            values += sum(int(c.detail["values"]) for c in batch)
        records += done
        if done == len(changes):
            break
    summary = AuditDraft(actor, Operation.REKEY, core.clock.now(),
                         detail={"key": current, "records": records, "values": values, "unreadable": unreadable,
                                 "keys": [fingerprint(k) for k in ring.keys]})
    core.commit([], tenant=tenant, audit=[summary])
    return Rotation(tenant, current, records, values, unreadable)


def _rekey_changes(
    reads: ReadContext, tenant: str, ring: Ring, current: str, actor: str,
) -> tuple[list[Change], int]:
    """The rekey changes of every record holding values not under ``current`` (built, not written)."""
    now = reads.clock.now()
    changes, unreadable = [], 0
    for record in _holding(reads, tenant):
        encrypted = _encrypted(record)
        stale = {token: cipher for token, cipher in encrypted.items() if ring.which(cipher) != current}
        readable = {token: cipher for token, cipher in stale.items() if ring.which(cipher) is not None}
        unreadable += len(stale) - len(readable)
        if not readable:
            continue
        rotated = {**encrypted, **{token: ring.rotate(cipher) for token, cipher in readable.items()}}
        new = replace(record, metadata=freeze_mapping({**record.metadata, ENCRYPTED_KEY: rotated}),
                      version=record.version + 1, updated_at=now)
        changes.append(Change(Operation.REKEY, new, record, actor, "re-encrypted with the current key",
                              {"key": current, "values": len(readable)}))
    return changes, unreadable


# -- reveal ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Revealed:
    """A record with its encrypted values decrypted, for an authorised reader."""

    record: MemoryRecord  # as stored
    content: str
    reply_to: str | None
    metadata: Mapping[str, Any]
    revealed: tuple[str, ...]  # kinds of the values shown
    masked: tuple[str, ...]  # kinds masked for good (nothing to reveal)


def reveal(core: WriteCore, record: MemoryRecord, *, actor: str, reason: str | None = None) -> Revealed:
    """Decrypt the record's encrypted values and audit that ``actor`` saw them."""
    encrypted = _encrypted(record)
    plain: dict[str, str] = {}
    if encrypted:
        ring = Ring.of(core.reads, record.scope.tenant)
        plain = {token: text for token, cipher in encrypted.items() if (text := ring.decrypt(cipher)) is not None}
    texts = [record.content, record.source.reply_to or "", *_strings(record.metadata)]
    markers = [(f.kind, text[f.start : f.end]) for text in texts for f in find_pii(text) if f.marker]
    revealed = sorted({kind for kind, token in markers if token in plain})
    masked = sorted({kind for kind, token in markers if "#" not in token})
    metadata = {k: v for k, v in record.metadata.items() if k != ENCRYPTED_KEY}
    out = Revealed(record, _put_back(record.content, plain),
                   None if record.source.reply_to is None else _put_back(record.source.reply_to, plain),
                   freeze_mapping(_put_back_value(metadata, plain)), tuple(revealed), tuple(masked))
    audit = AuditDraft(actor, Operation.REVEAL, core.clock.now(), record.id, record.version, record.scope.namespace,
                       detail={"kinds": list(revealed), "values": len(plain), **({"reason": reason} if reason else {})})
    core.commit([], tenant=record.scope.tenant, audit=[audit])
    return out


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key != ENCRYPTED_KEY:
                yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _put_back(text: str, plain: Mapping[str, str]) -> str:
    for token, original in plain.items():
        text = text.replace(token, original)
    return text


def _put_back_value(value: Any, plain: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _put_back(value, plain)
    if isinstance(value, Mapping):
        return {k: _put_back_value(v, plain) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_put_back_value(v, plain) for v in value]
    return value


__all__ = ["KeyStatus", "Revealed", "Ring", "Rotation", "fingerprint", "generate_key", "reveal", "rotate", "status"]
