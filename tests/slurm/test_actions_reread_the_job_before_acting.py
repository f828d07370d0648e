"""Every action re-reads the job first (real cluster): Lazarus never requeues a job that has completed, been
cancelled or moved on to another attempt, never lifts a hold it did not place, and says truthfully whether the
new attempt carries the exclusions.

Slurm itself would requeue a completed job (``scontrol requeuehold`` on a COMPLETED job succeeds on 22.05),
so the guard is the restart's own fresh read.
"""

from __future__ import annotations

import pytest

from lazarus.models.slurm import JobState, ReleaseRequest, RestartRequest
from lazarus.slurm.client import SlurmClient
from tests.conftest import SlurmCluster, assert_eventually, submit_job
from tests.slurm.conftest import RecordingTransport, running_two_node_job, writes

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.asyncio]


async def _until(client: SlurmClient, job_id: int, state: JobState) -> None:
    async def reached() -> bool:
        return (await client.job(job_id)).state is state

    await assert_eventually(reached, timeout=60, interval=0.3)


async def test_a_completed_job_is_never_requeued(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = submit_job(slurm_cluster, "exit 0\n", nodes=1)
    jobs.append(job_id)
    await _until(local_client, job_id, JobState.COMPLETED)
    node = (await local_client.job(job_id)).nodes[0]

    result = await local_client.restart_excluding(
        RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[node])
    )

    assert result.not_done_reason and "completed" in result.not_done_reason
    assert result.state is JobState.COMPLETED and result.exit_code == 0 and result.exclusions_applied is False
    assert writes(recorder) == []
    after = await local_client.job(job_id)
    assert after.state is JobState.COMPLETED and after.restarts == 0


async def test_a_cancelled_job_is_never_requeued(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    slurm_cluster.run("scancel", str(job_id))
    await _until(local_client, job_id, JobState.CANCELLED)

    result = await local_client.restart_excluding(RestartRequest(job_id=job_id, expected_attempt=0))

    assert result.not_done_reason and "cancelled" in result.not_done_reason
    assert writes(recorder) == [] and (await local_client.job(job_id)).restarts == 0


async def test_a_job_slurm_already_requeued_and_running_again_is_not_requeued_and_its_exclusions_are_reported_missing(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    bad = (await local_client.job(job_id)).nodes[0]
    slurm_cluster.run("scontrol", "requeue", str(job_id))  # Slurm (or an admin) requeued it first

    async def running_again() -> bool:
        job = await local_client.job(job_id)
        return job.restarts == 1 and job.state is JobState.RUNNING

    await assert_eventually(running_again, timeout=90, interval=0.5)
    nodes = (await local_client.job(job_id)).nodes

    result = await local_client.restart_excluding(
        RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[bad])
    )

    assert result.already_done and result.new_attempt == 1 and writes(recorder) == []
    if bad in nodes:  # the scheduler may or may not have picked the same node again
        assert result.exclusions_applied is False
        assert "already been requeued" in result.exclusions_not_applied_reason
        assert "only while it is pending" in result.exclusions_not_applied_reason
    assert (await local_client.job(job_id)).restarts == 1


async def test_a_job_slurm_already_requeued_and_still_pending_gets_the_exclusions_and_keeps_its_users_hold(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    bad = (await local_client.job(job_id)).nodes[1]
    slurm_cluster.run("scontrol", "requeue", str(job_id))
    slurm_cluster.run("scontrol", "uhold", str(job_id))  # its user holds the new attempt

    result = await local_client.restart_excluding(
        RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[bad])
    )

    assert result.already_done and result.exclusions_applied is True and result.excluded_nodes == [bad]
    assert writes(recorder) == [["scontrol", "update", f"JobId={job_id}", f"ExcNodeList={bad}"]]
    after = await local_client.job(job_id)
    assert after.held and after.state_reason == "JobHeldUser" and after.restarts == 1


async def test_the_fail_open_release_lifts_lazarus_s_requeue_hold_on_that_attempt(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    slurm_cluster.run("scontrol", "requeuehold", str(job_id))  # a restart of attempt 0 that stopped after its hold

    async def held() -> bool:
        job = await local_client.job(job_id)
        return job.held and job.state is JobState.PENDING

    await assert_eventually(held, timeout=60, interval=0.3)
    result = await local_client.release_lazarus_hold(ReleaseRequest(job_id=job_id, attempt=0))
    assert result.changed and not (await local_client.job(job_id)).held


async def test_the_fail_open_release_never_lifts_a_users_hold(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = submit_job(slurm_cluster, "sleep 60\n", nodes=1, hold=True)  # held by its user from submission
    jobs.append(job_id)
    result = await local_client.release_lazarus_hold(ReleaseRequest(job_id=job_id, attempt=0))
    assert not result.changed and writes(recorder) == []
    job = await local_client.job(job_id)
    assert job.held and job.state_reason == "JobHeldUser"


async def test_the_fail_open_release_never_lifts_a_hold_on_a_later_attempt(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    slurm_cluster.run("scontrol", "requeue", str(job_id))  # attempt 1 (Lazarus restarted attempt 0) ...

    async def running_again() -> bool:
        job = await local_client.job(job_id)
        return job.restarts == 1 and job.state is JobState.RUNNING

    await assert_eventually(running_again, timeout=90, interval=0.5)
    slurm_cluster.run("scontrol", "requeuehold", str(job_id))  # ... then someone else's hold on attempt 2

    async def at_attempt_two() -> bool:
        job = await local_client.job(job_id)
        return job.restarts == 2 and job.held

    await assert_eventually(at_attempt_two, timeout=60, interval=0.3)
    result = await local_client.release_lazarus_hold(ReleaseRequest(job_id=job_id, attempt=0))
    assert not result.changed and writes(recorder) == [] and (await local_client.job(job_id)).held
