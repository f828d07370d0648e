"""The milestones under time skipping: a restarted attempt that waits in Slurm's queue past the attempt-start
watchdog still gets its milestones in order (requeued, running, progress restored, completed), and the
status query shows each one as it comes (`lazarus show` reads it)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from lazarus.models.policy import Mode
from lazarus.models.recovery import AttemptEnded, AttemptStarted, ProgressDigest, RecoveryState
from lazarus.models.slurm import JobState
from tests.workflows.harness import Running, job_input, progress, send, started, xid79_on
from tests.workflows.test_monitor_mode_approvals import wait_state
from workflows.job_recovery import JobRecoveryWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def milestone_row(run, attempt: int):
    status = await run.handle.query(JobRecoveryWorkflow.status)
    return next(row for row in status.milestones if row.attempt == attempt)


async def test_a_restart_that_queues_past_the_start_watchdog_records_each_milestone_when_it_comes(ts_env):
    inp = job_input(Mode.ACT, attempt_start_timeout=timedelta(minutes=30))
    async with Running(ts_env.client, inp) as run:
        t0 = await ts_env.get_current_time()
        fault = xid79_on("node2")
        fault.anomaly.observed_at = t0
        await send(run.handle, started(0), progress(0, 47, t0, checkpoint=40), fault)
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        waiting = await milestone_row(run, 1)
        assert waiting.fault_at == t0 and waiting.requeued_at is not None and waiting.running_at is None

        await ts_env.sleep(timedelta(minutes=45))  # the queue is full: the attempt-start watchdog fires meanwhile
        running_at = await ts_env.get_current_time()
        await send(
            run.handle,
            AttemptEnded(attempt=0, state=JobState.REQUEUED, at=t0),
            AttemptStarted(attempt=1, nodes=["node1", "node3"], excluded_nodes=["node2"], at=running_at),
        )
        await wait_state(ts_env, run.handle, RecoveryState.WATCHING)
        running = await milestone_row(run, 1)
        assert running.running_at == running_at and running.progress_restored_at is None  # running, not training

        await ts_env.sleep(timedelta(minutes=2))  # start-up: loading the checkpoint
        restored_at = await ts_env.get_current_time()
        await send(
            run.handle,
            ProgressDigest(
                attempt=1,
                step=43,
                last_progress_at=restored_at + timedelta(seconds=5),
                first_step=41,
                first_progress_at=restored_at,
            ),
            AttemptEnded(attempt=1, state=JobState.COMPLETED, exit_code=0, at=restored_at + timedelta(hours=1)),
        )
        final = await run.handle.result()
    assert final.state == RecoveryState.COMPLETED
    assert "had not started after" in (final.attempts[0].outcome or "")
    row = next(row for row in final.milestones if row.attempt == 1)
    assert (row.first_step, row.resumed_from, row.steps_lost) == (41, 40, 7)
    assert row.fault_at < row.requeued_at < row.running_at < row.progress_restored_at < row.completed_at
    seconds = row.seconds
    assert seconds["running"] >= 45 * 60
    assert seconds["progress_restored"] - seconds["running"] == pytest.approx(120, abs=1)  # the skipped clock drifts
    assert seconds["completed"] - seconds["progress_restored"] == pytest.approx(3600)
