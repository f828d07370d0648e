"""Expedited requeue on the real cluster: with every node busy, an expedited restart runs before jobs that were
waiting longer; without the expedite it waits its turn; the boost is lifted once it runs."""

from __future__ import annotations

import pytest

from lazarus.models.slurm import JobState, LiftRequest, RestartRequest
from lazarus.slurm.client import SlurmClient
from tests.conftest import SlurmCluster, assert_eventually, idle_nodes, submit_job, wait_eligible
from tests.slurm.conftest import RecordingTransport, writes

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.asyncio]

SLEEP = "sleep 600\n"


async def _full_cluster_with_waiting_jobs(
    cluster: SlurmCluster, client: SlurmClient, jobs: list[int]
) -> tuple[int, list[int], list[int]]:
    """The job under test running on one node, every other usable node busy, and two jobs submitted earlier
    waiting. The cluster is shared: nodes another test reserved or drained are not usable, and nodes running
    another test's jobs are busy already; one blocker of this test's own is needed to free a node later."""
    job_id = submit_job(cluster, SLEEP, nodes=1, exclusive=True)
    jobs.append(job_id)
    await assert_eventually(lambda: _state(client, job_id, JobState.RUNNING), timeout=120, interval=0.3)
    blockers: list[int] = []

    async def every_usable_node_busy() -> bool:
        idle = idle_nodes(cluster)[: len(cluster.nodes) - len(blockers)]  # never more blockers than nodes
        new = [submit_job(cluster, SLEEP, nodes=1, exclusive=True) for _ in idle]
        blockers.extend(new)
        jobs.extend(new)
        running = [b for b in blockers if await _state(client, b, JobState.RUNNING)]
        return bool(running) and not idle_nodes(cluster)

    await assert_eventually(every_usable_node_busy, timeout=120, interval=2.0)
    running = [b for b in blockers if await _state(client, b, JobState.RUNNING)]
    earlier = [b for b in blockers if b not in running]  # a blocker that found no node waits too
    waiting = earlier + [submit_job(cluster, SLEEP, nodes=1, exclusive=True) for _ in range(2)]
    jobs.extend(waiting[len(earlier) :])
    return job_id, running, waiting


async def _state(client: SlurmClient, job_id: int, state: JobState) -> bool:
    return (await client.job(job_id)).state is state


async def test_an_expedited_restart_runs_before_jobs_that_waited_longer(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id, blockers, waiting = await _full_cluster_with_waiting_jobs(slurm_cluster, local_client, jobs)

    result = await local_client.restart_excluding(RestartRequest(job_id=job_id, expected_attempt=0, expedite=True))

    assert result.new_attempt == 1 and result.expedite is not None
    assert result.expedite.done, result.expedite
    still_waiting = [w for w in waiting if await _state(local_client, w, JobState.PENDING)]
    assert set(still_waiting) <= set(result.expedite.ahead_of)  # (another engineer's job may free a node early)
    boosted = result.expedite.priority_after
    assert boosted is not None and writes(recorder)[-1] == [
        "scontrol",
        "update",
        f"JobId={job_id}",
        f"Priority={boosted}",
    ]

    eligible_at = await wait_eligible(slurm_cluster, job_id)
    slurm_cluster.run("scancel", str(blockers[0]))
    await assert_eventually(lambda: _state(local_client, job_id, JobState.RUNNING), timeout=30, interval=0.3)
    started = (await local_client.job(job_id)).start_time
    assert started is not None
    for other in still_waiting:  # none started between the attempt becoming eligible and its own start
        job = await local_client.job(other)
        assert not (job.start_time and eligible_at <= job.start_time < started), (job, eligible_at, started)

    lifted = await local_client.lift_expedite(
        LiftRequest(job_id=job_id, attempt=1, boosted=boosted, restore=result.expedite.priority_before or 1)
    )
    assert lifted.changed and lifted.priority == (result.expedite.priority_before or 1)
    again = await local_client.lift_expedite(
        LiftRequest(job_id=job_id, attempt=1, boosted=boosted, restore=result.expedite.priority_before or 1)
    )
    assert not again.changed  # no longer the boosted priority: never touched twice


async def test_a_restart_without_expedite_waits_behind_jobs_submitted_earlier(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id, blockers, waiting = await _full_cluster_with_waiting_jobs(slurm_cluster, local_client, jobs)

    result = await local_client.restart_excluding(RestartRequest(job_id=job_id, expected_attempt=0))

    assert result.expedite is None
    assert not [w for w in writes(recorder) if any(arg.startswith("Priority=") for arg in w)]
    eligible_at = await wait_eligible(slurm_cluster, job_id)
    slurm_cluster.run("scancel", str(blockers[0]))
    await assert_eventually(lambda: _any_running(local_client, waiting), timeout=30, interval=0.3)
    job = await local_client.job(job_id)  # a job that waited longer took the node; the restart waits its turn
    others = [await local_client.job(w) for w in waiting]
    if job.state is not JobState.PENDING and not (job.start_time and job.start_time < eligible_at):
        # it runs: only once every job that waited longer had started (a job of another test on the shared
        # cluster may end and free a node for them, and then the restart is next in line)
        started = job.start_time
        assert started is not None and all(o.start_time and o.start_time <= started for o in others), (job, others)


async def _any_running(client: SlurmClient, job_ids: list[int]) -> bool:
    return any([await _state(client, j, JobState.RUNNING) for j in job_ids])


async def test_an_attempt_that_already_runs_is_not_boosted(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, jobs: list[int]
) -> None:
    job_id = submit_job(slurm_cluster, SLEEP, nodes=1)
    jobs.append(job_id)
    await assert_eventually(lambda: _state(local_client, job_id, JobState.RUNNING), timeout=60, interval=0.3)

    result = await local_client.restart_excluding(
        RestartRequest(job_id=job_id, expected_attempt=0, expedite=True, wait_running_s=60)
    )

    assert result.state is JobState.RUNNING and result.expedite is not None and not result.expedite.done
    assert "already running" in result.expedite.reason
    assert not [w for w in writes(recorder) if any(arg.startswith("Priority=") for arg in w)]
