"""Expedited requeue on a full cluster, no reservation (real Slurm, Temporal server and worker; policy expedite on).

- A hardware fault's restart goes to the top of the queue: when a node frees, it runs before jobs that were
  submitted earlier and still wait; the boost is lifted once it runs; the advice and `lazarus show` say so.
- An application failure never jumps the queue: one that stops is not restarted at all; one that earns a
  retry (a NaN loss) is restarted and waits behind the jobs submitted before it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lazarus.models.recovery import RecoveryState
from tests.conftest import SlurmCluster, assert_eventually, idle_nodes, submit_job, wait_eligible
from tests.e2e.helpers import job_field, lazarus_cli, restore_nodes, wait_state
from tests.e2e.stack import EXPEDITE_POLICY, JOB_PREFIX, submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

SLEEP = "sleep 600\n"


def _state(cluster: SlurmCluster, job: int) -> str:
    return job_field(cluster, job, "JobState")


async def _fill_the_cluster(cluster: SlurmCluster, mine: list[int]) -> list[int]:
    """Every usable node busy (the cluster is shared: nodes other tests reserved or use are not ours to fill);
    returns this test's blockers that run."""
    blockers: list[int] = []

    def full() -> bool:
        for _ in idle_nodes(cluster)[: len(cluster.nodes) - len(blockers)]:  # never more blockers than nodes
            blockers.append(submit_job(cluster, SLEEP, nodes=1, exclusive=True, job_name="lz-blocker"))
        mine.extend(b for b in blockers if b not in mine)
        return not idle_nodes(cluster) and any(_state(cluster, b) == "RUNNING" for b in blockers)

    await assert_eventually(full, timeout=120, interval=2.0)
    return [b for b in blockers if _state(cluster, b) == "RUNNING"]


@pytest.fixture
def mine(e2e):
    """Jobs a test submitted besides the training job; cancelled afterwards."""
    jobs: list[int] = []
    yield jobs
    if jobs:
        e2e.cluster.run("scancel", *map(str, jobs), check=False)
    restore_nodes(e2e.cluster)


async def test_a_hardware_fault_restart_runs_before_jobs_submitted_earlier(e2e, job_dir: Path, mine: list[int]):
    cluster = e2e.cluster
    job = submit_training(
        cluster,
        job_dir,
        comment={"lazarus": {"policy": EXPEDITE_POLICY}},
        sbatch={"nodes": 1},
        steps=200,
        step_time=0.25,
        ckpt_every=10,
        fault="xid79",
        fault_rank=0,
        fault_step=60,
        fault_attempts="0",
    )
    mine.append(job)
    await assert_eventually(lambda: _state(cluster, job) == "RUNNING", timeout=120, interval=0.5)
    blockers = await _fill_the_cluster(cluster, mine)
    waiting = [submit_job(cluster, SLEEP, nodes=1, exclusive=True, job_name="lz-waiting") for _ in range(2)]
    mine.extend(waiting)

    async def restarted_and_recorded():
        status = await e2e.status(job)
        return status if status.advice_history and status.advice_history[0].expedited is not None else None

    status = await assert_eventually(restarted_and_recorded, timeout=120, interval=0.5)
    advice = status.advice_history[0]
    assert advice.category.value == "hardware" and advice.expedite, advice
    assert advice.expedited is not None and advice.expedited.done, advice.expedited
    # the job's own node went back to the pool: a job that waited may have taken it; the others still wait
    still_waiting = [w for w in waiting if _state(cluster, w) == "PENDING"]
    assert still_waiting and set(still_waiting) <= set(advice.expedited.ahead_of)

    await wait_eligible(cluster, job)
    cluster.run("scancel", str(blockers[0]))
    await assert_eventually(lambda: _state(cluster, job) == "RUNNING", timeout=60, interval=0.3)
    for other in still_waiting:
        assert _state(cluster, other) == "PENDING", f"job {other} submitted earlier ran first"

    final = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=180
    )
    assert final.state == RecoveryState.COMPLETED, final.stop_reason
    assert final.advice_history[0].expedite_lifted is True
    assert job_field(cluster, job, "Priority") != str(advice.expedited.priority_after)
    shown = lazarus_cli(e2e, "show", str(job)).stdout
    assert "queue: expedited: hardware failure" in shown and "expedite lifted once it ran: yes" in shown


async def test_an_application_failure_never_jumps_the_queue(e2e, job_dir: Path, mine: list[int]):
    cluster = e2e.cluster
    job = submit_training(
        cluster,
        job_dir,
        comment={"lazarus": {"policy": EXPEDITE_POLICY}},
        sbatch={"nodes": 1},
        steps=200,
        fault="app-error",
        fault_step=40,
        fault_attempts="all",
    )
    mine.append(job)
    await assert_eventually(lambda: _state(cluster, job) == "RUNNING", timeout=120, interval=0.5)
    final = await wait_state(e2e, job, RecoveryState.STOPPED, RecoveryState.COMPLETED, timeout=90)
    assert final.state == RecoveryState.STOPPED
    advice = final.advice_history[0]
    assert advice.category.value == "application" and not advice.expedite and advice.expedited is None
    assert advice.expedite_reason is None  # a stop has no restart, so no place in the queue to take
    assert job_field(cluster, job, "Restarts") == "0"
    assert "    queue: " not in lazarus_cli(e2e, "show", str(job)).stdout


SEGFAULT_ONCE = (
    "#!/bin/bash\n"
    'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then\n'
    "  sleep 4\n"
    '  echo "Fatal Python error: Segmentation fault"\n'
    "  exit 139\n"
    "fi\n"
    "sleep 600\n"
)


async def test_an_application_failure_that_restarts_waits_behind_jobs_submitted_earlier(
    e2e, job_dir: Path, mine: list[int]
):
    """A segfault in the job's own process is an application failure that earns one retry on the same nodes: it
    is restarted, never expedited, and a job that waited longer gets the next free node. (A NaN loss stopped
    being one: it stops, as the public threads' fixes did.)"""
    cluster = e2e.cluster
    job = submit_job(
        cluster,
        SEGFAULT_ONCE,
        job_name=f"{JOB_PREFIX}segfault",
        nodes=1,
        exclusive=True,
        output=str(job_dir / "app-%j.out"),
        comment=json.dumps({"lazarus": {"policy": EXPEDITE_POLICY}}),
    )
    mine.append(job)
    await assert_eventually(lambda: _state(cluster, job) == "RUNNING", timeout=120, interval=0.3)
    blockers = await _fill_the_cluster(cluster, mine)
    waiting = [submit_job(cluster, SLEEP, nodes=1, exclusive=True, job_name="lz-waiting") for _ in range(2)]
    mine.extend(waiting)

    async def restarted():
        status = await e2e.status(job)
        return status if status.advice_history and status.attempts[0].requeued_at is not None else None

    status = await assert_eventually(restarted, timeout=120, interval=0.5)
    advice = status.advice_history[0]
    assert advice.category.value == "application" and advice.action.value == "restart", advice
    assert not advice.expedite and advice.expedited is None
    assert advice.expedite_reason is not None and advice.expedite_reason.startswith("not expedited")

    await wait_eligible(cluster, job)
    still_waiting = [w for w in waiting if _state(cluster, w) == "PENDING"]
    assert still_waiting
    cluster.run("scancel", str(blockers[0]))
    await assert_eventually(lambda: _state(cluster, still_waiting[0]) == "RUNNING", timeout=60, interval=0.3)
    assert _state(cluster, job) == "PENDING"  # waits its turn like everyone else's job
    assert "queue: not expedited: the application failure" in lazarus_cli(e2e, "show", str(job)).stdout
