"""Monitor mode: advice waits for an operator; updates are validated; the decision watchdog fails open."""

from __future__ import annotations

from datetime import timedelta

import pytest
from temporalio.client import WorkflowUpdateFailedError

from lazarus.models.policy import Mode
from lazarus.models.recovery import AdviceStatus, Approval, ModeChange, RecoveryState, Rejection
from lazarus.models.slurm import JobState
from tests.workflows.harness import Running, ended, job_input, send, started, xid79_on
from workflows.job_recovery import JobRecoveryWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def wait_state(env, handle, state: RecoveryState) -> None:
    for _ in range(200):
        if (await handle.query(JobRecoveryWorkflow.status)).state == state:
            return
        await env.sleep(timedelta(milliseconds=50))
    raise AssertionError(f"workflow never reached {state}")


async def test_approval_through_the_update_executes_the_advice(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        assert run.fake.restarts == []
        reply = await run.handle.execute_update(
            JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice", comment="agreed")
        )
        assert reply.status == AdviceStatus.APPROVED
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        await send(run.handle, started(1, ("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        status = await run.handle.result()
    assert status.state == RecoveryState.COMPLETED
    assert status.advice_history[0].decided_by == "alice"
    assert status.advice_history[0].comment.startswith("agreed")  # the approver's words stay first
    assert run.fake.restarts[0].exclude_nodes == ["node2"]


async def test_stale_generation_is_refused_and_leaves_no_history_event(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        with pytest.raises(WorkflowUpdateFailedError) as err:
            await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=7, operator="bob"))
        assert "stale advice generation 7" in str(err.value.cause)
        history = await run.handle.fetch_history()
        assert not any("UPDATE" in e.WhichOneof("attributes").upper() for e in history.events)
        await run.handle.execute_update(JobRecoveryWorkflow.reject_advice, Rejection(generation=1, operator="bob"))
        status = await run.handle.result()
    assert status.state == RecoveryState.STOPPED
    assert "rejected" in status.stop_reason and status.advice_history[0].decided_by == "bob"
    assert run.fake.restarts == []


async def test_duplicate_approval_is_refused(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="a"))
        with pytest.raises(WorkflowUpdateFailedError):
            await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="b"))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        await run.handle.terminate("test done")
    assert len(run.fake.restarts) == 1


async def test_approval_by_signal_for_clients_that_can_only_signal(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await run.handle.signal("approve_advice", Approval(generation=3, operator="ui"))  # stale: ignored
        await run.handle.signal("approve_advice", Approval(generation=1, operator="ui"))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.advice_history[0].decided_by == "ui"


async def test_unapproved_advice_expires_and_lazarus_touches_nothing(ts_env):
    inp = job_input(Mode.MONITOR, decision_timeout=timedelta(minutes=15))
    async with Running(ts_env.client, inp) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        status = await run.handle.result()  # time skips through the decision watchdog
    assert status.advice_history[0].status == AdviceStatus.EXPIRED
    assert run.fake.releases == []  # Lazarus placed no hold, so it lifts none (a user's hold stays)
    assert run.fake.restarts == []
    assert status.state == RecoveryState.STOPPED and "expired" in status.stop_reason


async def test_switching_to_act_mode_executes_pending_advice(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await run.handle.signal(JobRecoveryWorkflow.set_mode, ModeChange(mode=Mode.ACT))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        await run.handle.terminate("test done")
    assert len(run.fake.restarts) == 1


async def test_kill_switch_returns_a_job_to_monitor(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT)) as run:
        await run.handle.signal(JobRecoveryWorkflow.set_mode, ModeChange(mode=Mode.ACT, scope="job"))
        await run.handle.signal(JobRecoveryWorkflow.set_mode, ModeChange(mode=Mode.MONITOR, scope="cluster"))
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.mode == Mode.MONITOR and run.fake.restarts == []


async def test_lifting_the_kill_switch_keeps_a_jobs_own_monitor_request(ts_env):
    inp = job_input(Mode.ACT).model_copy(update={"job_mode": Mode.MONITOR})
    async with Running(ts_env.client, inp) as run:
        await run.handle.signal(JobRecoveryWorkflow.set_mode, ModeChange(mode=Mode.ACT, scope="cluster"))
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.mode == Mode.MONITOR and run.fake.restarts == []
