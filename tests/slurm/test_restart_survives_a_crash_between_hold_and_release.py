"""A restart whose process is killed (-9) between requeuehold and release is finished by the retry, never requeued twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from lazarus.models.slurm import JobState, RestartRequest
from lazarus.slurm.client import SlurmClient
from tests.conftest import SlurmCluster
from tests.slurm.conftest import RecordingTransport, running_two_node_job, writes

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.asyncio]

REPO = Path(__file__).resolve().parents[2]


def run_until_held_then_kill(cluster: SlurmCluster, job_id: int, node: str) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.slurm.hold_then_die", str(cluster.slurm_conf), str(job_id), "0", node],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "HELD", "the child did not reach requeuehold"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL


async def test_retry_after_kill_between_hold_and_release_finishes_without_a_second_requeue(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    bad = (await local_client.job(job_id)).nodes[1]

    run_until_held_then_kill(slurm_cluster, job_id, bad)
    crashed = await local_client.job(job_id)
    assert crashed.held and crashed.restarts == 1 and bad not in crashed.excluded_nodes  # held, not yet updated

    result = await local_client.restart_excluding(
        RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[bad], wait_running_s=60)
    )

    assert result.already_done and result.new_attempt == 1
    assert result.state is JobState.RUNNING and bad not in result.nodes
    assert writes(recorder) == [
        ["scontrol", "update", f"JobId={job_id}", f"ExcNodeList={bad}"],
        ["scontrol", "release", str(job_id)],
    ]
    assert (await local_client.job(job_id)).restarts == 1
