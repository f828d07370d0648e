"""End to end on the real Slurm cluster and a real Temporal server: crashes are detected, attributed and
recovered; application errors stop; healthy noisy jobs are left alone."""

from __future__ import annotations

import pytest

from lazarus.models.recovery import AdviceAction, AdviceStatus, RecoveryState
from tests.e2e.helpers import job_field, restarts, restore_nodes, wait_state
from tests.e2e.stack import submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]


async def test_hardware_crash_on_one_node_restarts_elsewhere_and_resumes_from_checkpoint(e2e, job_dir):
    job = submit_training(
        e2e.cluster, job_dir, steps=30, ckpt_every=10, fault="xid79", fault_rank=1, fault_step=15, fault_attempts="0"
    )
    status = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
    )
    assert status.state == RecoveryState.COMPLETED, status.stop_reason
    assert [a.index for a in status.attempts] == [0, 1]
    first, second = status.attempts
    assert first.anomaly.diagnosis.signature and "79" in first.anomaly.diagnosis.signature
    bad = first.nodes[1]  # rank 1 runs on the second node of the allocation
    assert first.anomaly.diagnosis.implicated_nodes == [bad]
    assert bad not in second.nodes and second.excluded_nodes == [bad]
    assert status.advice_history[0].action == AdviceAction.RESTART
    assert status.advice_history[0].status == AdviceStatus.EXECUTED
    assert restarts(e2e.cluster, job) == 1
    out = (job_dir / f"train-{job}.out").read_text()
    assert "attempt 1, resuming from checkpoint 10" in out
    restore_nodes(e2e.cluster)


async def test_application_error_stops_without_exclusion(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, steps=20, fault="app-error", fault_step=5, fault_attempts="all")
    status = await wait_state(e2e, job, RecoveryState.STOPPED, RecoveryState.COMPLETED, timeout=60)
    assert status.state == RecoveryState.STOPPED
    assert status.attempts[0].anomaly.diagnosis.category.value == "application"
    assert restarts(e2e.cluster, job) == 0
    assert job_field(e2e.cluster, job, "ExcNodeList") in ("", "(null)")


async def test_healthy_job_with_benign_noise_completes_with_no_advice(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, steps=20, fault="noisy")
    status = await wait_state(e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, timeout=60)
    assert status.state == RecoveryState.COMPLETED
    assert status.advice_history == [] and status.attempts[0].anomaly is None
    assert restarts(e2e.cluster, job) == 0
