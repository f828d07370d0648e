"""The stop's cancel (real cluster): a job still holding its allocation is cancelled and verified; a job that
already ended, or moved on to another attempt, is never touched; a retry after the cancel changes nothing."""

from __future__ import annotations

import pytest

from lazarus.models.slurm import CancelRequest, JobState
from lazarus.slurm.client import SlurmClient
from tests.conftest import SlurmCluster, assert_eventually, submit_job
from tests.slurm.conftest import RecordingTransport, running_two_node_job, writes

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.asyncio]


async def _until(client: SlurmClient, job_id: int, state: JobState) -> None:
    async def reached() -> bool:
        return (await client.job(job_id)).state is state

    await assert_eventually(reached, timeout=60, interval=0.3)


async def test_a_running_attempt_is_cancelled_and_verified_off_the_queue(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)

    result = await local_client.cancel_attempt(CancelRequest(job_id=job_id, expected_attempt=0, reason="hang"))

    assert result.cancelled and result.state is JobState.CANCELLED and result.not_done_reason is None
    assert writes(recorder) == [["scancel", str(job_id)]]
    squeue = slurm_cluster.run("squeue", "-h", "-j", str(job_id), "-t", "RUNNING,PENDING", "-o", "%i", check=False)
    assert squeue.stdout.strip() == ""


async def test_a_retry_after_the_cancel_sends_nothing_more(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    request = CancelRequest(job_id=job_id, expected_attempt=0)
    await local_client.cancel_attempt(request)

    again = await local_client.cancel_attempt(request)  # the activity retried after a crash past scancel

    assert again.already_done and not again.cancelled and again.state is JobState.CANCELLED
    assert writes(recorder) == [["scancel", str(job_id)]]


async def test_an_attempt_that_ended_on_its_own_is_not_cancelled(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = submit_job(slurm_cluster, "exit 3\n", nodes=1)
    jobs.append(job_id)
    await _until(local_client, job_id, JobState.FAILED)

    result = await local_client.cancel_attempt(CancelRequest(job_id=job_id, expected_attempt=0))

    assert result.not_done_reason and "already ended FAILED" in result.not_done_reason
    assert not result.cancelled and result.state is JobState.FAILED and result.exit_code == 3
    assert writes(recorder) == []


async def test_a_job_that_moved_on_to_another_attempt_is_not_cancelled(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    slurm_cluster.run("scontrol", "requeue", str(job_id))  # Slurm (or an admin) requeued it: attempt 1

    async def requeued() -> bool:
        return (await local_client.job(job_id)).restarts == 1

    await assert_eventually(requeued, timeout=60, interval=0.3)

    result = await local_client.cancel_attempt(CancelRequest(job_id=job_id, expected_attempt=0))

    assert result.not_done_reason and "not attempt 0" in result.not_done_reason and result.attempt == 1
    assert writes(recorder) == []
    assert not (await local_client.job(job_id)).state.finished
