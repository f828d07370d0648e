"""Spec: values.schema.json accepts exactly what lazarus/config.py accepts for the values it passes
through, so helm refuses a bad policy before a pod ever starts."""

from __future__ import annotations

import json
import re
import typing

from lazarus.config import LoggingSettings, Settings
from lazarus.models.policy import Mode, Policy
from tests.helm.chart import CHART

SCHEMA = json.loads((CHART / "values.schema.json").read_text())


def test_the_policy_schema_knows_every_policy_field_and_no_other() -> None:
    policy_schema = SCHEMA["properties"]["policies"]["additionalProperties"]
    assert set(policy_schema["properties"]) == set(Policy.model_fields)
    assert policy_schema["additionalProperties"] is False


def test_mode_choices_match_the_mode_enum() -> None:
    assert SCHEMA["properties"]["mode"]["enum"] == [m.value for m in Mode]


def test_log_levels_match_the_settings() -> None:
    levels = typing.get_args(LoggingSettings.model_fields["level"].annotation)
    assert SCHEMA["properties"]["logging"]["properties"]["level"]["enum"] == list(levels)


def test_the_cluster_name_rule_is_the_settings_rule() -> None:
    (pattern,) = [m.pattern for m in Settings.model_fields["cluster"].metadata if hasattr(m, "pattern")]
    assert SCHEMA["properties"]["cluster"]["pattern"] == pattern


def test_durations_accept_what_pydantic_accepts() -> None:
    branch = SCHEMA["$defs"]["duration"]["anyOf"][1]["allOf"]
    accepted = ["PT30M", "PT1H30M", "P1D", "PT0.5S", "01:30:00", "90:00"]
    refused = ["soon", "30m", "P", "PT", ""]
    def ok(text: str) -> bool:
        return all(re.search(rule["pattern"], text) for rule in branch)
    assert [t for t in accepted if not ok(t)] == []
    assert [t for t in refused if ok(t)] == []
