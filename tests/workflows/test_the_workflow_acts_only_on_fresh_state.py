"""The job workflow (time-skipping server, in-memory scheduler): what it does at the moment of acting.

- An approval that arrives after telemetry reported the job's end is not executed; the job completes.
- Act mode reads the kill switch first: thrown, or unreadable, the advice waits for a person; an operator's
  switch of the job to act (or an approval) still ends that wait.
- The fail-open release names the attempt the refused restart was replacing.
"""

from __future__ import annotations

import pytest

from lazarus.models.policy import Mode
from lazarus.models.recovery import AdviceStatus, Approval, ModeChange, RecoveryState
from lazarus.models.slurm import JobState
from tests.workflows.harness import FakeScheduler, Running, ended, job_input, send, started, xid79_on
from tests.workflows.test_monitor_mode_approvals import wait_state
from workflows.job_recovery import JobRecoveryWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


def with_ledger(mode: Mode = Mode.ACT):
    return job_input(mode).model_copy(update={"ledger_workflow_id": "lazarus-ledger-test"})


async def test_an_approval_after_the_job_completed_restarts_nothing(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await send(run.handle, ended(0, JobState.COMPLETED, 0))
        await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice"))
        status = await run.handle.result()
    advice = status.advice_history[0]
    assert status.state == RecoveryState.COMPLETED and run.fake.restarts == []
    assert advice.status == AdviceStatus.NOT_EXECUTED and advice.decided_by == "alice"
    assert advice.not_executed_reason == "job completed before the approved action"


async def test_a_kill_switch_thrown_since_discovery_holds_act_mode_back_until_a_person_approves(ts_env):
    fake = FakeScheduler(cluster_mode=Mode.MONITOR)
    async with Running(ts_env.client, with_ledger(), fake) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        assert fake.restarts == [] and fake.mode_reads == 1 and status.mode == Mode.MONITOR
        assert "kill switch" in status.advice.monitor_reason
        await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice"))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        await send(run.handle, started(1, ("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        status = await run.handle.result()
    assert status.state == RecoveryState.COMPLETED and len(fake.restarts) == 1


async def test_an_unreadable_kill_switch_waits_for_a_person_even_in_act_mode(ts_env):
    fake = FakeScheduler(mode_unreadable=True)
    async with Running(ts_env.client, with_ledger(), fake) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(ts_env, run.handle, RecoveryState.AWAITING_APPROVAL)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        assert fake.restarts == [] and status.mode == Mode.ACT  # the job's mode stands, unconfirmed
        assert "could not be read" in status.advice.monitor_reason
        # an operator's switch of this job to act is a person's decision: it ends the wait
        await run.handle.signal(JobRecoveryWorkflow.set_mode, ModeChange(mode=Mode.ACT, scope="job", operator="op"))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        await send(run.handle, started(1, ("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        status = await run.handle.result()
    assert len(fake.restarts) == 1 and status.advice_history[0].decided_by == "lazarus (mode switched to act)"


async def test_the_fail_open_release_names_the_attempt_the_refused_restart_replaced(ts_env):
    fake = FakeScheduler(refuse_restart=True)
    async with Running(ts_env.client, with_ledger(), fake) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        status = await run.handle.result()
    assert status.state == RecoveryState.FAILED and fake.mode_reads == 1
    assert [(r.job_id, r.attempt) for r in fake.guarded_releases] == [(run.inp.job_id, 0)]
