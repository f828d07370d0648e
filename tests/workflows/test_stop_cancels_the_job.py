"""Stop means stop, with durable timers (time skipping): a hung job that reached its attempt cap is cancelled
in act mode on its own, in monitor mode only once the stop advice is approved; expired stop advice cancels
nothing; ``on_stop: keep_running`` never cancels. Why is in the job's state and its workflow history."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from lazarus.models.policy import Mode, OnStop
from lazarus.models.recovery import AdviceAction, AdviceStatus, Approval, RecoveryState
from lazarus.models.slurm import JobState
from tests.workflows.harness import Running, ended, job_input, progress, send, started
from tests.workflows.test_monitor_mode_approvals import wait_state
from workflows.job_recovery import JobRecoveryWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

# one attempt allowed: the hang is the last failure, so the decision is stop
HUNG_AT_THE_CAP = {"max_attempts": 1, "hang_budget": timedelta(minutes=10), "decision_timeout": timedelta(minutes=15)}


async def hung(ts_env, run: Running) -> None:
    """Attempt 0 runs, reports step 10, then stays silent past its hang budget."""
    now = await ts_env.get_current_time()
    await send(run.handle, started(0).model_copy(update={"at": now}), progress(0, 10, now, checkpoint=10))
    await ts_env.sleep(timedelta(minutes=11))


async def activity_summaries(run: Running) -> list[str]:
    history = await run.handle.fetch_history()
    return [
        json.loads(e.user_metadata.summary.data)
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]


async def test_act_mode_cancels_a_hung_job_at_its_attempt_cap_and_the_history_says_why(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT, **HUNG_AT_THE_CAP)) as run:
        await hung(ts_env, run)
        await wait_state(ts_env, run.handle, RecoveryState.STOPPED)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        summaries = await activity_summaries(run)
    [cancel] = run.fake.cancels
    assert cancel.job_id == run.inp.job_id and cancel.expected_attempt == 0 and "attempt cap" in cancel.reason
    assert run.fake.restarts == []
    advice = status.advice_history[0]
    assert advice.action == AdviceAction.STOP and advice.status == AdviceStatus.EXECUTED
    assert "Lazarus cancelled it" in status.stop_reason and status.attempts[0].end_state == JobState.CANCELLED
    assert any(s.startswith(f"stop: cancel job {run.inp.job_id} attempt 0 (attempt cap") for s in summaries)


async def test_monitor_mode_cancels_only_once_the_stop_advice_is_approved(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR, **HUNG_AT_THE_CAP)) as run:
        await hung(ts_env, run)
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        waiting = await run.handle.query(JobRecoveryWorkflow.status)
        assert run.fake.cancels == [] and "approving it cancels the job" in waiting.advice.reason
        await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice"))
        await wait_state(ts_env, run.handle, RecoveryState.STOPPED)
        status = await run.handle.query(JobRecoveryWorkflow.status)
    assert len(run.fake.cancels) == 1 and status.advice.decided_by == "alice"


async def test_stop_advice_nobody_approves_expires_and_cancels_nothing(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR, **HUNG_AT_THE_CAP)) as run:
        await hung(ts_env, run)
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await ts_env.sleep(timedelta(minutes=16))  # past the decision timeout
        await wait_state(ts_env, run.handle, RecoveryState.WATCHING)
        await send(run.handle, ended(0, JobState.TIMEOUT, 0))  # its time limit ends it in the end
        await wait_state(ts_env, run.handle, RecoveryState.STOPPED)
        status = await run.handle.query(JobRecoveryWorkflow.status)
    assert run.fake.cancels == [] and status.advice.status == AdviceStatus.EXPIRED


async def test_stop_advice_ends_without_waiting_out_its_deadline_when_the_job_ends_first(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR, **HUNG_AT_THE_CAP)) as run:
        await hung(ts_env, run)
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await send(run.handle, ended(0, JobState.FAILED, 1))
        await wait_state(ts_env, run.handle, RecoveryState.STOPPED)
        status = await run.handle.query(JobRecoveryWorkflow.status)
    assert run.fake.cancels == [] and "nothing to cancel" in status.stop_reason
    assert status.advice.status == AdviceStatus.NOT_EXECUTED


async def test_keep_running_records_the_stop_and_never_cancels(ts_env):
    inp = job_input(Mode.ACT, on_stop=OnStop.KEEP_RUNNING, **HUNG_AT_THE_CAP)
    async with Running(ts_env.client, inp) as run:
        await hung(ts_env, run)
        await wait_state(ts_env, run.handle, RecoveryState.STOPPED)
        status = await run.handle.query(JobRecoveryWorkflow.status)
    assert run.fake.cancels == [] and "on_stop: keep_running" in status.stop_reason
