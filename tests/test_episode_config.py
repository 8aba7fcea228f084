"""Schedules and retention are configuration: bad values are a ConfigError saying what
was wrong, never a worker that silently never runs."""

from datetime import UTC, datetime

import pytest

from engram import ConfigError, Schedule
from engram.consolidation.schedule import load_schedules
from engram.episodes.retention import Retention


def test_schedules_from_json_and_toml(tmp_path):
    loaded = load_schedules('[{"cron": "0 3 * * *"}, {"cron": "*/15 * * * *", "tenant": "acme", "scope": "users"}]')
    assert loaded == [Schedule("0 3 * * *"), Schedule("*/15 * * * *", "acme", ("users",))]
    toml = tmp_path / "schedules.toml"
    toml.write_text('[[schedule]]\ncron = "30 2 * * 1"\ntenant = "globex"\n', encoding="utf-8")
    assert load_schedules(str(toml)) == [Schedule("30 2 * * 1", "globex")]
    assert load_schedules(None) == []


@pytest.mark.parametrize(("source", "message"), [
    ('[{"cron": "every day"}]', "invalid cron expression"),
    ('[{"cron": "0 3 * * *", "when": "x"}]', "unknown keys"),
    ('{"cron": "0 3 * * *"}', "must be a list"),
    ("[not json", "not valid JSON"),
    ("/no/such/file.toml", "no file"),
])
def test_bad_schedules_are_refused(source, message):
    with pytest.raises(ConfigError, match=message):
        load_schedules(source)


def test_cron_is_read_in_utc():
    after = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)  # a DST change day in Europe: UTC is unaffected
    assert Schedule("0 3 * * *").next_after(after) == datetime(2026, 3, 29, 3, 0, tzinfo=UTC)


def test_retention_per_tenant():
    now = datetime(2026, 6, 1, tzinfo=UTC)
    retention = Retention.load('{"default": 30, "tenants": {"acme": 7, "globex": null}}')
    assert retention.cutoff("acme", now) == datetime(2026, 5, 25, tzinfo=UTC)
    assert retention.cutoff("globex", now) is None
    assert retention.cutoff("other", now) == datetime(2026, 5, 2, tzinfo=UTC)
    assert Retention.load("90").cutoff("x", now) == datetime(2026, 3, 3, tzinfo=UTC)
    for bad in ("-1", '{"default": "long"}', '{"forever": 1}', "soon"):
        with pytest.raises(ConfigError):
            Retention.load(bad)
