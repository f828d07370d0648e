"""Telemetry keeps the hang clock; the workflow's hang timer is a backstop (patch telemetry-keeps-the-hang-clock).

A digest saying ``hang_clock`` tells the workflow that telemetry, which reads every line, signals a silence that
reaches the budget (``silent``): the workflow then checks telemetry's progress view at once, exactly as its
watchdog does, so a hang is never called on data telemetry cannot vouch for. Its own timer waits
``max(budget, BACKSTOP)`` after the last progress it heard, and each keep-alive replaces it in the digest's own
workflow task, so a healthy job costs no timer firings. A run from before the patch, and digests from telemetry
that keeps no clock, keep the timer at the budget.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from temporalio.api.enums.v1 import EventType

from lazarus.models.policy import Mode
from lazarus.models.recovery import ProgressDigest, ProgressView, RecoveryState
from tests.workflows.harness import T0, FakeScheduler, Running, job_input, send, started, xid79_on
from tests.workflows.test_monitor_mode_approvals import wait_state
from tests.workflows.test_transitions import feed, kinds
from workflows.effects import ProgressChecked
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.timers import BACKSTOP
from workflows.transitions import watchdog_deadline

BUDGET = timedelta(minutes=2)


def clock(step: int, at: datetime, silent: bool = False, seen: datetime | None = None) -> ProgressDigest:
    """A digest from telemetry that keeps the hang clock."""
    return ProgressDigest(
        attempt=0, step=step, last_progress_at=at, hang_budget=BUDGET, observed_at=seen or at, hang_clock=True,
        silent=silent,
    )  # fmt: skip


def policy() -> dict:
    return {"hang_budget": BUDGET, "hang_budget_min": BUDGET, "startup_grace": BUDGET}


# ---- the pure rules -------------------------------------------------------------------------


def following(**kw):
    return job_input(Mode.ACT, **policy()).model_copy(update={"follows_hang_clock": True, **kw})


def test_with_telemetry_keeping_the_clock_the_hang_timer_waits_the_backstop_not_the_budget():
    state, _ = feed(following(), started(0), clock(10, T0))
    assert watchdog_deadline(state)[0] == T0 + BACKSTOP


def test_digests_from_telemetry_that_keeps_no_clock_keep_the_timer_at_the_budget():
    state, _ = feed(following(), started(0), clock(10, T0).model_copy(update={"hang_clock": False}))
    assert watchdog_deadline(state)[0] == T0 + BUDGET


def test_a_run_from_before_the_patch_keeps_the_timer_at_the_budget_and_ignores_a_silent_digest():
    state, effects = feed(job_input(Mode.ACT, **policy()), started(0), clock(10, T0, silent=True))
    assert watchdog_deadline(state)[0] == T0 + BUDGET and "CheckProgress" not in kinds(effects)


def test_a_silent_digest_makes_the_workflow_ask_telemetry_before_calling_a_hang():
    state, effects = feed(following(), started(0), clock(10, T0, silent=True), now=T0 + BUDGET)
    assert kinds(effects)[-1] == "CheckProgress" and state.attempts[0].anomaly is None


def test_a_silent_digest_that_telemetry_cannot_vouch_for_is_a_blind_spell_rechecked_as_before():
    blind = "telemetry has not seen the job since 12:00:00: the scheduler could not be queried"
    now = T0 + BUDGET
    state, _ = feed(following(), started(0), clock(10, T0, silent=True), now=now)
    view = ProgressView(known=True, step=10, last_progress_at=T0, observed_at=T0, blind=blind)
    state, effects = feed(state, ProgressChecked(0, view), now=now)
    assert state.state == RecoveryState.WATCHING and state.attempts[0].anomaly is None
    assert len(state.attempts[0].blind_spells) == 1 and "Decide" not in kinds(effects)
    assert watchdog_deadline(state)[0] == now + BUDGET / 4  # the blind recheck, not the backstop


def test_a_silent_digest_after_the_attempt_was_diagnosed_asks_nothing():
    state, _ = feed(following(), started(0), xid79_on("node2"))
    state, effects = feed(state, clock(10, T0, silent=True))
    assert "CheckProgress" not in kinds(effects)


# ---- on Temporal, under time skipping ----------------------------------------------------------


@pytest.mark.asyncio(loop_scope="session")
async def test_a_silent_digest_is_a_hang_at_once_when_telemetry_vouches_for_the_silence(ts_env):
    fake = FakeScheduler()
    async with Running(ts_env.client, job_input(Mode.ACT, **policy()), fake) as run:
        now = await ts_env.get_current_time()
        fake.progress = ProgressView(known=True, step=10, last_progress_at=now, observed_at=now + BUDGET)
        await send(run.handle, started(0).model_copy(update={"at": now}), clock(10, now))
        await send(run.handle, clock(10, now, silent=True, seen=now + BUDGET))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    anomaly = status.attempts[0].anomaly
    assert anomaly.kind.value == "hang" and anomaly.source == "hang-watchdog" and len(run.fake.restarts) == 1


@pytest.mark.asyncio(loop_scope="session")
async def test_the_backstop_calls_a_hang_that_telemetry_never_signalled(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT, **policy())) as run:
        now = await ts_env.get_current_time()
        await send(run.handle, started(0).model_copy(update={"at": now}), clock(10, now))
        await ts_env.sleep(BUDGET * 5)  # well past the budget: telemetry keeps the clock, the timer waits
        quiet = await run.handle.query(JobRecoveryWorkflow.status)
        await ts_env.sleep(BACKSTOP - BUDGET * 5 + timedelta(minutes=1))
        await wait_state(ts_env, run.handle, RecoveryState.VERIFYING)
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await run.handle.terminate("test done")
    assert quiet.state == RecoveryState.WATCHING and quiet.hang_deadline == now + BACKSTOP and quiet.hang_clock
    assert status.attempts[0].anomaly.kind.value == "hang"


@pytest.mark.asyncio(loop_scope="session")
async def test_keep_alives_move_the_backstop_on_and_a_healthy_job_fires_no_timer(ts_env):
    async with Running(ts_env.client, job_input(Mode.ACT, **policy())) as run:
        start = await ts_env.get_current_time()
        await send(run.handle, started(0).model_copy(update={"at": start}))
        for n in range(6):  # two and a half hours: a keep-alive every 25 minutes
            now = await ts_env.get_current_time()
            await send(run.handle, clock(10 + n, now))
            await ts_env.sleep(timedelta(minutes=25))
        status = await run.handle.query(JobRecoveryWorkflow.status)
        history = await run.handle.fetch_history()
        await run.handle.terminate("test done")
    assert status.state == RecoveryState.WATCHING and status.attempts[0].anomaly is None
    fired = [e for e in history.events if e.event_type == EventType.EVENT_TYPE_TIMER_FIRED]
    tasks = [e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED]
    assert fired == []
    assert len(tasks) <= 2 + 6  # the start, the attempt, one per keep-alive
