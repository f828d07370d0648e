"""A job publishes its own straggler metrics, so they count only inside that job's allocation as Slurm
shows it: on a real Slurm job and a real Prometheus fed by remote write, a series whose ``node`` label is
not one of the job's nodes, or whose ``job_id`` names a job Slurm does not show running, never yields a
finding (and so never restarts anybody's job)."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from lazarus.config import SchedulerSettings, Settings
from lazarus.models.slurm import JobState
from lazarus.slurm.client import SlurmClient
from tests.conftest import assert_eventually, submit_job
from tests.straggler.pushed_history import job_history, now_ms, push_history

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.prometheus, pytest.mark.slurm]


@pytest.fixture(scope="module")
def two_jobs(slurm_cluster):
    """Two real 2-node jobs: A on the first two nodes, B on the other two."""
    jobs = [
        submit_job(
            slurm_cluster, "sleep 300\n", job_name=f"lz-strag-{uuid.uuid4().hex[:6]}", nodes=2, nodelist=",".join(nodes)
        )
        for nodes in (slurm_cluster.nodes[:2], slurm_cluster.nodes[2:])
    ]
    yield jobs
    for job in jobs:
        slurm_cluster.run("scancel", str(job), check=False)


async def snapshot(slurm_cluster, job: int):
    client = SlurmClient.local(SchedulerSettings(slurm_conf=slurm_cluster.slurm_conf), command_timeout=20)

    async def running():
        jobs = {j.job_id: j for j in await client.jobs()}
        return jobs if jobs.get(job) and jobs[job].state == JobState.RUNNING else None

    return await assert_eventually(running, timeout=90, interval=0.5)


def enricher(prometheus_url):
    from lazarus.telemetry.enrich import Enricher

    return Enricher(Settings(prometheus={"enabled": True, "url": prometheus_url, "straggler_window": 60}))


async def test_a_slow_series_labelled_with_nodes_of_another_job_is_ignored(prometheus_url, slurm_cluster, two_jobs):
    a, _ = two_jobs
    jobs = await snapshot(slurm_cluster, a)
    end = now_ms()
    # under job A's id, someone publishes series for B's nodes too, one of them slow
    push_history(
        prometheus_url,
        job_history(
            str(a), slurm_cluster.nodes, end, slow_node=slurm_cluster.nodes[2], slow_from_ms=end - 6 * 60_000, seed=3
        ),
    )
    await asyncio.sleep(0.5)
    findings = await enricher(prometheus_url).stragglers({a: jobs[a]})
    assert [(f.job_id, f.node) for f in findings] == []


async def test_the_jobs_own_slow_node_is_still_named(prometheus_url, slurm_cluster, two_jobs):
    _, b = two_jobs
    jobs = await snapshot(slurm_cluster, b)
    mine = slurm_cluster.nodes[2:]
    end = now_ms()
    push_history(
        prometheus_url, job_history(str(b), mine, end, slow_node=mine[1], slow_from_ms=end - 6 * 60_000, seed=4)
    )
    await asyncio.sleep(0.5)
    findings = await enricher(prometheus_url).stragglers({b: jobs[b]})
    assert [(f.job_id, f.node) for f in findings] == [(str(b), mine[1])]


async def test_series_of_a_job_slurm_does_not_show_running_are_ignored(prometheus_url, slurm_cluster, two_jobs):
    _, b = two_jobs
    jobs = await snapshot(slurm_cluster, b)
    ended = jobs[b].model_copy(update={"state": JobState.COMPLETED})
    assert await enricher(prometheus_url).stragglers({b: ended}) == []
