"""kill -9 of the worker or of the Temporal server at the worst moments: no lost recovery, no double
requeue, no job left held, and durable timers still fire."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from lazarus.models.recovery import AdviceStatus, RecoveryState
from tests.e2e.helpers import restarts, restore_nodes, wait_state
from tests.e2e.stack import EXPIRY_POLICY, submit_training
from workflows.options import SLURM_RESTART

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]


def held_after_requeue(cluster, job_id: int) -> bool:
    """True in the window between `requeuehold` and `release` (restart count up, priority 0)."""
    data = json.loads(cluster.run("squeue", "--json").stdout)
    job = next((j for j in data["jobs"] if j["job_id"] == job_id), None)
    return bool(job and job["restart_cnt"] >= 1 and job["priority"] == 0)


async def test_worker_killed_between_hold_and_release_finishes_with_exactly_one_requeue(e2e, job_dir):
    e2e.kill_worker()
    e2e.start_worker(slow_release=True)  # this worker will hang 10 s before `scontrol release`
    job = submit_training(
        e2e.cluster, job_dir, steps=25, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0"
    )
    deadline = time.monotonic() + 60
    while not held_after_requeue(e2e.cluster, job) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    was_held = held_after_requeue(e2e.cluster, job)
    e2e.kill_worker()
    await asyncio.sleep(1)
    e2e.start_worker()
    # the dead worker's restart is retried once its heartbeat timeout passes (the preset outlasts the
    # slowest stretch of Slurm commands between two heartbeats, so a live worker is never cut off)
    final = await wait_state(
        e2e,
        job,
        RecoveryState.COMPLETED,
        RecoveryState.STOPPED,
        RecoveryState.FAILED,
        timeout=150 + SLURM_RESTART["heartbeat_timeout"].total_seconds(),
    )
    assert final.state == RecoveryState.COMPLETED, final.stop_reason
    assert restarts(e2e.cluster, job) == 1  # never requeued twice
    assert [a.index for a in final.attempts] == [0, 1]
    assert was_held, "the kill did not land inside the hold window"
    restore_nodes(e2e.cluster)


async def test_decision_watchdog_fires_across_a_kill_9_of_the_temporal_server(e2e, job_dir):
    job = submit_training(
        e2e.cluster,
        job_dir,
        comment={"lazarus": {"policy": EXPIRY_POLICY, "mode": "monitor"}},
        steps=25,
        ckpt_every=5,
        fault="xid79",
        fault_rank=1,
        fault_step=8,
        fault_attempts="0",
    )
    await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL)
    e2e.kill_server()
    await asyncio.sleep(3)
    e2e.start_server()  # same SQLite file
    final = await wait_state(e2e, job, RecoveryState.STOPPED, timeout=90)
    assert final.advice_history[0].status == AdviceStatus.EXPIRED
    assert restarts(e2e.cluster, job) == 0


async def test_restarted_telemetry_without_offsets_does_not_recharge_an_old_failure(e2e, job_dir):
    """The output file (--open-mode=append) still holds attempt 0's Xid when a fresh telemetry worker,
    with no saved offsets, first sees attempt 1: it must not be charged to attempt 1."""
    job = submit_training(
        e2e.cluster, job_dir, steps=40, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=6, fault_attempts="0"
    )
    await wait_state(e2e, job, RecoveryState.WATCHING, timeout=60)
    status = await e2e.status(job)
    for _ in range(120):
        if len(status.attempts) > 1 and status.attempts[1].started_at and status.state == RecoveryState.WATCHING:
            break
        await asyncio.sleep(0.25)
        status = await e2e.status(job)
    assert len(status.attempts) == 2
    e2e.kill_worker()
    await e2e.forget_telemetry_offsets()
    e2e.start_worker()
    final = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
    )
    assert final.state == RecoveryState.COMPLETED
    assert len(final.advice_history) == 1 and final.attempts[1].anomaly is None
    assert restarts(e2e.cluster, job) == 1
    restore_nodes(e2e.cluster)
