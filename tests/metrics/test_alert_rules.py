"""Spec: the alert rules file is valid and each alert fires when it should and stays quiet otherwise
(``promtool test rules tests/metrics/alerts_test.yml``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.metrics.promql import ALERTS

HERE = Path(__file__).parent
PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus) is not installed")


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=60, cwd=HERE)


def test_the_rules_file_is_valid():
    result = _promtool("check", "rules", str(ALERTS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_fires_when_it_should_and_stays_quiet_otherwise():
    result = _promtool("test", "rules", "alerts_test.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_a_unit_test():
    tested = {
        case["alertname"]
        for test in yaml.safe_load((HERE / "alerts_test.yml").read_text())["tests"]
        for case in test.get("alert_rule_test", [])
        if case["exp_alerts"]
    }
    rules = {r["alert"] for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]}
    assert rules == tested
