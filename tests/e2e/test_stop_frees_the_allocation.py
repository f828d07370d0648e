"""Stop means stop, end to end on the real cluster: a hung job that reached its attempt cap still holds its
two nodes; Lazarus (act mode) cancels it through the Slurm adapter, Slurm's own accounting shows it
cancelled and off the queue, and `lazarus show` says why. A policy with ``on_stop: keep_running`` leaves
such a job running."""

from __future__ import annotations

import pytest

from lazarus.models.recovery import AdviceAction, AdviceStatus, RecoveryState
from tests.conftest import SlurmCluster
from tests.e2e.helpers import lazarus_cli, wait_state
from tests.e2e.stack import KEEP_RUNNING_POLICY, POLICY, submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]


def queued(cluster: SlurmCluster, job: int) -> str:
    """The job's state while squeue shows it RUNNING or PENDING; empty once it left both."""
    return cluster.run("squeue", "-h", "-j", str(job), "-t", "RUNNING,PENDING", "-o", "%T", check=False).stdout.strip()


def accounted(cluster: SlurmCluster, job: int) -> str:
    """The job's state in Slurm's accounting (sacct), e.g. ``CANCELLED by 0``."""
    return cluster.run("sacct", "-n", "-X", "-P", "-j", str(job), "-o", "State", check=False).stdout.strip()


async def test_a_hung_job_at_its_attempt_cap_is_cancelled_and_slurm_shows_it_gone(e2e, job_dir):
    job = submit_training(
        e2e.cluster,
        job_dir,
        comment={"lazarus": {"policy": POLICY, "max_attempts": 1}},
        steps=200,
        fault="hang",
        fault_step=4,
        fault_attempts="all",
    )
    try:
        status = await wait_state(
            e2e, job, RecoveryState.STOPPED, RecoveryState.COMPLETED, RecoveryState.FAILED, timeout=120
        )
        assert status.state == RecoveryState.STOPPED, status.stop_reason
        advice = status.advice_history[0]
        assert advice.action == AdviceAction.STOP and advice.status == AdviceStatus.EXECUTED
        assert "attempt cap reached" in status.stop_reason and "Lazarus cancelled it" in status.stop_reason
        assert status.attempts[0].anomaly.kind.value == "hang"
        assert queued(e2e.cluster, job) == ""
        assert accounted(e2e.cluster, job).startswith("CANCELLED")
        shown = lazarus_cli(e2e, "show", str(job)).stdout
        assert "Lazarus cancelled it" in shown and "attempt cap reached" in shown
    finally:
        e2e.cluster.run("scancel", str(job), check=False)


async def test_in_monitor_mode_the_job_is_cancelled_only_once_the_stop_is_approved(e2e, job_dir):
    job = submit_training(
        e2e.cluster,
        job_dir,
        comment={"lazarus": {"policy": POLICY, "max_attempts": 1, "mode": "monitor"}},
        steps=200,
        fault="hang",
        fault_step=4,
        fault_attempts="all",
    )
    try:
        waiting = await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL, RecoveryState.STOPPED, timeout=120)
        assert waiting.state == RecoveryState.AWAITING_APPROVAL, waiting.stop_reason
        assert "approving it cancels the job" in waiting.advice.reason
        assert queued(e2e.cluster, job) == "RUNNING"  # nothing happens before a person says so
        lazarus_cli(e2e, "advice", "approve", str(job), "--generation", str(waiting.advice.generation))
        status = await wait_state(e2e, job, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=60)
        assert status.state == RecoveryState.STOPPED and "Lazarus cancelled it" in status.stop_reason
        assert queued(e2e.cluster, job) == "" and accounted(e2e.cluster, job).startswith("CANCELLED")
    finally:
        e2e.cluster.run("scancel", str(job), check=False)


async def test_keep_running_leaves_a_stopped_job_running(e2e, job_dir):
    job = submit_training(
        e2e.cluster,
        job_dir,
        comment={"lazarus": {"policy": KEEP_RUNNING_POLICY}},
        steps=200,
        fault="hang",
        fault_step=4,
        fault_attempts="all",
    )
    try:
        status = await wait_state(
            e2e, job, RecoveryState.STOPPED, RecoveryState.COMPLETED, RecoveryState.FAILED, timeout=120
        )
        assert status.state == RecoveryState.STOPPED, status.stop_reason
        assert "on_stop: keep_running" in status.stop_reason
        assert queued(e2e.cluster, job) == "RUNNING"
        assert accounted(e2e.cluster, job).startswith("RUNNING")
    finally:
        e2e.cluster.run("scancel", str(job), check=False)
