"""Spec: bad values stop `helm template` and `helm lint` with a message that names the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helm.chart import CHART, run_helm, template_args

BAD_VALUES = {
    "negative replicas": (
        {"workers.control.replicas": "-1"},
        "at '/workers/control/replicas': minimum: got -1, want 0",
    ),
    "unknown mode": ({"mode": "yolo"}, "at '/mode': value must be one of 'monitor', 'act'"),
    "misspelt value": ({"workers.control.replics": "2"}, "additional properties 'replics' not allowed"),
    "unknown top-level value": ({"clusterName": "x"}, "additional properties 'clusterName' not allowed"),
    "cluster name with a slash": ({"cluster": "a/b"}, "at '/cluster': 'a/b' does not match pattern"),
    "address without port": ({"temporal.address": "temporal"}, "at '/temporal/address': 'temporal' does not match"),
    "ssh port out of range": (
        {"scheduler.ssh.port": "70000"},
        "at '/scheduler/ssh/port': maximum: got 70,000, want 65,535",
    ),
    "unknown policy field": (
        {"policies.default.hang_budgett": "60"},
        "additional properties 'hang_budgett' not allowed",
    ),
    "malformed duration": ({"policies.default.hang_budget": "soon"}, "at '/policies/default/hang_budget'"),
    "grace period too short": (
        {"terminationGracePeriodSeconds": "30"},
        "terminationGracePeriodSeconds (30) must be greater than worker.gracefulShutdownSeconds (30)",
    ),
    "ssh without host": (
        {"scheduler.ssh.host": ""},
        "scheduler.transport is ssh but scheduler.ssh.host is empty: set it to the Slurm login node",
    ),
    "ssh without key secret": ({"scheduler.ssh.keySecret.name": ""}, "scheduler.ssh.keySecret.name is empty"),
    "ssh without known hosts": (
        {"scheduler.ssh.knownHostsConfigMap": ""},
        "neither scheduler.ssh.knownHosts nor scheduler.ssh.knownHostsConfigMap is set",
    ),
    "tls secret without tls": (
        {"temporal.tls.secretName": "certs"},
        "temporal.tls.secretName is set but temporal.tls.enabled is false",
    ),
    "every role disabled": (
        {
            "workers.control.enabled": "false",
            "workers.scheduler.enabled": "false",
            "workers.telemetry.enabled": "false",
        },
        "every worker role is disabled",
    ),
}


@pytest.mark.parametrize(("sets", "message"), BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_helm_template_refuses_with_a_message_naming_the_value(helm: Path, sets: dict, message: str) -> None:
    result = run_helm(helm, *template_args(sets=sets))
    assert result.returncode != 0
    assert message in result.stderr
    assert "goroutine" not in result.stderr  # a message, not a crash


# Only schema rules: helm 4 lint logs a template's `fail` at INFO level and still passes, so the
# cross-value rules (grace period, ssh host, ...) are enforced by template/install, tested above.
@pytest.mark.parametrize("case", ["negative replicas", "unknown mode", "misspelt value", "unknown policy field"])
def test_helm_lint_reports_schema_violations(helm: Path, case: str) -> None:
    sets, message = BAD_VALUES[case]
    args = [arg for key, value in sets.items() for arg in ("--set", f"{key}={value}")]
    result = run_helm(helm, "lint", str(CHART), *args)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
