"""How long turns are kept, per tenant: ``ENGRAM_EPISODE_RETENTION`` is a number of
days, or JSON ``{"default": 365, "tenants": {"acme": 30}}`` (``null``: forever)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..core import WriteCore
from ..errors import ConfigError
from ..model import tenant_in_config
from ..values.episodes import EpisodeWrites


@dataclass(frozen=True, slots=True)
class Retention:
    default_days: float | None = None
    tenants: Mapping[str, float | None] = field(default_factory=dict)

    def cutoff(self, tenant: str, now: datetime) -> datetime | None:
        days = self.tenants.get(tenant, self.default_days) if tenant in self.tenants else self.default_days
        return None if days is None else now - timedelta(days=days)

    @classmethod
    def load(cls, source: str | None) -> Retention:
        if source is None or not source.strip():
            return cls()
        try:
            data: Any = json.loads(source)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"episode retention: expected days or JSON, got {source!r}: {exc}") from exc
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return cls(_days(data, "default"))
        if not isinstance(data, Mapping) or set(data) - {"default", "tenants"}:
            raise ConfigError('episode retention: expected {"default": days, "tenants": {tenant: days}}')
        tenants = data.get("tenants") or {}
        if not isinstance(tenants, Mapping):
            raise ConfigError("episode retention: tenants must map a tenant to days")
        days = {tenant_in_config(name, "episode retention"): _days(value, str(name)) for name, value in tenants.items()}
        return cls(_days(data.get("default"), "default"), days)


def _days(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"episode retention ({where}): days must be a positive number or null, got {value!r}")
    return float(value)


def drop_expired_turns(core: WriteCore, retention_setting: str | None) -> int:
    """Drop turns older than each tenant's retention, one transaction per tenant. Returns how
    many tenants it ran for (``memory.maintenance.run()`` does it)."""
    retention = Retention.load(retention_setting)
    if retention.default_days is None and not retention.tenants:
        return 0
    now, done = core.clock.now(), 0
    store = core.reads.store
    # tenants that keep conversations but no memories (yet) have turns to drop too
    for tenant in sorted(set(store.tenants()) | set(store.turn_tenants()) | set(retention.tenants)):
        cutoff = retention.cutoff(tenant, now)
        if cutoff is not None:
            core.commit([], tenant=tenant, episodes=EpisodeWrites(drop_before=cutoff))
            done += 1
    return done
