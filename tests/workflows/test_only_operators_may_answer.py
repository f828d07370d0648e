"""Only the configured operators may answer a job's advice or switch its mode; who they are is the caller's
identity (the ``lazarus-caller`` header the Lazarus client sends), never the message's free-text operator.

Updates from anyone else are refused with the reason; signals from anyone else are ignored and the refusal
is kept in the job's record (``refused_answers``). An empty list keeps the namespace as the boundary.
"""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowUpdateFailedError

from lazarus.models.policy import Mode
from lazarus.models.recovery import AdviceStatus, Approval, ModeChange, RecoveryState, Rejection
from tests.workflows.harness import Running, as_caller, ended, job_input, send, started, xid79_on
from tests.workflows.test_monitor_mode_approvals import wait_state
from workflows.job_recovery import JobRecoveryWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def awaiting(ts_env, run: Running) -> None:
    await send(run.handle, started(0), xid79_on("node2"), ended(0))
    await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)


async def test_an_operator_approves_and_the_record_names_the_caller_not_the_free_text(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR, operators=("alice",))) as run:
        await awaiting(ts_env, run)
        alice = as_caller(ts_env.client, "alice").get_workflow_handle(run.handle.id)
        reply = await alice.execute_update(
            JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="the on-call")
        )
        assert reply.status == AdviceStatus.APPROVED
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.advice_history[0].decided_by == "alice (note: the on-call)"
    assert len(run.fake.restarts) == 1


async def test_an_update_from_a_caller_not_permitted_is_refused_with_the_reason(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR, operators=("alice",))) as run:
        await awaiting(ts_env, run)
        mallory = as_caller(ts_env.client, "mallory").get_workflow_handle(run.handle.id)
        for update, answer in (
            (JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice")),
            (JobRecoveryWorkflow.reject_advice, Rejection(generation=1, operator="alice")),
        ):
            with pytest.raises(WorkflowUpdateFailedError) as err:
                await mallory.execute_update(update, answer)
            assert "mallory is not permitted to" in str(err.value.cause)
            assert "authorization.operators" in str(err.value.cause)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.state == RecoveryState.AWAITING_APPROVAL and status.advice.status == AdviceStatus.PENDING
    assert run.fake.restarts == []


async def test_an_update_without_a_caller_identity_is_refused_when_operators_are_configured(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR, operators=("alice",))) as run:
        await awaiting(ts_env, run)
        with pytest.raises(WorkflowUpdateFailedError) as err:  # the plain client sends no lazarus-caller header
            await run.handle.execute_update(
                JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice")
            )
        await run.handle.terminate("test done")
    assert "carries no caller identity" in str(err.value.cause)


async def test_a_signal_from_a_caller_not_permitted_is_ignored_and_recorded(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR, operators=("alice",))) as run:
        await awaiting(ts_env, run)
        mallory = as_caller(ts_env.client, "mallory").get_workflow_handle(run.handle.id)
        await mallory.signal(JobRecoveryWorkflow.approve_advice_signal, Approval(generation=1, operator="alice"))
        await mallory.signal(JobRecoveryWorkflow.set_mode, ModeChange(mode=Mode.ACT, scope="job", operator="alice"))
        status = await run.handle.query(JobRecoveryWorkflow.status)
        alice = as_caller(ts_env.client, "alice").get_workflow_handle(run.handle.id)
        await alice.signal(JobRecoveryWorkflow.approve_advice_signal, Approval(generation=1, operator="alice"))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        after = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.state == RecoveryState.AWAITING_APPROVAL and status.mode == Mode.MONITOR
    assert [(r.kind, r.operator) for r in status.refused_answers] == [
        ("approve", "mallory (note: alice)"),
        ("mode", "mallory (note: alice)"),
    ]
    assert all("mallory is not permitted to" in r.reason for r in status.refused_answers)
    assert after.advice_history[0].decided_by == "alice"


async def test_without_operators_whoever_reaches_the_namespace_may_answer(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR)) as run:
        await awaiting(ts_env, run)
        anyone = as_caller(ts_env.client, "bob").get_workflow_handle(run.handle.id)
        await anyone.signal(JobRecoveryWorkflow.set_mode, ModeChange(mode=Mode.ACT, scope="job", operator="bob"))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert status.refused_answers == [] and status.mode == Mode.ACT
