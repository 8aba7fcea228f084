"""Approval rules: which writes a person must approve before they reach memory.

A rule matches a change by what it writes — kind, category, sensitivity, namespace
(e.g. org-level ``orgs/*``), Deep Agents file path (``/policies/*``), personal data
found by the PII policy, the proposing actor, the operation — or by a callable. Every
criterion given must hold (any of its values); a rule with none matches every write
of its operations. The write core asks the rules of the record's tenant after the
PII policy and the policy hooks; a match turns the change into a pending change.

Only changes that put content into memory are asked about (create, update, restore
by default; ``forget`` may be added): maintenance, reindex, key rotation and import are
not, and an update that changes nothing a reader sees (key rotation, an access count)
never waits for a person.

Configuration (``ENGRAM_APPROVALS``, or ``Settings(approvals=...)``): JSON text or a
``.json``/``.toml`` file::

    {"expire_after_hours": 72,
     "rules": [{"name": "org policies", "namespaces": ["orgs/*"]},
               {"name": "secrets", "sensitivity": ["secret"]}],
     "tenants": {"acme": [{"name": "policy files", "paths": ["/policies/*"]}]}}

A tenant's rules are added to the default ``rules``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from .config_files import read_config
from .errors import ConfigError, InvalidValueError
from .model import Kind, MemoryRecord, Operation, Sensitivity, freeze_mapping, parse_enum, tenant_in_config
from .pii import ENCRYPTED_KEY
from .store.base import AuditDraft
from .values.governance import PendingChange, PendingStatus, ProposedChange
from .writes import new_id

if TYPE_CHECKING:
    from .changes import Change, WriteIntent

DEFAULT_OPERATIONS = (Operation.CREATE, Operation.UPDATE, Operation.RESTORE)
ASKABLE = frozenset({Operation.CREATE, Operation.UPDATE, Operation.RESTORE, Operation.SUPERSEDE, Operation.FORGET})
DEFAULT_EXPIRY = timedelta(hours=72)
_RULE_KEYS = frozenset({"name", "kinds", "categories", "sensitivity", "namespaces", "paths", "pii", "actors",
                        "operations", "expire_after_hours"})


@dataclass(frozen=True, slots=True)
class ApprovalMatch:
    rule: str
    why: str
    expires_after: timedelta

    def describe(self) -> str:
        return f"{self.rule}: {self.why}"


@dataclass(frozen=True, slots=True)
class ApprovalRule:
    name: str
    kinds: tuple[Kind, ...] = ()
    categories: tuple[str, ...] = ()
    sensitivities: tuple[Sensitivity, ...] = ()  # after PII screening raised it
    namespaces: tuple[str, ...] = ()  # fnmatch patterns over the namespace joined with "/"
    paths: tuple[str, ...] = ()  # fnmatch patterns over metadata["path"] (Deep Agents files)
    pii: tuple[str, ...] = ()  # PII kinds found in the final record ("*": any)
    actors: tuple[str, ...] = ()  # fnmatch patterns over the proposing actor
    operations: tuple[Operation, ...] = DEFAULT_OPERATIONS
    when: Callable[[WriteIntent], bool] | None = None
    expires_after: timedelta | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError("an approval rule needs a name")
        object.__setattr__(self, "kinds", tuple(parse_enum(Kind, k, "kind") for k in _tuple(self.kinds)))
        object.__setattr__(self, "sensitivities",
                           tuple(parse_enum(Sensitivity, s, "sensitivity") for s in _tuple(self.sensitivities)))
        operations = tuple(parse_enum(Operation, o, "operation") for o in _tuple(self.operations))
        if not operations or set(operations) - ASKABLE:
            raise ConfigError(f"approval rule {self.name!r}: operations must be among "
                              f"{', '.join(sorted(o.value for o in ASKABLE))}")
        object.__setattr__(self, "operations", operations)
        for name in ("categories", "namespaces", "paths", "pii", "actors"):
            object.__setattr__(self, name, tuple(str(v) for v in _tuple(getattr(self, name))))

    def matches(self, intent: WriteIntent, pii_kinds: frozenset[str]) -> str | None:
        """Why this rule asks for approval of ``intent``, or None."""
        record = intent.record
        if record is None or intent.operation not in self.operations:
            return None
        reasons: list[str] = []
        for check in (self._kind, self._category, self._sensitivity, self._namespace, self._path):
            why = check(record)
            if why is False:
                return None
            if why:
                reasons.append(str(why))
        for why in (self._pii(pii_kinds), self._actor(intent.actor)):
            if why is False:
                return None
            if why:
                reasons.append(str(why))
        if self.when is not None:
            if not self.when(intent):
                return None
            reasons.append("its condition holds")
        return "; ".join(reasons) or f"every {intent.operation.value}"

    # each check: None (not asked), False (fails), or why it holds

    def _kind(self, record: MemoryRecord) -> str | bool | None:
        return _among(record.kind, self.kinds, f"kind {record.kind.value}")

    def _category(self, record: MemoryRecord) -> str | bool | None:
        return _among(record.category, self.categories, f"category {record.category}")

    def _sensitivity(self, record: MemoryRecord) -> str | bool | None:
        return _among(record.sensitivity, self.sensitivities, f"sensitivity {record.sensitivity.value}")

    def _namespace(self, record: MemoryRecord) -> str | bool | None:
        return _glob("/".join(record.scope.namespace), self.namespaces, "namespace")

    def _path(self, record: MemoryRecord) -> str | bool | None:
        """A Deep Agents file matches by the path the agent wrote (``/memories/hr/x.md``:
        the route's mount + the path inside it) or by the path inside the route (``/hr/x.md``)."""
        path, mount = record.metadata.get("path"), record.metadata.get("mount")
        if not isinstance(path, str):
            return _glob(None, self.paths, "path")
        if isinstance(mount, str) and mount.strip("/"):
            written = mount.rstrip("/") + path
            found = _glob(written, self.paths, "path")
            if found:
                return found
        return _glob(path, self.paths, "path")

    def _pii(self, kinds: frozenset[str]) -> str | bool | None:
        if not self.pii:
            return None
        found = sorted(kinds if "*" in self.pii else kinds & set(self.pii))
        return f"personal data ({', '.join(found)})" if found else False

    def _actor(self, actor: str) -> str | bool | None:
        return _glob(actor, self.actors, "actor")

    @classmethod
    def from_data(cls, data: Any, where: str) -> ApprovalRule:
        if not isinstance(data, Mapping) or "name" not in data:
            raise ConfigError(f"{where}: expected a mapping with a 'name'")
        unknown = set(data) - _RULE_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown keys {sorted(unknown)}; known: {', '.join(sorted(_RULE_KEYS))}")
        hours = data.get("expire_after_hours")
        try:
            return cls(
                name=data["name"], kinds=data.get("kinds", ()), categories=data.get("categories", ()),
                sensitivities=data.get("sensitivity", ()), namespaces=data.get("namespaces", ()),
                paths=data.get("paths", ()), pii=data.get("pii", ()), actors=data.get("actors", ()),
                operations=data.get("operations", DEFAULT_OPERATIONS),
                expires_after=None if hours is None else _hours(hours, f"{where}.expire_after_hours"),
            )
        except (ConfigError, ValueError) as exc:
            raise ConfigError(f"{where}: {exc}") from None


def _tuple(value: Any) -> tuple[Any, ...]:
    """One value or several (a string is one value)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        return (value,)
    return tuple(value)


def _among(value: Any, allowed: tuple[Any, ...], what: str) -> str | bool | None:
    if not allowed:
        return None
    return what if value in allowed else False


def _glob(value: str | None, patterns: tuple[str, ...], what: str) -> str | bool | None:
    if not patterns:
        return None
    hit = next((p for p in patterns if value is not None and fnmatchcase(value, p)), None)
    return f"{what} {value} matches {hit!r}" if hit else False


def _hours(value: Any, where: str) -> timedelta:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 24 * 366:
        raise ConfigError(f"{where}: expected a number of hours in (0, 8784], got {value!r}")
    return timedelta(hours=value)


@dataclass(frozen=True, slots=True)
class ApprovalRules:
    """Default rules and per-tenant additions; pending changes expire after
    ``expires_after`` unless their rule says otherwise."""

    rules: tuple[ApprovalRule, ...] = ()
    tenants: Mapping[str, tuple[ApprovalRule, ...]] = field(default_factory=dict)
    expires_after: timedelta = DEFAULT_EXPIRY

    def for_tenant(self, tenant: str) -> tuple[ApprovalRule, ...]:
        return (*self.rules, *self.tenants.get(tenant, ()))

    @property
    def active(self) -> bool:
        return bool(self.rules) or any(self.tenants.values())

    def match(self, intent: WriteIntent, pii_kinds: frozenset[str]) -> ApprovalMatch | None:
        """The first rule of the tenant asking for approval of this change, if any."""
        if intent.record is None or intent.operation not in ASKABLE or not _substantive(intent):
            return None
        for rule in self.for_tenant(intent.scope.tenant):
            why = rule.matches(intent, pii_kinds)
            if why is not None:
                return ApprovalMatch(rule.name, why, rule.expires_after or self.expires_after)
        return None

    def describe(self) -> dict[str, Any]:
        return {"rules": [r.name for r in self.rules],
                "tenants": {name: [r.name for r in rules] for name, rules in sorted(self.tenants.items())},
                "expire_after_hours": self.expires_after.total_seconds() / 3600}

    def with_rules(self, *rules: ApprovalRule, tenant: str | None = None) -> ApprovalRules:
        if tenant is None:
            return replace(self, rules=(*self.rules, *rules))
        return replace(self, tenants={**self.tenants, tenant: (*self.tenants.get(tenant, ()), *rules)})

    @classmethod
    def load(cls, source: str | None) -> ApprovalRules:
        """From JSON text or a .json/.toml file (see the module docstring); None: no rules."""
        if source is None or not source.strip():
            return cls()
        data = read_config(source, "approvals configuration")
        if not isinstance(data, Mapping) or set(data) - {"rules", "tenants", "expire_after_hours"}:
            raise ConfigError("approvals configuration: expected {'rules': [...], 'tenants': {name: [...]}, "
                              "'expire_after_hours': n}")
        tenants = data.get("tenants", {})
        if not isinstance(tenants, Mapping) or not all(isinstance(v, list) for v in tenants.values()):
            raise ConfigError("approvals configuration: 'tenants' must map tenant names to lists of rules")
        rules = data.get("rules", [])
        if not isinstance(rules, list):
            raise ConfigError("approvals configuration: 'rules' must be a list")
        hours = data.get("expire_after_hours")
        return cls(
            tuple(ApprovalRule.from_data(r, f"approval rule {i}") for i, r in enumerate(rules)),
            {tenant_in_config(name, "approvals configuration"): tuple(
                ApprovalRule.from_data(r, f"approval rule {i} of tenant {name!r}") for i, r in enumerate(items))
             for name, items in tenants.items()},
            DEFAULT_EXPIRY if hours is None else _hours(hours, "approvals configuration: expire_after_hours"),
        )


def _visible(record: MemoryRecord) -> tuple[Any, ...]:
    metadata = {k: v for k, v in record.metadata.items() if k != ENCRYPTED_KEY}
    return (record.content, record.source.reply_to, record.kind, record.category, record.tags, metadata,
            record.read_only, record.status)


def _substantive(intent: WriteIntent) -> bool:
    """A new record, or a change to what a reader of it sees."""
    return intent.previous is None or intent.record is None or _visible(intent.previous) != _visible(intent.record)


# -- a proposal, built by the write core from admitted changes ------------------------------


def proposal(changes: Sequence[Change], match: ApprovalMatch, now: datetime) -> PendingChange:
    """The pending change that stands for ``changes`` (one logical write) until a
    reviewer decides it. Records are kept as screened by the PII policy."""
    first = changes[0]
    for change in changes:
        if change.record is None:
            raise InvalidValueError("a purge is never held for approval")
    proposed = tuple(ProposedChange(c.operation, c.record, c.previous.version if c.previous else None, c.reason,
                                    freeze_mapping(c.detail)) for c in changes if c.record is not None)
    record = proposed[0].record
    return PendingChange(
        id=new_id(), tenant=record.scope.tenant, namespace=record.scope.namespace, status=PendingStatus.PENDING,
        created_at=now, expires_at=now + match.expires_after, actor=first.actor, reason=first.reason,
        rule=match.describe(), changes=proposed, detail=freeze_mapping(first.detail),
    )


def proposal_audit(pending: PendingChange) -> AuditDraft:
    record = pending.record
    return AuditDraft(actor=pending.actor, operation=Operation.PROPOSE, at=pending.created_at, record_id=record.id,
                      version=record.version, namespace=pending.namespace,
                      source_message_id=record.source.message_id,
                      detail={"pending_id": pending.id, "rule": pending.rule,
                              "operations": [c.operation.value for c in pending.changes],
                              **({"reason": pending.reason} if pending.reason else {})})
