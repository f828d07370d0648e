"""Telemetry events are delivered at least once and applied at most once: an event counts as reported only
after its signal succeeded, so a job end that could not be signalled (the Temporal server down at that
moment) reaches the workflow later, and a job that completed is never taken for a hung one."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from lazarus.models.recovery import RecoveryState
from tests.conftest import SlurmCluster, assert_eventually, submit_job
from tests.e2e.helpers import restarts, wait_state
from tests.e2e.stack import JOB_PREFIX, POLICY

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]


def submit_until_flag(cluster: SlurmCluster, job_dir: Path, flag: Path) -> int:
    """A one-node job that reports progress every half second until ``flag`` exists, then exits 0."""
    script = (
        f"#!/bin/bash\nstep=0\nwhile [ ! -e {flag} ]; do step=$((step+1)); "
        f"{sys.executable} -c 'from lazarus.progress import report; report(step='$step')'; sleep 0.5; done\n"
        "echo finished\n"
    )
    return submit_job(
        cluster,
        script,
        job_name=f"{JOB_PREFIX}until-flag",
        nodes=1,
        time="5",
        output=str(job_dir / "flag-%j.out"),
        comment=json.dumps({"lazarus": {"policy": POLICY}}),
    )


def scheduler_state(cluster: SlurmCluster, job: int) -> str:
    return cluster.run("squeue", "-h", "-j", str(job), "-t", "all", "-o", "%T", check=False).stdout.strip()


async def test_a_job_end_lost_to_a_failed_signal_is_delivered_and_the_completed_job_is_not_requeued(e2e, job_dir):
    flag = job_dir / "finish"
    job = submit_until_flag(e2e.cluster, job_dir, flag)

    async def watched_with_progress():
        status = await e2e.status(job)
        return status.attempts and (status.attempts[0].last_step or 0) >= 2

    # the precondition, not the behaviour under test: on the shared loopback cluster under the whole suite's load the
    # job can wait for a slot and its workflow for a worker; 120 s as the other e2e tests give a job to start
    await assert_eventually(watched_with_progress, timeout=120, interval=0.5)
    e2e.kill_server()
    try:
        flag.touch()
        await assert_eventually(lambda: scheduler_state(e2e.cluster, job) == "COMPLETED", timeout=30, interval=0.2)
        await asyncio.sleep(15)  # longer than the client retries one signal (10 s): the signal of the end failed
    finally:
        e2e.start_server()  # the same database: the workflow and its hang watchdog are still there
    # without the end event, the hang watchdog (8 s budget) calls the silent job hung and requeues it
    final = await wait_state(e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=90)
    assert final.state == RecoveryState.COMPLETED, final.stop_reason
    assert [a.index for a in final.attempts] == [0] and final.attempts[0].anomaly is None
    assert restarts(e2e.cluster, job) == 0
