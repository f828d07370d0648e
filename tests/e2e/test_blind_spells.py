"""A blind spell is not a hang: while Lazarus cannot see a job (the Slurm controller frozen), the hang
watchdog records that it was blind, for how long, and waits; it decides only on fresh observations.

The test freezes the shared test cluster's slurmctld (SIGSTOP, by its pid file and marker) for longer than
the job's hang budget, and always thaws it (SIGCONT), whatever the test does.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from lazarus.devstack import procs
from lazarus.devstack.stack import DevStack, Parts
from lazarus.models.recovery import JobStatus, RecoveryState
from tests.conftest import SlurmCluster, assert_eventually
from tests.e2e.helpers import lazarus_cli, restarts, wait_state
from tests.e2e.stack import POLICY, TEST_POLICIES, submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal, pytest.mark.slow]

FREEZE_S = 30.0  # several times the test policy's hang budget (8 s), a few squeue timeouts


@asynccontextmanager
async def frozen_controller(cluster: SlurmCluster) -> AsyncIterator[None]:
    """slurmctld stopped with SIGSTOP (it holds its connections and answers nothing) until the block ends."""
    marker = DevStack(cluster.dev, Parts(temporal=False, workers=False)).marker
    pid = procs.marked_pid(cluster.pid_file("slurmctld"), marker)
    assert pid is not None, "the test cluster's slurmctld is not running"
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


async def progressed(e2e, job: int, steps: int) -> JobStatus | None:
    status = await e2e.status(job)
    attempt = status.attempts[-1] if status.attempts else None
    return status if attempt and (attempt.last_step or 0) >= steps else None


async def test_a_frozen_controller_longer_than_the_hang_budget_restarts_no_healthy_job(e2e, job_dir):
    assert 3 * TEST_POLICIES[POLICY]["hang_budget"] < FREEZE_S
    job = submit_training(e2e.cluster, job_dir, steps=500, step_time=0.2, ckpt_every=50)  # about 100 s
    await assert_eventually(lambda: progressed(e2e, job, 5), timeout=60, interval=0.5)
    async with frozen_controller(e2e.cluster):
        await asyncio.sleep(FREEZE_S)
    final = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=240
    )
    assert final.state == RecoveryState.COMPLETED, final.stop_reason
    assert [a.index for a in final.attempts] == [0] and restarts(e2e.cluster, job) == 0
    attempt = final.attempts[0]
    assert attempt.anomaly is None and final.advice_history == []
    # the watchdog was blind for part of the freeze and says so, with a duration
    assert attempt.blind_spells, "no blind spell was recorded"
    spell = attempt.blind_spells[0]
    assert spell.until is not None and spell.reason
    assert spell.seconds >= TEST_POLICIES[POLICY]["hang_budget_min"]
    assert "    blind " in lazarus_cli(e2e, "show", str(job)).stdout  # and `lazarus show` says so
