"""Notices: operators are told when advice awaits approval, when a job is stopped or Lazarus could not act,
and when the ledger drains a node or the budget refuses a drain; never about a recovery that went well or a
job its user cancelled. A notice is sent in the background: one that cannot be delivered never holds up a
recovery."""

from __future__ import annotations

from datetime import timedelta

import pytest
from temporalio import activity
from temporalio.exceptions import ApplicationError

from lazarus.models.names import workflow_id
from lazarus.models.notify import Notice, NoticeKind, NotifyResult
from lazarus.models.policy import Mode
from lazarus.models.recovery import RecoveryState, Rejection
from lazarus.models.slurm import JobState
from tests.workflows.harness import FakeScheduler, Running, app_error, ended, job_input, send, started, xid79_on
from tests.workflows.ledger_harness import FakeNodes, imp, running_ledger, settle
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _awaiting(env, handle) -> None:
    for _ in range(200):
        if (await handle.query(JobRecoveryWorkflow.status)).state == RecoveryState.AWAITING_APPROVAL:
            return
        await env.sleep(timedelta(milliseconds=50))
    raise AssertionError("never awaited approval")


async def test_advice_awaiting_approval_is_announced_with_its_generation_then_the_stop(ts_env):
    async with Running(ts_env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await _awaiting(ts_env, run.handle)
        await run.handle.execute_update(JobRecoveryWorkflow.reject_advice, Rejection(generation=1, operator="bob"))
        await run.handle.result()
    pending, stopped = run.fake.notices
    wid = workflow_id("test", run.inp.job_id)
    assert (pending.kind, pending.generation, pending.action) == (NoticeKind.ADVICE_PENDING, 1, "restart")
    assert pending.nodes == ["node2"] and pending.workflow_id == wid and pending.job_id == run.inp.job_id
    assert "awaits approval" in pending.text and "node2" in pending.reason
    assert stopped.kind == NoticeKind.JOB_STOPPED and "rejected" in stopped.text
    assert pending.id != stopped.id


async def test_a_stop_decision_is_announced(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), app_error(), ended(0))
        status = await run.handle.result()
    (stopped,) = run.fake.notices
    assert stopped.kind == NoticeKind.JOB_STOPPED and stopped.reason == status.stop_reason


async def test_a_restart_the_scheduler_refuses_is_announced_as_a_failure(ts_env):
    fake = FakeScheduler(refuse_restart=True)
    async with Running(ts_env.client, job_input(Mode.ACT), fake) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        status = await run.handle.result()
    assert status.state == RecoveryState.FAILED
    assert [n.kind for n in fake.notices] == [NoticeKind.JOB_FAILED]


async def test_a_recovery_that_went_well_and_a_job_cancelled_by_its_user_are_not_announced(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await send(run.handle, started(1, ("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        await run.handle.result()
    async with Running(ts_env.client, job_input(Mode.ACT), run.fake) as cancelled:
        await send(cancelled.handle, started(0), ended(0, JobState.CANCELLED, 0))
        assert (await cancelled.handle.result()).state == RecoveryState.STOPPED
    assert run.fake.notices == []


async def test_a_notice_that_cannot_be_delivered_never_holds_up_the_recovery(ts_env):
    failing = _Unreachable()
    async with Running(ts_env.client, job_input(Mode.MONITOR), failing) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await _awaiting(ts_env, run.handle)  # the notice is still being retried meanwhile
        await run.handle.execute_update(JobRecoveryWorkflow.reject_advice, Rejection(generation=1, operator="bob"))
        status = await run.handle.result()
    assert status.state == RecoveryState.STOPPED
    assert failing.tries > 1  # retried (the preset), then given up


async def test_the_ledger_announces_a_drain_and_a_drain_refused_by_the_budget(ts_env):
    fake = FakeNodes(count=4, failed={"node1", "node2"})  # the node agents corroborate both drains
    async with running_ledger(ts_env, fake, max_drain_fraction=0.25) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node1", 71, at=now))
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 72, user="bob", at=now))
        await settle(ts_env, handle, lambda v: len(v.nodes) == 2 and any(r.refused for r in v.nodes))
        for _ in range(50):
            if len(fake.notices) == 2:
                break
            await ts_env.sleep(timedelta(seconds=1))
    drained, refused = fake.notices
    assert (drained.kind, drained.node, drained.workflow_id) == (NoticeKind.NODE_DRAINED, "node1", "lazarus-t-71")
    assert (refused.kind, refused.node, refused.job_id) == (NoticeKind.DRAIN_REFUSED, "node2", 72)
    assert "budget 25%" in refused.reason


class _Unreachable(FakeScheduler):
    """A scheduler double whose notify activity always fails, as when every webhook is down."""

    def __init__(self) -> None:
        super().__init__()
        self.tries = 0

    def activities(self) -> list:
        @activity.defn(name="notify")
        async def notify(notice: Notice) -> NotifyResult:
            self.tries += 1
            raise ApplicationError("webhook 0 could not be reached", type="WebhookFailed")

        *scheduler, telemetry = super().activities()
        named = [a for a in scheduler if getattr(a, "__temporal_activity_definition").name != "notify"]
        return [*named, notify, telemetry]
