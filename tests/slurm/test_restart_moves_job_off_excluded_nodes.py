"""Restart-with-exclusions on the real cluster: the job leaves the excluded node, its attempt rises by exactly one."""

from __future__ import annotations

import pytest

from lazarus.models.slurm import JobState, RestartRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import OperationRefusedError
from tests.conftest import SlurmCluster, assert_eventually, job_output, submit_job
from tests.slurm.conftest import RecordingTransport, running_two_node_job, writes

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.asyncio]


async def test_restart_moves_the_job_off_the_excluded_node_and_counts_one_attempt(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    bad = (await local_client.job(job_id)).nodes[1]

    result = await local_client.restart_excluding(
        RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[bad], wait_running_s=60)
    )

    assert result.new_attempt == 1 and not result.already_done
    assert result.state is JobState.RUNNING and bad not in result.nodes and len(result.nodes) == 2
    assert result.excluded_nodes == [bad]
    assert writes(recorder) == [
        ["scontrol", "requeuehold", str(job_id)],
        ["scontrol", "update", f"JobId={job_id}", f"ExcNodeList={bad}"],
        ["scontrol", "release", str(job_id)],
    ]
    # The job itself saw the new attempt on other nodes.
    await assert_eventually(lambda: "attempt 1" in job_output(slurm_cluster, job_id).read_text(), timeout=20)
    assert f"on {bad} attempt 1" not in job_output(slurm_cluster, job_id).read_text()


async def test_running_the_same_restart_twice_requeues_once(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    bad = (await local_client.job(job_id)).nodes[0]
    request = RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[bad], wait_running_s=60)

    first = await local_client.restart_excluding(request)
    writes_after_first = len(writes(recorder))
    second = await local_client.restart_excluding(request)

    assert first.new_attempt == second.new_attempt == 1
    assert not first.already_done and second.already_done
    assert len(writes(recorder)) == writes_after_first  # the second call changed nothing
    assert (await local_client.job(job_id)).restarts == 1

    async def accounting_shows_two_attempts() -> bool:
        return [a.attempt for a in await local_client.attempts(job_id)] == [0, 1]

    await assert_eventually(accounting_shows_two_attempts, timeout=15)


async def test_a_stale_request_for_a_later_attempt_is_refused_without_acting(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    with pytest.raises(OperationRefusedError, match="stale"):
        await local_client.restart_excluding(RestartRequest(job_id=job_id, expected_attempt=3, exclude_nodes=[]))
    assert writes(recorder) == []


FAIL_FIRST_ATTEMPT = (
    'echo "attempt ${SLURM_RESTART_COUNT:-0} on $SLURM_JOB_NODELIST"\n'
    '[ "${SLURM_RESTART_COUNT:-0}" = 0 ] && exit 3\n'
    "sleep 600\n"
)


async def test_a_failed_job_is_restarted_on_other_nodes(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, jobs: list[int]
) -> None:
    job_id = submit_job(slurm_cluster, FAIL_FIRST_ATTEMPT, nodes=2)
    jobs.append(job_id)

    async def failed() -> bool:
        return (await local_client.job(job_id)).state is JobState.FAILED

    await assert_eventually(failed, timeout=30)
    bad = (await local_client.job(job_id)).nodes[0]
    result = await local_client.restart_excluding(
        RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[bad], wait_running_s=60)
    )
    assert result.new_attempt == 1 and result.state is JobState.RUNNING and bad not in result.nodes


async def test_a_job_slurm_will_not_requeue_is_refused_and_left_running(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs, no_requeue=True)
    with pytest.raises(OperationRefusedError, match="presently disabled") as err:
        await local_client.restart_excluding(RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[]))
    assert not err.value.retryable
    job = await local_client.job(job_id)
    assert job.state is JobState.RUNNING and job.restarts == 0 and not job.held
