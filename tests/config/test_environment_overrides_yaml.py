"""Spec: LAZARUS_* environment variables take priority over the YAML file, field by field."""

from __future__ import annotations

import pytest

from lazarus.config import load_settings
from lazarus.models.policy import Mode

YAML = """
cluster: prod
mode: monitor
temporal:
  address: temporal.example:7233
  namespace: recovery
scheduler:
  transport: ssh
  ssh: {host: login1, port: 2222}
"""


def test_a_nested_env_variable_overrides_only_its_own_field(write_config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAZARUS_TEMPORAL__ADDRESS", "other.example:7233")
    settings = load_settings(write_config(YAML))
    assert settings.temporal.address == "other.example:7233"
    # The sibling field from the file survives: sources merge per field, not per section.
    assert settings.temporal.namespace == "recovery"


def test_a_top_level_env_variable_overrides_the_file(write_config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAZARUS_MODE", "act")
    assert load_settings(write_config(YAML)).mode is Mode.ACT


def test_env_reaches_three_levels_deep(write_config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAZARUS_SCHEDULER__SSH__PORT", "22")
    settings = load_settings(write_config(YAML))
    assert settings.scheduler.ssh is not None
    assert (settings.scheduler.ssh.host, settings.scheduler.ssh.port) == ("login1", 22)


def test_the_file_named_by_LAZARUS_CONFIG_is_read_when_no_path_is_given(
    write_config, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAZARUS_CONFIG", str(write_config(YAML)))
    assert load_settings().cluster == "prod"


def test_keyword_overrides_beat_the_environment(write_config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAZARUS_CLUSTER", "from-env")
    assert load_settings(write_config(YAML), cluster="from-kwarg").cluster == "from-kwarg"


def test_without_file_or_env_the_defaults_apply() -> None:
    settings = load_settings()
    assert settings.mode is Mode.MONITOR
    assert settings.scheduler.transport == "local"
    assert "default" in settings.policies
