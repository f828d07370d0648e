"""Misconfiguration gives one clear message and exit code 2, never a traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.devstack.conftest import lazarus


def test_invalid_dev_setting_names_the_field() -> None:
    proc = lazarus("dev", "up", extra_env={"LAZARUS_DEV__NODES": "1"})
    assert proc.returncode == 2
    assert "dev.nodes" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_dev_setting_is_rejected() -> None:
    proc = lazarus("dev", "status", extra_env={"LAZARUS_DEV__NODE": "3"})
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_state_dir_the_daemon_users_cannot_reach_is_named(tmp_path: Path) -> None:
    hidden = tmp_path / "private"
    hidden.mkdir(mode=0o700)
    proc = lazarus("dev", "up", extra_env={"LAZARUS_DEV__STATE_DIR": str(hidden / "state")})
    assert proc.returncode == 2
    assert f"{hidden} has no search permission for others" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slurm
def test_port_taken_by_another_program_is_named() -> None:
    state = "/var/tmp/lazarus-devstack-port-test"
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 47150))
        squatter.listen()
        port = squatter.getsockname()[1]
        proc = lazarus(
            "dev",
            "up",
            "--no-temporal",
            "--no-accounting",
            extra_env={
                "LAZARUS_DEV__STATE_DIR": state,
                "LAZARUS_DEV__SLURMCTLD_PORT": str(port),
                "LAZARUS_DEV__SLURMD_PORT0": "47101",
            },
        )
    try:
        assert proc.returncode == 2
        assert f"slurmctld cannot start: port {port} on 127.0.0.1 is used by another program" in proc.stderr
        assert "Traceback" not in proc.stderr
    finally:
        lazarus("dev", "down", extra_env={"LAZARUS_DEV__STATE_DIR": state})
