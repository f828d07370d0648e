"""`eval "$(lazarus dev env)"` lets a shell drive the stack's Slurm and Temporal."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.devstack.conftest import LZDEV_STATE, lazarus

pytestmark = [pytest.mark.slurm, pytest.mark.temporal, pytest.mark.slow]


def test_eval_dev_env_gives_working_squeue_sinfo_and_temporal_cli(lzdev: None) -> None:
    assert lazarus("dev", "up").returncode == 0
    exports = lazarus("dev", "env")
    assert exports.returncode == 0, exports.stderr
    assert f"export SLURM_CONF={LZDEV_STATE}/etc/slurm.conf" in exports.stdout
    script = (
        exports.stdout
        + "\nsinfo -h -N -o %N | wc -l && temporal workflow list --limit 1 >/dev/null && echo TEMPORAL_OK\n"
    )
    # A plain environment without the venv on PATH: dev env must add it so `temporal` is found.
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["4", "TEMPORAL_OK"]
    assert os.path.dirname(sys.executable) in exports.stdout
