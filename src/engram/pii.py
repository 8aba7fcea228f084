"""PII policy: find personal data in text and allow, mask, encrypt or forbid it.

Detection is pattern-based (e-mail, phone numbers in Chinese and international
formats, Chinese resident ID numbers, payment cards with a Luhn check, IBANs,
API keys and passwords). Encryption keeps a masked, searchable text and puts the
originals, encrypted with Fernet, in the record's ``metadata["pii_encrypted"]``.

The write core screens the *final* state of every record it writes (content, the
question it replies to, and the string values of its metadata) with the policy of
the record's tenant; the pipeline screens candidates earlier with the same
functions so that reconciliation compares masked text with masked text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from .config_files import read_config
from .errors import ConfigError, PIIForbiddenError
from .model import MemoryRecord, Message, Sensitivity, freeze_mapping, tenant_in_config

Action = Literal["allow", "mask", "encrypt", "forbid"]
ACTIONS: tuple[str, ...] = get_args(Action)
ENCRYPTED_KEY = "pii_encrypted"  # metadata key holding token → ciphertext
KEY_ENV = "ENGRAM_ENCRYPTION_KEY"  # Fernet keys, newest first, comma-separated: the first encrypts, all decrypt
# a key provider: tenant → its keys (newest first), e.g. from a KMS or a secret manager
KeyProvider = Callable[[str], "str | Sequence[str] | None"]

PATTERNS: dict[str, re.Pattern[str]] = {
    # ASCII local part and domain: "联系ana@x.com" is the address after the Chinese text
    "email": re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"),
    "cn_id": re.compile(r"(?<!\d)\d{17}[\dXx](?!\d)"),
    "card": re.compile(r"(?<!\d)(?:\d[ -]?){13,19}(?!\d)"),
    "phone": re.compile(r"(?<![\d+])(?:\+?\d{1,3}[ -]?)?(?:1[3-9]\d{9}|\(?\d{2,4}\)?[ -]?\d{3,4}[ -]?\d{4})(?!\d)"),
    "iban": re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b"),
    "secret": re.compile(
        r"\b(?:sk|pk|ghp|xox[bp])[-_][A-Za-z0-9_-]{16,}\b"
        # a keyword, then "is" / ":" / "=" (… "是" / "为"), then the secret
        r"|(?i:\b(?:password|passcode|passwd|pwd|pin(?:\s*code)?)\b|密码|口令|暗码)\s*(?i:is|:|：|是|为|=)\s*\S+"
        # or right after the keyword, a token that looks like one (a digit or a symbol in it)
        r"|(?i:\b(?:password|passcode|passwd|pwd|pin(?:\s*code)?))\s+(?=\S*[\d!@#$%^&*])\S{4,}"
        r"|(?:密码|口令|暗码)\s*[A-Za-z0-9!@#$%^&*_+=.-]{4,}"
    ),
}
KINDS: tuple[str, ...] = ("secret", "email", "cn_id", "iban", "card", "phone")  # the more specific first
SECRET_KINDS = frozenset({"card", "iban", "secret", "cn_id"})
# what engram writes in place of a value: "[PHONE]" (masked, or forbidden in a job
# payload) and "[PHONE#2]" (encrypted); a marker of a forbidden kind is refused like the value
_MARKER = re.compile(r"\[(" + "|".join(kind.upper() for kind in KINDS) + r")(?:#\d+)?\]")
# hex ids, UUIDs and engram's automatic thread ids (auto-20260101T000000-04074097, episodes/
# recorder.py): identifiers, not text, though they may hold digit runs that read as a phone number
_IDENTIFIER = re.compile(r"(?=[0-9-]*[a-fA-F])[0-9a-fA-F-]{16,}|auto-\d{8}T\d{6}-[0-9a-f]{8}")


@dataclass(frozen=True, slots=True)
class PIIPolicy:
    """What to do per kind of personal data found; kinds not listed use ``default``."""

    default: Action = "mask"
    actions: Mapping[str, Action] = field(
        default_factory=lambda: {"email": "allow", "phone": "mask", "secret": "forbid"}
    )
    encryption_key: str | None = None

    def action_for(self, kind: str) -> Action:
        return self.actions.get(kind, self.default)

    def describe(self) -> dict[str, str]:
        """The action per kind, e.g. for ``engram stats`` (never the key)."""
        return {kind: self.action_for(kind) for kind in sorted(KINDS)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any], where: str = "PII policy") -> PIIPolicy:
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected a mapping with 'default' and/or 'actions'")
        unknown = set(data) - {"default", "actions"}
        if unknown:
            raise ConfigError(f"{where}: unknown keys {sorted(unknown)}; use 'default' and 'actions'")
        default = _action(data.get("default", "mask"), f"{where}.default")
        actions = data.get("actions", {})
        if not isinstance(actions, Mapping):
            raise ConfigError(f"{where}.actions: expected a mapping of PII kind to action")
        for kind in actions:
            if kind not in KINDS:
                raise ConfigError(f"{where}.actions: unknown PII kind {kind!r}; known: {', '.join(sorted(KINDS))}")
        checked = {kind: _action(action, f"{where}.actions.{kind}") for kind, action in actions.items()}
        return cls(default, checked)


def _action(value: Any, where: str) -> Action:
    if value not in ACTIONS:
        raise ConfigError(f"{where}: {value!r} is not one of {', '.join(ACTIONS)}")
    return value


@dataclass(frozen=True, slots=True)
class PIIPolicies:
    """A default policy and per-tenant overrides (configuration: ``ENGRAM_PII_POLICY``)."""

    default: PIIPolicy = field(default_factory=PIIPolicy)
    tenants: Mapping[str, PIIPolicy] = field(default_factory=dict)
    encryption_key: str | None = None
    key_provider: KeyProvider | None = None  # asked first; then the policy's key, this key, ENGRAM_ENCRYPTION_KEY

    def for_tenant(self, tenant: str) -> PIIPolicy:
        policy = self.tenants.get(tenant, self.default)
        provided = _joined(self.key_provider(tenant)) if self.key_provider is not None else None
        key = provided or policy.encryption_key or self.encryption_key or os.environ.get(KEY_ENV)
        return policy if policy.encryption_key == key else replace(policy, encryption_key=key)

    def describe(self) -> dict[str, Any]:
        return {"default": self.default.describe(),
                "tenants": {name: policy.describe() for name, policy in sorted(self.tenants.items())}}

    @classmethod
    def load(cls, source: str | None) -> PIIPolicies:
        """From JSON text or a ``.json``/``.toml`` file:
        ``{"default": {"default": "mask", "actions": {"email": "allow"}},
        "tenants": {"acme": {"actions": {"phone": "encrypt"}}}}``. None: the defaults."""
        if source is None or not source.strip():
            return cls()
        data = read_config(source, "PII policy configuration")
        if not isinstance(data, Mapping) or set(data) - {"default", "tenants"}:
            raise ConfigError("PII policy configuration: expected {'default': {...}, 'tenants': {name: {...}}}")
        default = PIIPolicy.from_data(data.get("default", {}), "PII policy default")
        tenants = data.get("tenants", {})
        if not isinstance(tenants, Mapping):
            raise ConfigError("PII policy configuration: 'tenants' must map tenant names to policies")
        return cls(default, {tenant_in_config(name, "PII policy configuration"): PIIPolicy.from_data(
            p, f"PII policy of tenant {name!r}") for name, p in tenants.items()})


@dataclass(frozen=True, slots=True)
class PIIFinding:
    kind: str
    start: int
    end: int
    marker: bool = False  # an engram marker ("[PHONE]") rather than the value itself
    inner: tuple[str, ...] = ()  # other kinds inside it: a phone number as an e-mail's local part

    def kind_under(self, policy: PIIPolicy) -> str:
        """The kind whose action applies: the strictest of the value and what it holds
        (``13812345678@139.com`` is masked as a phone where e-mails are allowed)."""
        return max((self.kind, *self.inner), key=lambda kind: _SEVERITY[policy.action_for(kind)])


def _luhn_ok(digits: str) -> bool:
    numbers = [int(d) for d in digits if d.isdigit()]
    total = 0
    for i, n in enumerate(reversed(numbers)):
        total += (n * 2 - 9 if n * 2 > 9 else n * 2) if i % 2 else n
    return total % 10 == 0


# cheap tests that rule kinds out before their patterns run (most texts hold none)
_DIGIT_RUN = re.compile(r"\d[\d ()+-]{7,}\d")
_SECRET_HINT = re.compile(r"(?i:password|passcode|passwd|pwd|\bpin\b)|密码|口令|暗码|\b(?:sk|pk|ghp|xox[bp])[-_]")
_SEVERITY = {"allow": 0, "mask": 1, "encrypt": 2, "forbid": 3}


def _possible_kinds(text: str) -> list[str]:
    possible = {"email"} if "@" in text else set()
    if _DIGIT_RUN.search(text):
        possible |= {"cn_id", "iban", "card", "phone"}
    if _SECRET_HINT.search(text):
        possible.add("secret")
    return [kind for kind in KINDS if kind in possible]


def find_pii(text: str) -> list[PIIFinding]:
    """Non-overlapping findings, the more specific kinds first."""
    taken: list[PIIFinding] = []
    for kind in _possible_kinds(text):
        for match in PATTERNS[kind].finditer(text):
            if kind == "card" and not _luhn_ok(match.group()):
                continue
            if any(match.start() < f.end and f.start < match.end() for f in taken):
                continue
            inner: tuple[str, ...] = ()
            if kind == "email" and PATTERNS["phone"].fullmatch(match.group().split("@", 1)[0]):
                inner = ("phone",)
            taken.append(PIIFinding(kind, match.start(), match.end(), inner=inner))
    for match in _MARKER.finditer(text) if "[" in text else ():
        if not any(match.start() < f.end and f.start < match.end() for f in taken):
            taken.append(PIIFinding(match.group(1).lower(), match.start(), match.end(), marker=True))
    return sorted(taken, key=lambda f: f.start)


def _joined(keys: str | Sequence[str] | None) -> str | None:
    if keys is None or isinstance(keys, str):
        return keys or None
    return ",".join(keys) or None


def key_list(keys: str | None) -> list[str]:
    """The keys of a configured key string, newest (the one that encrypts) first."""
    return [k.strip() for k in (keys or "").split(",") if k.strip()]


def _fernet(key: str | None) -> Any:
    """Encrypts with the first key; decrypts with any of them (MultiFernet), so values
    written under an older key stay readable while ``engram keys rotate`` runs."""
    keys = key_list(key)
    if not keys:
        raise ConfigError("the PII policy encrypts, but no key is set: set ENGRAM_ENCRYPTION_KEY "
                          "(a Fernet key: python -c 'from cryptography.fernet import Fernet; "
                          "print(Fernet.generate_key().decode())')")
    try:
        from cryptography.fernet import Fernet, MultiFernet
    except ImportError as exc:
        raise ConfigError("PII encryption needs the 'cryptography' package: "
                          "pip install 'engram-agentmem[crypto]'") from exc
    try:
        fernets = [Fernet(k.encode()) for k in keys]
    except ValueError:
        raise ConfigError(f"{KEY_ENV}: a key is not a Fernet key (32 url-safe base64-encoded bytes)") from None
    return fernets[0] if len(fernets) == 1 else MultiFernet(fernets)


@dataclass
class Redactor:
    """Screens several texts of one record with one policy, numbering encrypted
    values across them (so one ``pii_encrypted`` map serves the whole record)."""

    policy: PIIPolicy
    next_token: int = 1
    kinds: set[str] = field(default_factory=set)
    encrypted: dict[str, str] = field(default_factory=dict)

    def text(self, text: str, where: str = "content", *, refuse: bool = True) -> str:
        """``refuse``: a forbidden kind raises PIIForbiddenError (a marker of one
        too); otherwise its value is replaced by a marker and nothing of it is kept."""
        findings = find_pii(text)
        if not findings:
            return text
        findings = [replace(f, kind=f.kind_under(self.policy), inner=()) if f.inner else f for f in findings]
        refused = sorted({f.kind for f in findings if self.policy.action_for(f.kind) == "forbid"})
        if refused and refuse:
            raise PIIForbiddenError(f"PII policy forbids storing {', '.join(refused)} (found in {where})",
                                    kinds=tuple(refused))
        self.kinds.update(f.kind for f in findings)  # a masked value still makes the record personal
        real = [f for f in findings if not f.marker]
        return self._rewrite(text, real) if real else text

    def _rewrite(self, text: str, findings: list[PIIFinding]) -> str:
        out, cursor = [], 0
        for finding in findings:
            out.append(text[cursor : finding.start])
            out.append(self._replacement(finding.kind, text[finding.start : finding.end]))
            cursor = finding.end
        out.append(text[cursor:])
        return "".join(out)

    def _replacement(self, kind: str, original: str) -> str:
        action = self.policy.action_for(kind)
        if action == "allow":
            return original
        if action in ("mask", "forbid"):
            return f"[{kind.upper()}]"
        token = f"[{kind.upper()}#{self.next_token}]"
        self.next_token += 1
        self.encrypted[token] = _fernet(self.policy.encryption_key).encrypt(original.encode()).decode()
        return token


@dataclass(frozen=True, slots=True)
class Screened:
    record: MemoryRecord  # as it may be stored
    kinds: frozenset[str]  # kinds of personal data found (values, or markers already in the text)


def screen_record(record: MemoryRecord, policy: PIIPolicy, *, refuse: bool = True) -> MemoryRecord:
    """The record as it may be stored under ``policy``: personal data masked or
    encrypted in its content, its reply_to and its metadata's text values, and its
    sensitivity raised to match. A kind the policy forbids raises PIIForbiddenError,
    or with ``refuse=False`` (a record leaving the active set must never be stuck)
    is replaced by a marker."""
    return screen(record, policy, refuse=refuse).record


def screen(record: MemoryRecord, policy: PIIPolicy, *, refuse: bool = True) -> Screened:
    """``screen_record``, also telling which kinds of personal data it found."""
    previous = dict(record.metadata.get(ENCRYPTED_KEY) or {})
    redactor = Redactor(policy, next_token=_next_token(previous))
    content = redactor.text(record.content, "content", refuse=refuse)
    reply_to = record.source.reply_to
    if reply_to is not None:
        reply_to = redactor.text(reply_to, "source.reply_to", refuse=refuse)
    metadata = _screen_mapping(redactor, record.metadata, "metadata", refuse)
    tags = tuple(redactor.text(tag, "tags", refuse=refuse) for tag in record.tags)
    category = redactor.text(record.category, "category", refuse=refuse) if record.category else record.category
    source = record.source
    actor = mask_identifier(source.actor, policy)
    thread_id, message_id = (mask_identifier(value, policy) if value else value
                             for value in (source.thread_id, source.message_id))
    ids = (actor, thread_id, message_id)
    kinds = frozenset(redactor.kinds)
    if (not redactor.kinds and content == record.content and metadata is record.metadata
            and ids == (source.actor, source.thread_id, source.message_id)):
        return Screened(record, kinds)
    if redactor.encrypted:
        metadata = {**metadata, ENCRYPTED_KEY: {**previous, **redactor.encrypted}}
    return Screened(replace(
        record,
        content=content,
        tags=tags,
        category=category,
        source=replace(source, reply_to=reply_to, actor=actor, thread_id=thread_id, message_id=message_id),
        metadata=freeze_mapping(metadata),
        sensitivity=_raised(record.sensitivity, redactor.kinds),
    ), kinds)


def is_identifier(value: str) -> bool:
    """One of engram's own ids (a hex id, a UUID, an automatic thread id): digit runs in it are
    not a phone number, and masking it would make it name nothing."""
    return _IDENTIFIER.fullmatch(value) is not None


def mask_identifier(value: str, policy: PIIPolicy) -> str:
    """An id or a name kept beside the text (a thread or message id, an actor, a
    reviewer): personal data the policy does not allow becomes its marker. Ids are never
    encrypted (they are looked up as given: the same input always masks the same way)
    and never refused."""
    if is_identifier(value) or not _possible_kinds(value):
        return value
    return masked_for_display(value, policy)


def mask_values(value: Any, policy: PIIPolicy) -> Any:
    """Free text kept beside a record (reasons, review notes, audit details, thread
    metadata), keys and values alike: what the policy does not allow is masked. It has
    no place for a ciphertext, so an encrypted kind is masked too; nothing is refused
    (such text comes with changes that must never be stuck)."""
    if isinstance(value, str):
        return mask_identifier(value, policy)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**6:
        masked = mask_identifier(str(value), policy)
        return value if masked == str(value) else masked
    if isinstance(value, Mapping):
        return {mask_values(k, policy) if isinstance(k, str) else k: mask_values(v, policy)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(mask_values(item, policy) for item in value)
    return value


def _next_token(encrypted: Mapping[str, Any]) -> int:
    numbers = [int(match.group(1)) for token in encrypted if (match := re.search(r"#(\d+)\]$", token))]
    return max(numbers, default=0) + 1


def _raised(current: Sensitivity, kinds: set[str]) -> Sensitivity:
    if not kinds:
        return current
    found = Sensitivity.SECRET if kinds & SECRET_KINDS else Sensitivity.PERSONAL
    order = (Sensitivity.NORMAL, Sensitivity.PERSONAL, Sensitivity.SECRET)
    return max(current, found, key=order.index)


def _screen_mapping(redactor: Redactor, data: Mapping[str, Any], where: str, refuse: bool) -> Mapping[str, Any]:
    """The same mapping object when nothing changed (the common case), else a copy."""
    changed: dict[str, Any] = {}
    renamed = False
    for key, value in data.items():
        if key == ENCRYPTED_KEY:
            changed[key] = value
            continue
        name = redactor.text(key, f"{where} key", refuse=refuse) if isinstance(key, str) else key
        screened = _screen_value(redactor, value, f"{where}.{key}", refuse)
        renamed |= name != key
        changed[name] = screened
        if screened is not value:
            renamed = True
    return changed if renamed else data


def _screen_value(redactor: Redactor, value: Any, where: str, refuse: bool) -> Any:
    if isinstance(value, str):
        if _IDENTIFIER.fullmatch(value):
            return value
        screened = redactor.text(value, where, refuse=refuse)
        return value if screened == value else screened
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**6:
        # a phone number or an id number given as a number is personal data too
        screened = redactor.text(str(value), where, refuse=refuse)
        return value if screened == str(value) else screened
    if isinstance(value, Mapping):
        return _screen_mapping(redactor, value, where, refuse)
    if isinstance(value, (list, tuple)):
        items = [_screen_value(redactor, item, f"{where}[{i}]", refuse) for i, item in enumerate(value)]
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


def redact_message(message: Message, policy: PIIPolicy) -> tuple[Message, dict[str, str]]:
    """A turn as a background job may keep it: masked per policy, encrypted values
    as tokens (with their ciphertexts returned), forbidden values replaced by a
    marker so they never reach the job table (a fact carrying the marker is refused
    later like the value itself)."""
    redactor = Redactor(policy)
    content = redactor.text(message.content, "message", refuse=False)
    return replace(message, content=content), redactor.encrypted


def reveal(content: str, metadata: Mapping[str, object], key: str | None = None) -> str:
    """Put encrypted originals back into a text (for an authorised reader)."""
    encrypted = metadata.get(ENCRYPTED_KEY) or {}
    if not encrypted:
        return content
    fernet = _fernet(key or os.environ.get(KEY_ENV))
    for token, cipher in dict(encrypted).items():  # type: ignore[call-overload]
        content = content.replace(token, fernet.decrypt(str(cipher).encode()).decode())
    return content


def masked_for_display(text: str, policy: PIIPolicy) -> str:
    """Text safe to show, log or keep in a job's result: every kind of personal data
    the policy does not allow is masked, whatever its action on write."""
    allowed: dict[str, Action] = {kind: "allow" for kind in KINDS if policy.action_for(kind) == "allow"}
    return Redactor(PIIPolicy(default="mask", actions=allowed)).text(text, refuse=False)


# -- namespace labels ---------------------------------------------------------------------------
# A label is a key the caller looks up as given ("users/ana@example.com"), so it can be neither
# masked (two users would become one "users/[EMAIL]") nor encrypted (a ciphertext differs each
# time). A label holding personal data the tenant's policy does not allow as plain text is
# refused when something new is written under it; the application names the user by a stable
# id, or by ``pseudonym(label, key)``, the same keyed hash every time.

_LABEL_SEPARATOR = re.compile(r"[ ()+-]")
_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def _cn_id_ok(text: str) -> bool:
    """A resident id number: a real birth date and the ISO 7064 check character."""
    year, month, day = int(text[6:10]), int(text[10:12]), int(text[12:14])
    if not (1900 <= year <= 2099 and 1 <= month <= 12 and 1 <= day <= 31):
        return False
    check = "10X98765432"[sum(int(d) * w for d, w in zip(text[:17], _CN_ID_WEIGHTS)) % 11]
    return text[17].upper() == check


def _plainly(kind: str, value: str) -> bool:
    """True when a finding inside a label is personal data rather than a numeric id: a bare
    run of digits (a Telegram or Discord id, "user-5012345678") is an id unless it has the
    shape of its kind — a phone number written with "+" or separators, or a Chinese mobile
    number; a card number with separators; a resident id with a valid date and check digit."""
    if kind == "phone":
        return bool(_LABEL_SEPARATOR.search(value)) or re.fullmatch(r"1[3-9]\d{9}", value) is not None
    if kind == "card":
        return bool(_LABEL_SEPARATOR.search(value))
    if kind == "cn_id":
        return _cn_id_ok(value)
    return True


def label_kinds(label: str, policy: PIIPolicy) -> list[str]:
    """The kinds of personal data ``label`` holds that ``policy`` does not allow as plain text."""
    if is_identifier(label) or not _possible_kinds(label):
        return []
    kinds = {f.kind_under(policy) for f in find_pii(label)
             if not f.marker and _plainly(f.kind, label[f.start:f.end])}
    # a phone number a card-like digit run hid ("+8613812345678")
    if any(_plainly("phone", m.group()) for m in PATTERNS["phone"].finditer(label)):
        kinds.add("phone")
    return sorted(kind for kind in kinds if policy.action_for(kind) != "allow")


def check_labels(tenant: str, namespace: Sequence[str], policy: PIIPolicy) -> None:
    """PIIForbiddenError when a label of a namespace something new is written under holds
    personal data the tenant's policy masks, encrypts or forbids (docs/CONCEPTS.md, Personal data)."""
    for label in (tenant, *namespace):
        kinds = label_kinds(label, policy)
        if kinds:
            actions = ", ".join(f"{kind}: {policy.action_for(kind)}" for kind in kinds)
            shown = masked_for_display(label, PIIPolicy(default="mask", actions={}))
            raise PIIForbiddenError(
                f"the namespace label {shown!r} holds {' and '.join(kinds)}, which the PII policy of tenant "
                f"{masked_for_display(tenant, PIIPolicy(default='mask', actions={}))!r} does not allow as plain "
                f"text ({actions}); a label is looked up as given, so engram cannot mask or encrypt it: name the "
                "user by a stable id, or by engram.pseudonym(label, key)", kinds=tuple(kinds))


def pseudonym(label: str, key: str | bytes) -> str:
    """A stable pseudonym for a label holding personal data: HMAC-SHA256 of the label
    (UTF-8) under ``key``, its first 32 hex digits. The same label and key always give
    the same pseudonym, so memories stay findable; without the key it cannot be linked
    back to the label. Keep the key as safe as the encryption key (a new key names every
    user anew)."""
    import hashlib
    import hmac

    if not isinstance(label, str) or not label:
        raise ConfigError("pseudonym: the label must be a non-empty string")
    secret = key.encode("utf-8") if isinstance(key, str) else key
    if not isinstance(secret, bytes) or len(secret) < 16:
        raise ConfigError("pseudonym: the key must hold at least 16 bytes")
    return hmac.new(secret, label.encode("utf-8"), hashlib.sha256).hexdigest()[:32]
