"""The packaged PromQL rules are valid and behave as their unit tests say (``promtool test rules``)."""

import shutil
import subprocess
from importlib.resources import files
from pathlib import Path

import pytest

HERE = Path(__file__).parent
PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus) is not installed")


def _promtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=60, cwd=HERE)


def test_the_packaged_rules_file_is_valid():
    rules = files("lazarus.straggler") / "rules.yml"
    result = _promtool("check", "rules", str(rules))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_rules_fire_for_a_straggler_and_stay_quiet_for_jitter_and_whole_job_slowdowns():
    result = _promtool("test", "rules", "rules_test.yml")
    assert result.returncode == 0, result.stdout + result.stderr
