"""Spec: each invalid value gives a ConfigError naming the field and the rule, nothing else.

ConfigError is a LazarusError, which the CLI prints as a message without a traceback.
"""

from __future__ import annotations

import pytest

from lazarus.config import load_settings
from lazarus.errors import ConfigError, LazarusError


def _message(write_config, text: str) -> str:
    with pytest.raises(ConfigError) as err:
        load_settings(write_config(text))
    assert isinstance(err.value, LazarusError)
    message = str(err.value)
    assert "Traceback" not in message
    assert "Value error," not in message  # pydantic's internal prefix is stripped
    return message


def test_a_port_out_of_range_names_the_field_and_the_limit(write_config) -> None:
    message = _message(write_config, "dev:\n  temporal_port: 99999\n")
    assert "dev.temporal_port: Input should be less than or equal to 65535" in message


def test_an_ssh_port_of_zero_is_refused(write_config) -> None:
    message = _message(write_config, "scheduler:\n  transport: ssh\n  ssh: {host: login1, port: 0}\n")
    assert "scheduler.ssh.port: Input should be greater than or equal to 1" in message


def test_ssh_transport_without_an_ssh_section_says_what_is_missing(write_config) -> None:
    message = _message(write_config, "scheduler:\n  transport: ssh\n")
    assert "scheduler: transport 'ssh' needs an 'ssh' section with at least 'host'" in message


def test_ssh_section_without_host_names_the_host_field(write_config) -> None:
    message = _message(write_config, "scheduler:\n  transport: ssh\n  ssh: {port: 22}\n")
    assert "scheduler.ssh.host: Field required" in message


def test_an_unknown_mode_lists_the_allowed_ones(write_config) -> None:
    message = _message(write_config, "mode: yolo\n")
    assert "mode: Input should be 'monitor' or 'act'" in message


def test_a_temporal_address_without_port_is_refused(write_config) -> None:
    message = _message(write_config, "temporal:\n  address: temporal.example\n")
    assert "temporal.address: must be host:port, got 'temporal.example'" in message


def test_a_client_cert_without_key_is_refused(write_config) -> None:
    message = _message(write_config, "temporal:\n  tls: true\n  tls_client_cert: /etc/tls/tls.crt\n")
    assert "tls_client_cert and tls_client_key must be given together" in message


def test_policies_without_default_are_refused(write_config) -> None:
    message = _message(write_config, "policies:\n  strict: {max_attempts: 2}\n")
    assert "a policy named 'default' is required" in message


def test_every_problem_is_listed_once_in_one_line(write_config) -> None:
    message = _message(write_config, "mode: yolo\ndev:\n  temporal_port: 1\n")
    assert "\n" not in message  # the CLI's errors are one line (docs/cli.md)
    problems = message.split("): ", 1)[1].split("; ")
    assert [p.split(":")[0] for p in problems] == ["mode", "dev.temporal_port"]


def test_a_malformed_json_section_in_the_environment_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAZARUS_TEMPORAL", "{")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert 'field "temporal"' in str(err.value)
    assert "LAZARUS_<SECTION>__<FIELD>" in str(err.value)
