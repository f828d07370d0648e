"""Spec: a misspelt key is an error that names the field, never a silent fall-back to a default."""

from __future__ import annotations

import pytest

from lazarus.config import load_settings
from lazarus.errors import ConfigError


def test_an_unknown_top_level_key_in_the_file_is_named(write_config) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(write_config("cluster: prod\ntemporl:\n  namespace: x\n"))
    assert "temporl: unknown field" in str(err.value)


def test_an_unknown_nested_key_in_the_file_is_named_with_its_path(write_config) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(write_config("temporal:\n  namespace: x\n  adress: a:1\n"))
    assert "temporal.adress: unknown field" in str(err.value)


def test_an_unknown_policy_field_is_named_with_the_policy(write_config) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(write_config("policies:\n  default:\n    hang_budgett: 60\n"))
    assert "policies.default.hang_budgett: unknown field" in str(err.value)


def test_an_unknown_nested_env_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAZARUS_TEMPORAL__ADRESS", "a:1")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "temporal.adress: unknown field" in str(err.value)
    assert "LAZARUS_* environment" in str(err.value)
