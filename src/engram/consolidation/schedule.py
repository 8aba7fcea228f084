"""Consolidation schedules: cron expressions evaluated in UTC by ``croniter``.

Several schedules may run in one deployment (per tenant, per scope prefix). A
schedule that fired several times while no worker ran fires once: the scope's
watermark, not the schedule, says which turns are new, so a longer gap only means
more turns in the next run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from croniter import croniter

from ..config_files import read_config
from ..errors import ConfigError
from ..model import Scope, check_label, utc


@dataclass(frozen=True, slots=True)
class Schedule:
    """When to consolidate what: ``tenant`` None means every tenant; ``scope`` a
    namespace prefix (None: every scope of the tenant)."""

    cron: str
    tenant: str | None = None
    scope: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.cron, str) or not croniter.is_valid(self.cron):
            raise ConfigError(f"invalid cron expression {self.cron!r} (five fields, e.g. '0 3 * * *'; UTC)")
        if self.tenant is not None:
            check_label(self.tenant, "tenant")
        if self.scope is not None:
            Scope(self.tenant or "x", tuple(self.scope))  # the labels are checked like any scope's
            object.__setattr__(self, "scope", tuple(self.scope))

    def next_after(self, moment: datetime) -> datetime:
        """The first fire time strictly after ``moment``, in UTC."""
        return croniter(self.cron, utc(moment)).get_next(datetime).astimezone(UTC)

    @property
    def label(self) -> str:
        where = "/".join((self.tenant or "*", *(self.scope or ("*",))))
        return f"{self.cron} @ {where}"


def load_schedules(source: str | Sequence[Mapping[str, Any]] | None) -> list[Schedule]:
    """From JSON text, a .json/.toml file (``[[schedule]]`` tables) or a list of
    mappings: ``{"cron": "0 3 * * *", "tenant": "acme", "scope": ["users"]}``."""
    if source is None or source == "":
        return []
    data: Any = source
    if isinstance(source, str):
        data = read_config(source, "consolidation schedules")
    if isinstance(data, Mapping):
        data = data.get("schedule", data.get("schedules"))
    if not isinstance(data, list):
        raise ConfigError("consolidation schedules must be a list of {cron, tenant?, scope?}")
    out = []
    for i, item in enumerate(data):
        if isinstance(item, str):
            item = {"cron": item}
        if not isinstance(item, Mapping) or "cron" not in item:
            raise ConfigError(f"schedule {i}: expected {{'cron': ..., 'tenant'?: ..., 'scope'?: [...]}}")
        unknown = set(item) - {"cron", "tenant", "scope"}
        if unknown:
            raise ConfigError(f"schedule {i}: unknown keys {sorted(unknown)}")
        scope = item.get("scope")
        if isinstance(scope, str):
            scope = [part for part in scope.split("/") if part]
        out.append(Schedule(item["cron"], item.get("tenant"), tuple(scope) if scope is not None else None))
    return out


class ScheduleClock:
    """Which schedules are due at a moment. Each schedule's next fire time is counted
    from when the clock started; after firing it moves to the first fire time after
    now (missed fires collapse into one run)."""

    def __init__(self, schedules: Sequence[Schedule], start: datetime) -> None:
        self.schedules = list(schedules)
        self._next = [s.next_after(start) for s in self.schedules]

    def due(self, now: datetime) -> list[Schedule]:
        fired = []
        for i, schedule in enumerate(self.schedules):
            if now >= self._next[i]:
                fired.append(schedule)
                self._next[i] = schedule.next_after(now)
        return fired

    def next_fire(self) -> datetime | None:
        return min(self._next, default=None)
