"""`dev down` stops every process of its stack, job leftovers included, and nothing else."""

from __future__ import annotations

import subprocess

import pytest

from lazarus.devstack import procs
from lazarus.devstack.layout import MARKER_ENV
from tests.conftest import SlurmCluster
from tests.devstack.conftest import LZDEV_STATE, lazarus

pytestmark = [pytest.mark.slurm, pytest.mark.temporal, pytest.mark.slow]


def _ours() -> list[int]:
    return [
        pid
        for pid in procs.all_pids()
        if procs.is_alive(pid) and procs.read_environ(pid).get(MARKER_ENV) == str(LZDEV_STATE)
    ]


def test_down_stops_stack_and_its_jobs_but_not_foreign_processes(lzdev: None, slurm_cluster: SlurmCluster) -> None:
    assert lazarus("dev", "up").returncode == 0
    env = {"SLURM_CONF": str(LZDEV_STATE / "etc" / "slurm.conf"), "PATH": "/usr/bin:/bin"}
    # A running 2-node job whose slurmstepd must not outlive the cluster
    # (--no-requeue: the next `up` must not run it again).
    subprocess.run(
        ["sbatch", "-N2", "-t", "2", "--no-requeue", "-o", "/dev/null", "--wrap", "srun sleep 120"],
        env=env,
        check=True,
        capture_output=True,
    )
    foreign = subprocess.Popen(["sleep", "300"])
    test_ctld = procs.marked_pid(slurm_cluster.pid_file("slurmctld"), str(slurm_cluster.state_dir))
    try:
        down = lazarus("dev", "down")
        assert down.returncode == 0, down.stderr
        assert "slurmctld" in down.stdout
        assert _ours() == []
        assert procs.slurm_leftovers(LZDEV_STATE / "etc" / "slurm.conf") == []
        assert procs.is_alive(foreign.pid)
        assert test_ctld is not None and procs.is_alive(test_ctld), "the shared lztest cluster was touched"
        assert lazarus("dev", "status").returncode == 1
        assert lazarus("dev", "down").stdout.strip() == "nothing was running"
    finally:
        foreign.kill()
        foreign.wait()
