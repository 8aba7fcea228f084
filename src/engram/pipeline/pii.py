"""PII policy: find personal data in a candidate and allow, mask, encrypt or forbid it.

Detection is pattern-based (e-mail, phone numbers in Chinese and international
formats, Chinese resident ID numbers, payment cards with a Luhn check, IBANs,
API keys and secrets). Encryption keeps a masked, searchable content and puts the
originals, encrypted with Fernet (ENGRAM_ENCRYPTION_KEY), in the record's metadata.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from ..errors import ConfigError
from ..model import Sensitivity, freeze_mapping
from .candidate import Candidate

Action = Literal["allow", "mask", "encrypt", "forbid"]
ACTIONS = ("allow", "mask", "encrypt", "forbid")

PATTERNS: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "cn_id": re.compile(r"(?<!\d)\d{17}[\dXx](?!\d)"),
    "card": re.compile(r"(?<!\d)(?:\d[ -]?){13,19}(?!\d)"),
    "phone": re.compile(r"(?<![\d+])(?:\+?\d{1,3}[ -]?)?(?:1[3-9]\d{9}|\(?\d{2,4}\)?[ -]?\d{3,4}[ -]?\d{4})(?!\d)"),
    "iban": re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b"),
    "secret": re.compile(
        r"\b(?:sk|pk|ghp|xox[bp])[-_][A-Za-z0-9_-]{16,}\b"
        r"|(?i:password|passcode|pin code|密码|口令)\s*(?i:is|:|：|是|为|=)\s*\S+"
    ),
}
SECRET_KINDS = frozenset({"card", "iban", "secret", "cn_id"})


@dataclass(frozen=True, slots=True)
class PIIPolicy:
    """What to do per kind of personal data found; kinds not listed use ``default``."""

    default: Action = "mask"
    actions: Mapping[str, Action] = field(default_factory=lambda: {"email": "allow", "phone": "mask",
                                                                   "secret": "forbid"})
    encryption_key: str | None = None

    def action_for(self, kind: str) -> Action:
        return self.actions.get(kind, self.default)


@dataclass(frozen=True, slots=True)
class PIIFinding:
    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class PIIOutcome:
    candidate: Candidate | None  # None when the policy forbids storing it
    findings: tuple[PIIFinding, ...]
    reason: str | None = None


def _luhn_ok(digits: str) -> bool:
    numbers = [int(d) for d in digits if d.isdigit()]
    total = 0
    for i, n in enumerate(reversed(numbers)):
        total += (n * 2 - 9 if n * 2 > 9 else n * 2) if i % 2 else n
    return total % 10 == 0


def find_pii(text: str) -> list[PIIFinding]:
    """Non-overlapping findings, the more specific kinds first."""
    taken: list[PIIFinding] = []
    for kind in ("secret", "email", "cn_id", "iban", "card", "phone"):
        for match in PATTERNS[kind].finditer(text):
            if kind == "card" and not _luhn_ok(match.group()):
                continue
            if any(match.start() < f.end and f.start < match.end() for f in taken):
                continue
            taken.append(PIIFinding(kind, match.start(), match.end()))
    return sorted(taken, key=lambda f: f.start)


def _fernet(key: str | None):
    key = key or os.environ.get("ENGRAM_ENCRYPTION_KEY")
    if not key:
        raise ConfigError("the PII policy encrypts, but no key is set: set ENGRAM_ENCRYPTION_KEY "
                          "(a Fernet key: python -c 'from cryptography.fernet import Fernet; "
                          "print(Fernet.generate_key().decode())')")
    try:
        from cryptography.fernet import Fernet
    except ImportError as exc:
        raise ConfigError("PII encryption needs the 'cryptography' package: pip install engram[crypto]") from exc
    return Fernet(key.encode() if isinstance(key, str) else key)


def apply_pii_policy(candidate: Candidate, policy: PIIPolicy) -> PIIOutcome:
    findings = find_pii(candidate.content)
    if not findings:
        return PIIOutcome(candidate, ())
    actions = {f.kind: policy.action_for(f.kind) for f in findings}
    forbidden = sorted(kind for kind, action in actions.items() if action == "forbid")
    if forbidden:
        return PIIOutcome(None, tuple(findings), f"PII policy forbids storing {', '.join(forbidden)}")
    content, encrypted = _rewrite(candidate.content, findings, actions, policy)
    metadata = dict(candidate.metadata)
    if encrypted:
        metadata["pii_encrypted"] = encrypted
    sensitivity = Sensitivity.SECRET if SECRET_KINDS & set(actions) else Sensitivity.PERSONAL
    metadata["sensitivity"] = sensitivity.value
    updated = replace(candidate, content=content, metadata=freeze_mapping(metadata))
    return PIIOutcome(updated, tuple(findings))


def _rewrite(
    text: str, findings: list[PIIFinding], actions: Mapping[str, Action], policy: PIIPolicy
) -> tuple[str, dict[str, str]]:
    out, encrypted, cursor = [], {}, 0
    fernet = _fernet(policy.encryption_key) if "encrypt" in actions.values() else None
    for number, finding in enumerate(findings, start=1):
        out.append(text[cursor : finding.start])
        original = text[finding.start : finding.end]
        action = actions[finding.kind]
        if action == "allow":
            out.append(original)
        else:
            token = f"[{finding.kind.upper()}#{number}]" if action == "encrypt" else f"[{finding.kind.upper()}]"
            out.append(token)
            if action == "encrypt":
                encrypted[token] = fernet.encrypt(original.encode()).decode()
        cursor = finding.end
    out.append(text[cursor:])
    return "".join(out), encrypted


def reveal(content: str, metadata: Mapping[str, object], key: str | None = None) -> str:
    """Put encrypted originals back into a record's content (for an authorised reader)."""
    encrypted = metadata.get("pii_encrypted") or {}
    if not encrypted:
        return content
    fernet = _fernet(key)
    for token, cipher in dict(encrypted).items():
        content = content.replace(token, fernet.decrypt(str(cipher).encode()).decode())
    return content
