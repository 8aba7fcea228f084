"""Consolidation schedules: cron expressions evaluated in UTC by ``croniter``.

Several schedules may run in one deployment (per tenant, per scope prefix). A
schedule that fired several times while no worker ran fires once: the scope's
watermark, not the schedule, says which turns are new, so a longer gap only means
more turns in the next run.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from croniter import croniter

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
        data = _read(source)
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


def _read(source: str) -> Any:
    text = source.strip()
    if text.startswith(("[", "{")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"consolidation schedules: invalid JSON: {exc}") from exc
    path = Path(source).expanduser()
    if not path.is_file():
        raise ConfigError(f"consolidation schedules: no such file {source!r}")
    try:
        if path.suffix == ".toml":
            return tomllib.loads(path.read_text("utf-8"))
        return json.loads(path.read_text("utf-8"))
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"consolidation schedules in {source}: {exc}") from exc


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
