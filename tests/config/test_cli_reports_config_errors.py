"""Spec: the `lazarus` command reports a bad configuration as one line and exit code 2,
never a Python traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _lazarus(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAZARUS_")}
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "lazarus.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("mode: yolo\n", "mode: Input should be 'monitor' or 'act'"),
        ("temporl: {}\n", "temporl: unknown field"),
        ("cluster: x\n  bad: [\n", "is not valid YAML: mapping values are not allowed here at line 2"),
    ],
    ids=["bad value", "unknown key", "malformed yaml"],
)
def test_a_bad_config_file_stops_the_worker_with_one_message(write_config, yaml_text: str, expected: str) -> None:
    result = _lazarus("--config", str(write_config(yaml_text)), "worker", "--role", "control")
    assert result.returncode == 2
    assert result.stderr.startswith("lazarus: ") and result.stderr.count("\n") == 1
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_config_named_by_the_environment_is_reported(tmp_path: Path) -> None:
    result = _lazarus("worker", "--role", "control", env_extra={"LAZARUS_CONFIG": str(tmp_path / "nope.yaml")})
    assert result.returncode == 2
    assert result.stderr.strip() == f"lazarus: configuration file {tmp_path / 'nope.yaml'} does not exist"


def test_a_bad_environment_value_is_reported() -> None:
    result = _lazarus("worker", "--role", "control", env_extra={"LAZARUS_DEV__TEMPORAL_PORT": "99999"})
    assert result.returncode == 2
    assert "dev.temporal_port: Input should be less than or equal to 65535" in result.stderr
    assert "Traceback" not in result.stderr
