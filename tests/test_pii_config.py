"""The PII policy comes from configuration for every entry point (issue 11, item 9):
ENGRAM_PII_POLICY (JSON or a .json/.toml file) per tenant; bad configuration is a
ConfigError that names the problem; `engram stats` shows the policy in force."""

import json

import pytest
from typer.testing import CliRunner

from engram import ConfigError, PIIPolicies
from engram.cli import app

runner = CliRunner()


def test_a_toml_file_sets_a_default_and_per_tenant_actions(tmp_path):
    path = tmp_path / "pii.toml"
    path.write_text('[default]\ndefault = "mask"\nactions = { email = "mask" }\n'
                    '[tenants.acme.actions]\nphone = "forbid"\n', encoding="utf-8")
    policies = PIIPolicies.load(str(path))
    assert policies.for_tenant("acme").action_for("phone") == "forbid"
    assert policies.for_tenant("globex").action_for("email") == "mask"
    assert policies.for_tenant("globex").action_for("phone") == "mask"


@pytest.mark.parametrize(("config", "message"), [
    ('{"tenants": {"acme": {"actions": {"phone": "shred"}}}}', "'shred' is not one of"),
    ('{"tenants": {"acme": {"actions": {"ssn": "mask"}}}}', "unknown PII kind 'ssn'"),
    ('{"defaults": {}}', "expected {'default'"),
    ("{not json", "not valid JSON"),
    ("/nowhere/pii.toml", "no file"),
])
def test_bad_configuration_is_a_config_error_that_says_what(config, message):
    with pytest.raises(ConfigError, match=message):
        PIIPolicies.load(config)


def test_engram_stats_reports_the_policy_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_DB", str(tmp_path / "cli.db"))
    monkeypatch.setenv("ENGRAM_EMBEDDER", "fake-hash")
    monkeypatch.setenv("ENGRAM_TENANT", "acme")
    monkeypatch.setenv("ENGRAM_PII_POLICY", json.dumps({"tenants": {"acme": {"actions": {"phone": "forbid"}}}}))
    refused = runner.invoke(app, ["remember", "Ana's number is 13812345678", "--user", "alice"])
    assert refused.exit_code != 0 and "forbids storing phone" in refused.output
    stats = runner.invoke(app, ["stats", "--json"])
    assert stats.exit_code == 0, stats.output
    assert "forbid" in stats.stdout and "phone" in stats.stdout
