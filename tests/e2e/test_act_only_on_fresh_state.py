"""Every action re-reads the job first (real Slurm, Temporal server and worker).

- Hang advice approved after the job completed on its own: nothing is requeued, and the advice says it was
  not executed because the job completed before the approved action (also in `lazarus show`).
- A job suspended with `scontrol suspend` for longer than its hang budget is not a hang: the watchdog pauses
  while Slurm shows it SUSPENDED and starts afresh on resume.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from temporalio.service import RPCError

from lazarus.identity import os_user
from lazarus.models.names import workflow_id
from lazarus.models.recovery import AdviceStatus, Approval, RecoveryState
from tests.conftest import submit_job
from tests.e2e.helpers import job_field, lazarus_cli, restarts, wait_state
from tests.e2e.stack import JOB_PREFIX, POLICY, TEST_POLICIES
from workflows.job_recovery import JobRecoveryWorkflow

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

TERMINAL = (RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED)


def progress_job(e2e, job_dir: Path, body: str, mode: str | None = None) -> int:
    """A 1-node job that prints Lazarus progress lines, then runs ``body``; it exits 0."""
    lazarus = {"policy": POLICY, **({"mode": mode} if mode else {})}
    script = (
        "#!/bin/bash\n"
        'for i in $(seq 1 8); do echo "LAZARUS step=$i"; sleep 0.5; done\n'
        f"{body}\n"
        'echo "LAZARUS step=100"\nexit 0\n'
    )
    return submit_job(
        e2e.cluster,
        script,
        job_name=f"{JOB_PREFIX}fresh",
        nodes=1,
        output=str(job_dir / "fresh-%j.out"),
        comment=json.dumps({"lazarus": lazarus}),
    )


async def slurm_state(e2e, job: int, state: str, timeout: float = 60) -> None:
    for _ in range(int(timeout / 0.25)):
        if job_field(e2e.cluster, job, "JobState") == state:
            return
        await asyncio.sleep(0.25)
    raise AssertionError(f"job {job} never reached {state} in Slurm")


async def test_hang_advice_approved_after_the_job_completed_requeues_nothing(e2e, job_dir):
    go = job_dir / "go"
    job = progress_job(e2e, job_dir, f"while [ ! -e {go} ]; do sleep 0.5; done  # silent: a hang", mode="monitor")
    status = await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL, timeout=90)
    assert status.attempts[0].anomaly.kind.value == "hang"
    go.touch()  # the job was only slow: it finishes on its own
    await slurm_state(e2e, job, "COMPLETED")
    await asyncio.sleep(2)  # telemetry reports the end (the workflow queues it while it waits for an answer)
    handle = (await e2e.client()).get_workflow_handle(workflow_id("lztest", job))
    await handle.execute_update(
        JobRecoveryWorkflow.approve_advice, Approval(generation=status.advice.generation, operator="alice")
    )
    final = await wait_state(e2e, job, *TERMINAL, timeout=60)
    advice = final.advice_history[0]
    assert restarts(e2e.cluster, job) == 0 and job_field(e2e.cluster, job, "JobState") == "COMPLETED"
    assert final.state == RecoveryState.COMPLETED
    assert advice.status == AdviceStatus.NOT_EXECUTED and advice.decided_by == f"{os_user()} (note: alice)"
    assert advice.not_executed_reason == "job completed before the approved action"
    assert "not executed: job completed before the approved action" in lazarus_cli(e2e, "show", str(job)).stdout


async def test_a_suspended_job_is_not_a_hang(e2e, job_dir):
    go = job_dir / "go"
    body = f'while [ ! -e {go} ]; do echo "LAZARUS step=$((i++))"; sleep 0.5; done'
    job = progress_job(e2e, job_dir, "i=9; " + body)
    await progress_seen(e2e, job)
    e2e.cluster.run("scontrol", "suspend", str(job))
    await asyncio.sleep(3 * TEST_POLICIES[POLICY]["hang_budget"])  # far longer than any hang budget in force
    status = await e2e.status(job)
    assert status.state == RecoveryState.WATCHING and status.attempts[0].anomaly is None
    assert status.attempts[0].suspended_at is not None and status.hang_deadline is None
    e2e.cluster.run("scontrol", "resume", str(job))
    await asyncio.sleep(3)
    go.touch()
    final = await wait_state(e2e, job, *TERMINAL, timeout=60)
    assert final.state == RecoveryState.COMPLETED, final.stop_reason
    assert final.attempts[0].anomaly is None and final.attempts[0].resumed_at is not None
    assert restarts(e2e.cluster, job) == 0


async def progress_seen(e2e, job: int, timeout: float = 60) -> None:
    """Wait until the job's workflow has heard a progress line."""
    for _ in range(int(timeout / 0.25)):
        try:
            status = await e2e.status(job)
        except RPCError:  # not discovered yet
            status = None
        if status and status.attempts and status.attempts[0].last_step:
            return
        await asyncio.sleep(0.25)
    raise AssertionError(f"job {job}: no progress reached its workflow\n{e2e.log_tail()}")
