"""Act mode: a crash with a hardware signature is restarted excluding the implicated node; the job workflow never
drains a node itself (drains go only through the node ledger, with corroboration and within the budget)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from lazarus.models.policy import Mode
from lazarus.models.recovery import AdviceAction, AdviceStatus, RecoveryState
from lazarus.models.slurm import JobState
from tests.workflows.harness import T0, Running, app_error, ended, job_input, progress, send, started, xid79_on

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_hardware_crash_restarts_excluding_the_node_and_completes(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), progress(0, 100, T0, checkpoint=100), xid79_on("node2"), ended(0))
        await send(
            run.handle,
            started(1, nodes=("node1", "node3"), excluded=("node2",)),
            progress(1, 200, T0 + timedelta(minutes=1), checkpoint=200),
            ended(1, JobState.COMPLETED, 0),
        )
        status = await run.handle.result()
    assert status.state == RecoveryState.COMPLETED
    assert [a.index for a in status.attempts] == [0, 1]
    assert len(run.fake.restarts) == 1
    assert run.fake.restarts[0].expected_attempt == 0
    assert run.fake.restarts[0].exclude_nodes == ["node2"]
    assert run.fake.drains == []  # no ledger runs here: nothing is drained
    advice = status.advice_history[0]
    assert (advice.action, advice.status, advice.generation) == (AdviceAction.RESTART, AdviceStatus.EXECUTED, 1)
    assert status.attempts[0].anomaly.recorded_at is not None


async def test_application_error_stops_without_touching_the_scheduler(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), app_error(), ended(0))
        status = await run.handle.result()
    assert status.state == RecoveryState.STOPPED
    assert "application" in status.stop_reason
    assert run.fake.restarts == [] and run.fake.drains == []


async def test_healthy_job_completes_with_no_advice(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT)) as run:
        await send(
            run.handle,
            started(0),
            progress(0, 10, T0),
            progress(0, 20, T0 + timedelta(seconds=30)),
            ended(0, JobState.COMPLETED, 0),
        )
        status = await run.handle.result()
    assert status.state == RecoveryState.COMPLETED
    assert status.advice_history == [] and run.fake.restarts == []


async def test_failed_end_without_a_log_line_falls_back_to_the_scheduler_view(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), ended(0, JobState.FAILED, 3))
        await send(run.handle, started(1), ended(1, JobState.COMPLETED, 0))
        status = await run.handle.result()
    assert status.attempts[0].anomaly.source == "scheduler"
    assert status.attempts[0].anomaly.diagnosis.signature == "slurm_job_failed"
    assert run.fake.restarts[0].exclude_nodes == []
    assert status.state == RecoveryState.COMPLETED


async def test_repeated_crashes_without_new_checkpoint_stop_at_the_limit(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT, max_attempts_without_checkpoint=3)) as run:
        await send(run.handle, started(0), progress(0, 50, T0, checkpoint=50), xid79_on("node2", 0), ended(0))
        for i in (1, 2, 3):
            await send(run.handle, started(i, nodes=("node1", "node3")), xid79_on("node3", i), ended(i))
        status = await run.handle.result()
    assert status.state == RecoveryState.STOPPED
    assert "3 consecutive attempts saved no new checkpoint" in status.stop_reason
    assert len(run.fake.restarts) == 3


async def test_restart_refused_by_the_scheduler_fails_open(ts_env):
    from tests.workflows.harness import FakeScheduler

    fake = FakeScheduler(refuse_restart=True)
    async with Running(ts_env.client, job_input(Mode.ACT), fake) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        status = await run.handle.result()
    assert status.state == RecoveryState.FAILED and "restart failed" in status.stop_reason
    assert fake.releases == [run.inp.job_id]  # never leave a job held by Lazarus


async def test_without_a_node_ledger_nothing_is_drained_and_the_advice_says_the_node_is_excluded_only(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await send(run.handle, started(1, ("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        status = await run.handle.result()
    assert status.state == RecoveryState.COMPLETED and run.fake.drains == []
    assert run.fake.restarts[0].exclude_nodes == ["node2"]
    comment = status.advice_history[0].comment
    assert "no node ledger runs" in comment and "node2 is excluded from this job only" in comment


async def test_when_the_node_ledger_cannot_be_reached_nothing_is_drained(ts_env):
    inp = job_input(Mode.ACT).model_copy(update={"ledger_workflow_id": "lazarus-nowhere-ledger"})
    async with Running(ts_env.client, inp) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await send(run.handle, started(1, ("node1", "node3")), ended(1, JobState.COMPLETED, 0))
        status = await run.handle.result()
    assert status.state == RecoveryState.COMPLETED and run.fake.drains == []
    assert run.fake.restarts[0].exclude_nodes == ["node2"]
    assert "node ledger unreachable" in status.advice_history[0].comment
