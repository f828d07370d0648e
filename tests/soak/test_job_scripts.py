"""The soak's job scripts (benchmarks/soak/jobs.py) end as their trainer ends: a crashing job fails in Slurm's
eyes (so Lazarus's restart of it is exercised, not skipped as "the job completed"), a healthy one completes, and a
hardware fault is handed to the node's fake GPU. The scripts run under bash with a stand-in ``srun`` that exits
with the trainer's status."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from benchmarks.soak.jobs import job_script
from benchmarks.soak.models import JobKind


def run_script(tmp_path: Path, script: str, srun_status: int) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"
    srun.write_text(f'#!/bin/bash\necho "srun $*"\nexit {srun_status}\n')
    srun.chmod(0o755)
    path = tmp_path / "job.sh"
    path.write_text(script)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", SLURM_RESTART_COUNT="1")
    return subprocess.run(["bash", str(path)], env=env, capture_output=True, text=True, timeout=30, check=False)


@pytest.mark.parametrize("fault", ["xid79", "ecc", "nccl-timeout", "app-error"])
def test_a_crashing_job_fails_with_its_trainers_status(tmp_path: Path, fault: str) -> None:
    script = job_script(JobKind.CRASH, fault, str(tmp_path / "ckpt"), None, "/var/tmp/gpus")
    assert run_script(tmp_path, script, srun_status=1).returncode == 1


@pytest.mark.parametrize("kind", [JobKind.HEALTHY, JobKind.NOISY, JobKind.HOSTILE])
def test_a_job_whose_trainer_finishes_completes(tmp_path: Path, kind: JobKind) -> None:
    outside = "node4" if kind == JobKind.HOSTILE else None
    script = job_script(kind, "none", str(tmp_path / "ckpt"), outside, "/var/tmp/gpus")
    assert run_script(tmp_path, script, srun_status=0).returncode == 0


def test_the_trainer_is_told_where_the_nodes_fake_gpus_are(tmp_path: Path) -> None:
    script = job_script(JobKind.CRASH, "xid79", str(tmp_path / "ckpt"), None, "/var/tmp/lazarus-chaos/nvml")
    srun_line = run_script(tmp_path, script, srun_status=1).stdout
    assert "--fault xid79" in srun_line and "--fake-gpu-dir /var/tmp/lazarus-chaos/nvml" in srun_line
