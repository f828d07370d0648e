"""Monitor mode end to end: advice waits for an operator; approval through the update; stale refused;
rejection leaves the job alone; nobody approving means the advice expires and nothing stays held."""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowUpdateFailedError

from lazarus.identity import os_user
from lazarus.models.names import workflow_id
from lazarus.models.recovery import AdviceStatus, Approval, RecoveryState, Rejection
from tests.e2e.helpers import job_field, restarts, restore_nodes, wait_state
from tests.e2e.stack import EXPIRY_POLICY, POLICY, submit_training
from workflows.job_recovery import JobRecoveryWorkflow

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

CRASH = dict(steps=25, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0")


async def test_approved_advice_restarts_the_job_and_stale_generations_are_refused(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": POLICY, "mode": "monitor"}}, **CRASH)
    status = await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL)
    assert restarts(e2e.cluster, job) == 0  # nothing touched the scheduler before the approval
    handle = (await e2e.client()).get_workflow_handle(workflow_id("lztest", job))
    with pytest.raises(WorkflowUpdateFailedError):
        await handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=99, operator="eve"))
    await handle.execute_update(
        JobRecoveryWorkflow.approve_advice, Approval(generation=status.advice.generation, operator="alice")
    )
    final = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
    )
    assert final.state == RecoveryState.COMPLETED
    assert final.advice_history[0].decided_by == f"{os_user()} (note: alice)"  # the caller, with its note
    assert restarts(e2e.cluster, job) == 1
    restore_nodes(e2e.cluster)


async def test_rejected_advice_leaves_the_job_alone(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": POLICY, "mode": "monitor"}}, **CRASH)
    status = await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL)
    handle = (await e2e.client()).get_workflow_handle(workflow_id("lztest", job))
    await handle.execute_update(
        JobRecoveryWorkflow.reject_advice, Rejection(generation=status.advice.generation, operator="bob")
    )
    final = await wait_state(e2e, job, RecoveryState.STOPPED, timeout=60)
    assert final.advice_history[0].status == AdviceStatus.REJECTED
    assert restarts(e2e.cluster, job) == 0
    assert job_field(e2e.cluster, job, "JobState") == "FAILED"


async def test_unapproved_advice_expires_and_the_job_is_not_left_held(e2e, job_dir):
    job = submit_training(
        e2e.cluster, job_dir, comment={"lazarus": {"policy": EXPIRY_POLICY, "mode": "monitor"}}, **CRASH
    )
    final = await wait_state(e2e, job, RecoveryState.STOPPED, timeout=60)
    assert final.advice_history[0].status == AdviceStatus.EXPIRED
    assert "expired" in final.stop_reason
    assert restarts(e2e.cluster, job) == 0
    assert job_field(e2e.cluster, job, "Priority") != "0"  # not held


async def test_approval_by_signal_from_the_temporal_cli_like_the_ui_or_http_api(e2e, job_dir):
    """Clients that can only signal (Temporal UI, HTTP API, `temporal workflow signal`) approve too."""
    import subprocess
    import sys
    from pathlib import Path

    job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": POLICY, "mode": "monitor"}}, **CRASH)
    status = await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL)
    temporal = str(Path(sys.executable).parent / "temporal")
    out = subprocess.run(
        [
            temporal,
            "workflow",
            "signal",
            "--address",
            f"127.0.0.1:{e2e.port}",
            "--workflow-id",
            workflow_id("lztest", job),
            "--name",
            "approve_advice",
            "--input",
            f'{{"generation": {status.advice.generation}, "operator": "ui-user"}}',
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    final = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
    )
    assert final.state == RecoveryState.COMPLETED
    assert final.advice_history[0].decided_by == "ui-user"
    restore_nodes(e2e.cluster)
