"""The simulated controller speaks Slurm 22.05's formats: the real adapter reads it and acts on it unchanged."""

from __future__ import annotations

import pytest

from lazarus.models.slurm import JobState, NodeAction, RestartRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.simulated import SimulatedCluster, SimulatedTransport, current_user

pytestmark = pytest.mark.asyncio

NODES = [f"sim{i:04d}" for i in range(1, 9)]


def cluster_with_one_job() -> tuple[SimulatedCluster, SlurmClient, int]:
    cluster = SimulatedCluster(NODES, requeue_delay_s=0.0)
    user, uid = current_user()
    job = cluster.submit("train", "/tmp/sim/train.out", 2, user=user, user_id=uid, comment="lazarus")
    cluster.start(job, NODES[:2])
    return cluster, SlurmClient(SimulatedTransport(cluster), verify_timeout=2.0), job.job_id


async def test_squeue_and_scontrol_read_the_same_job() -> None:
    _, slurm, job_id = cluster_with_one_job()
    (listed,) = await slurm.jobs()
    shown = await slurm.job(job_id)
    assert (listed.job_id, listed.state, listed.nodes, listed.comment) == (
        job_id,
        JobState.RUNNING,
        NODES[:2],
        "lazarus",
    )
    assert shown.stdout_path == "/tmp/sim/train.out" and shown.nodes == NODES[:2] and shown.user_id == listed.user_id


async def test_a_restart_excluding_a_node_runs_the_next_attempt_elsewhere() -> None:
    cluster, slurm, job_id = cluster_with_one_job()
    cluster.end(cluster.jobs[job_id], JobState.FAILED, exit_code=1)
    result = await slurm.restart_excluding(RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[NODES[1]]))
    assert result.exclusions_applied and result.new_attempt == 1
    job = await slurm.job(job_id)
    assert job.state is JobState.RUNNING and NODES[1] not in job.nodes
    attempts = await slurm.attempts(job_id)
    assert [a.state for a in attempts] == [JobState.FAILED, JobState.RUNNING]


async def test_a_second_restart_of_the_same_attempt_requeues_nothing() -> None:
    cluster, slurm, job_id = cluster_with_one_job()
    request = RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[NODES[0]])
    await slurm.restart_excluding(request)
    again = await slurm.restart_excluding(request)
    assert again.already_done and cluster.jobs[job_id].restarts == 1
    assert sum(c[:2] == ["scontrol", "requeuehold"] for c in cluster.commands) == 1


async def test_drained_nodes_take_no_new_attempt() -> None:
    cluster, slurm, job_id = cluster_with_one_job()
    await slurm.drain(NodeAction(nodes=NODES[:7], reason="leaf switch"))
    assert {n.name for n in await slurm.nodes() if n.drained} == set(NODES[:7])
    cluster.end(cluster.jobs[job_id], JobState.FAILED, exit_code=1)
    with pytest.raises(Exception, match="running on nodes other than"):
        await slurm.restart_excluding(RestartRequest(job_id=job_id, expected_attempt=0, wait_running_s=0.5))
    assert cluster.jobs[job_id].state is JobState.PENDING
