"""A job whose progress reached its declared total steps is finishing, not hung.

The chaos soak's last violation: a job printed its last step (30 of 30), then Slurm kept it RUNNING while srun
waited on a restarted slurmctld; the hang watchdog took the silence for a hang and act mode requeued a job that
had finished. Its progress lines said how many steps it runs (``total_steps=``); telemetry carries that total
to the workflow, and a hang call for an attempt at its last step is advice ``none``: Lazarus leaves it to Slurm
and watches for its end. Runs started before the rule keep it (patch ``finishing-is-not-hung``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lazarus.models.diagnosis import FailureKind
from lazarus.models.policy import Mode, Policy
from lazarus.models.recovery import AdviceAction, Anomaly, Attempt, JobRecoveryInput, ProgressView, RecoveryState
from lazarus.models.slurm import JobState
from tests.workflows.harness import FakeScheduler, Running, ended, job_input, progress, send, started
from tests.workflows.test_monitor_mode_approvals import wait_state
from workflows.decision import decide_advice, hang_diagnosis
from workflows.effects import CheckProgress, ProgressChecked, Requeue, WatchdogFired
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.patches import FINISHING_IS_NOT_HUNG
from workflows.transitions import apply, watchdog_deadline

T = datetime(2026, 1, 1, tzinfo=UTC)


def hang(attempt: Attempt) -> Anomaly:
    return Anomaly(attempt=0, kind=FailureKind.HANG, diagnosis=hang_diagnosis(attempt, 16), observed_at=T)


def at_step(step: int, total: int | None) -> Attempt:
    return Attempt(index=0, nodes=["node1"], started_at=T, last_step=step, total_steps=total, last_progress_at=T)


# ---- the decision (pure) -------------------------------------------------------------------------------------


def test_a_hang_at_the_declared_last_step_is_advice_none_and_says_why():
    attempt = at_step(30, 30)
    decision = decide_advice(hang(attempt), [attempt], Policy())
    assert decision.action == AdviceAction.NONE
    assert "training reached its last step (30 of 30)" in decision.reason
    assert "ending, not hung" in decision.reason and "leaves it to Slurm" in decision.reason


def test_a_hang_short_of_the_declared_total_is_still_a_hang():
    attempt = at_step(29, 30)
    assert decide_advice(hang(attempt), [attempt], Policy()).action == AdviceAction.RESTART


def test_a_hang_without_a_declared_total_is_still_a_hang():
    attempt = at_step(30, None)
    assert decide_advice(hang(attempt), [attempt], Policy()).action == AdviceAction.RESTART


def test_a_run_from_before_the_rule_restarts_a_finished_attempt_as_it_always_did():
    attempt = at_step(30, 30)
    old = decide_advice(hang(attempt), [attempt], Policy(), frozenset({FINISHING_IS_NOT_HUNG}))
    assert old.action == AdviceAction.RESTART


def test_a_finished_attempt_at_the_attempt_cap_is_not_stopped_either():
    attempt = at_step(30, 30).model_copy(update={"index": 4})
    assert decide_advice(hang(attempt), [attempt], Policy(max_attempts=5)).action == AdviceAction.NONE


# ---- the event path (pure) -----------------------------------------------------------------------------------


def watching() -> JobRecoveryInput:
    state = JobRecoveryInput(cluster="c", job_id=985, cluster_mode=Mode.ACT, state=RecoveryState.WATCHING)
    state, _ = apply(state, started(0).model_copy(update={"at": T}), T)
    last = progress(0, 30, T, checkpoint=30).model_copy(update={"total_steps": 30})
    state, _ = apply(state, last, T)
    return state


def test_the_progress_digest_carries_the_total_to_the_attempt():
    assert watching().attempts[0].total_steps == 30


def test_a_silent_finished_attempt_is_recorded_as_ending_and_not_requeued_and_the_watchdog_stops():
    state = watching()
    later = T + timedelta(minutes=11)
    state, effects = apply(state, WatchdogFired(), later)
    assert [type(e) for e in effects] == [CheckProgress]
    state, effects = apply(state, ProgressChecked(attempt=0, view=ProgressView(known=True, step=30)), later)
    state, decided = apply(state, effects[-1], later)  # the Decide the workflow hands straight back
    assert not [e for e in decided if isinstance(e, Requeue)]
    [advice] = state.advice_history
    assert advice.action == AdviceAction.NONE and "30 of 30" in advice.reason
    assert state.state == RecoveryState.WATCHING and state.attempts[0].anomaly.kind == FailureKind.HANG
    assert watchdog_deadline(state) == (None, None)  # no second hang call: its end is what it waits for
    state, _ = apply(state, ended(0, JobState.COMPLETED, 0), later + timedelta(seconds=16))
    assert state.state == RecoveryState.COMPLETED


def test_the_total_may_arrive_with_the_fresh_view_the_watchdog_asks_for():
    state = JobRecoveryInput(cluster="c", job_id=985, cluster_mode=Mode.ACT, state=RecoveryState.WATCHING)
    state, _ = apply(state, started(0).model_copy(update={"at": T}), T)
    state, _ = apply(state, progress(0, 30, T), T)
    view = ProgressView(known=True, step=30, last_progress_at=T, total_steps=30)
    state, effects = apply(state, ProgressChecked(attempt=0, view=view), T + timedelta(minutes=11))
    state, _ = apply(state, effects[-1], T + timedelta(minutes=11))
    assert state.attempts[0].total_steps == 30 and state.advice_history[0].action == AdviceAction.NONE


# ---- the workflow, under time skipping -----------------------------------------------------------------------


@pytest.mark.asyncio(loop_scope="session")
async def test_a_job_silent_after_its_last_step_is_left_to_slurm_and_completes(ts_env):
    fake = FakeScheduler(progress=ProgressView(known=True, step=30, total_steps=30))
    inp = job_input(Mode.ACT, hang_budget=timedelta(minutes=10), startup_grace=timedelta(minutes=5))
    async with Running(ts_env.client, inp, fake) as run:
        now = await ts_env.get_current_time()
        last = progress(0, 30, now, checkpoint=30).model_copy(update={"total_steps": 30})
        await send(run.handle, started(0).model_copy(update={"at": now}), last)
        await ts_env.sleep(timedelta(minutes=40))  # the budget four times over: one hang call, no more
        status = await run.handle.query(JobRecoveryWorkflow.status)
        await send(run.handle, ended(0, JobState.COMPLETED, 0))
        await wait_state(ts_env, run.handle, RecoveryState.COMPLETED)
    assert status.state == RecoveryState.WATCHING and run.fake.restarts == []
    [advice] = status.advice_history
    assert advice.action == AdviceAction.NONE and "training reached its last step (30 of 30)" in advice.reason
    assert status.attempts[0].anomaly.source == "hang-watchdog"
