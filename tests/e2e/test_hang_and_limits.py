"""Hangs and retry limits end to end on the real cluster."""

from __future__ import annotations

import pytest

from lazarus.models.recovery import RecoveryState
from tests.e2e.helpers import restarts, restore_nodes, wait_state
from tests.e2e.stack import POLICY, TEST_POLICIES, submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]


async def test_hang_is_detected_within_the_budget_and_restarted(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, steps=25, ckpt_every=5, fault="hang", fault_step=8, fault_attempts="0")
    final = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
    )
    assert final.state == RecoveryState.COMPLETED, final.stop_reason
    first = final.attempts[0]
    assert first.anomaly.kind.value == "hang" and first.anomaly.source == "hang-watchdog"
    silent = (first.anomaly.recorded_at - first.last_progress_at).total_seconds()
    assert first.anomaly.hang_budget_s <= TEST_POLICIES[POLICY]["hang_budget"]
    assert silent <= first.anomaly.hang_budget_s + 5
    assert final.advice_history[0].exclude_nodes == []  # no node to blame: same nodes
    assert restarts(e2e.cluster, job) == 1


async def test_repeated_crashes_without_a_new_checkpoint_stop_at_the_limit(e2e, job_dir):
    job = submit_training(
        e2e.cluster, job_dir, steps=25, ckpt_every=10, fault="xid79", fault_rank=1, fault_step=3, fault_attempts="all"
    )
    final = await wait_state(
        e2e, job, RecoveryState.STOPPED, RecoveryState.COMPLETED, RecoveryState.FAILED, timeout=150
    )
    assert final.state == RecoveryState.STOPPED
    assert "3 consecutive attempts saved no new checkpoint" in final.stop_reason
    assert len(final.attempts) == 3 and restarts(e2e.cluster, job) == 2
    restore_nodes(e2e.cluster)
