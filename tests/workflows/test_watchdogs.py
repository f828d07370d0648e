"""Durable watchdogs under time skipping: hang detection and the attempt-start watchdog."""

from __future__ import annotations

from datetime import timedelta

import pytest

from lazarus.models.policy import Mode
from lazarus.models.recovery import ProgressView, RecoveryState
from lazarus.models.slurm import JobState
from tests.workflows.harness import FakeScheduler, Running, ended, job_input, progress, send, started
from tests.workflows.test_monitor_mode_approvals import wait_state
from workflows.job_recovery import JobRecoveryWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_no_progress_within_the_budget_is_a_hang_and_restarts_on_the_same_nodes(ts_env):
    inp = job_input(Mode.ACT, hang_budget=timedelta(minutes=10), startup_grace=timedelta(minutes=5))
    async with Running(ts_env.client, inp) as run:
        now = await ts_env.get_current_time()
        await send(run.handle, started(0).model_copy(update={"at": now}), progress(0, 10, now, checkpoint=10))
        await ts_env.sleep(timedelta(minutes=11))  # past the hang budget
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    anomaly = status.attempts[0].anomaly
    assert anomaly.source == "hang-watchdog" and anomaly.kind.value == "hang"
    assert run.fake.restarts[0].exclude_nodes == []


async def test_fresh_progress_seen_by_telemetry_rearms_the_watchdog(ts_env):
    fake = FakeScheduler()
    inp = job_input(Mode.ACT, hang_budget=timedelta(minutes=10))
    async with Running(ts_env.client, inp, fake) as run:
        now = await ts_env.get_current_time()
        fake.progress = ProgressView(known=True, step=99, last_progress_at=now + timedelta(minutes=9))
        await send(run.handle, started(0).model_copy(update={"at": now}), progress(0, 10, now))
        await ts_env.sleep(timedelta(minutes=12))
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.state == RecoveryState.WATCHING
    assert status.attempts[0].last_step == 99 and run.fake.restarts == []


async def test_a_hang_check_that_cannot_reach_telemetry_records_a_blind_spell_and_decides_once_it_can(ts_env):
    fake = FakeScheduler(telemetry_failures=2)
    inp = job_input(Mode.ACT, hang_budget=timedelta(minutes=10))
    async with Running(ts_env.client, inp, fake) as run:
        now = await ts_env.get_current_time()
        await send(run.handle, started(0).model_copy(update={"at": now}), progress(0, 10, now))
        await ts_env.sleep(timedelta(minutes=13))  # the budget, then one more check while blind
        blind = await run.handle.query(JobRecoveryWorkflow.status)
        await ts_env.sleep(timedelta(minutes=4))  # telemetry answers again: silence it vouches for is a hang
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        final = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert blind.state == RecoveryState.WATCHING and blind.attempts[0].anomaly is None
    [spell] = blind.attempts[0].blind_spells
    assert spell.since == now and spell.checks == 2 and "telemetry unreachable" in spell.reason
    [spell] = final.attempts[0].blind_spells
    assert spell.until is not None and final.attempts[0].anomaly.source == "hang-watchdog"
    assert len(run.fake.restarts) == 1


async def test_learned_budget_follows_the_slowest_step(ts_env):
    inp = job_input(
        Mode.ACT, hang_budget=timedelta(hours=1), hang_budget_min=timedelta(seconds=30), hang_step_multiple=4
    )
    async with Running(ts_env.client, inp) as run:
        now = await ts_env.get_current_time()
        digest = progress(0, 10, now).model_copy(update={"max_step_interval": timedelta(seconds=60)})
        await send(run.handle, started(0).model_copy(update={"at": now}), digest)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.hang_deadline == now + timedelta(minutes=4)


async def test_attempt_that_does_not_start_in_time_is_reported_and_released(ts_env):
    inp = job_input(Mode.ACT, attempt_start_timeout=timedelta(minutes=30))
    async with Running(ts_env.client, inp) as run:
        from tests.workflows.harness import xid79_on

        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        await ts_env.sleep(timedelta(minutes=31))
        for _ in range(100):
            status = await run.handle.query(JobRecoveryWorkflow.status)
            if status.attempts[0].outcome and "had not started" in status.attempts[0].outcome:
                break
            await ts_env.sleep(timedelta(seconds=1))
        await send(run.handle, started(1, ("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        final = await run.handle.result()
    assert "had not started after" in status.attempts[0].outcome
    assert run.fake.releases == []  # the restart verified its release; a later hold is not Lazarus's
    assert final.state == RecoveryState.COMPLETED


async def test_a_hung_job_whose_advice_was_rejected_is_not_called_hung_again_and_again(ts_env):
    from lazarus.models.recovery import Rejection

    inp = job_input(Mode.MONITOR, hang_budget=timedelta(minutes=10))
    async with Running(ts_env.client, inp) as run:
        now = await ts_env.get_current_time()
        await send(run.handle, started(0).model_copy(update={"at": now}), progress(0, 10, now))
        await ts_env.sleep(timedelta(minutes=11))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await run.handle.execute_update(JobRecoveryWorkflow.reject_advice, Rejection(generation=1, operator="op"))
        await ts_env.sleep(timedelta(hours=2))  # the job stays hung; the operator owns it now
        status = await run.handle.query(JobRecoveryWorkflow.status)
        events = len((await run.handle.fetch_history()).events)
        await run.handle.terminate("test done")
    assert status.state == RecoveryState.WATCHING and len(status.advice_history) == 1
    assert events < 60, f"{events} history events: the watchdog kept firing"
