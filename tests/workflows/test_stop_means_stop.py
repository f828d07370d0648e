"""Stop means stop, on the pure event path: a stop decided for an attempt that has not ended cancels the job
(act mode at once, monitor mode once approved), only the attempt it was decided for, and records why; the
policy's ``on_stop: keep_running`` leaves it running; runs that predate the rule keep the old behaviour."""

from __future__ import annotations

from lazarus.models.policy import Mode, OnStop
from lazarus.models.recovery import AdviceAction, AdviceStatus, Approval, Rejection
from lazarus.models.recovery import RecoveryState as S
from lazarus.models.slurm import CancelResult, JobState
from tests.workflows.harness import T0, app_error, ended, job_input, progress, started
from tests.workflows.test_transitions import feed, kinds
from workflows.effects import (
    Answered,
    AwaitAnswer,
    Cancel,
    CancelFailed,
    Cancelled,
    CheckMode,
    Decide,
    Isolate,
    ModeChecked,
    Requeue,
    Warn,
)
from workflows.patches import STOP_CANCELS
from workflows.transitions import apply


def stopping(mode: Mode = Mode.ACT, **policy):
    """Attempt 0 runs, prints an application error (stop advice) and is still running."""
    return feed(job_input(mode, **policy), started(0), progress(0, 10, T0, checkpoint=10), app_error())


def verified_cancel(job_id: int, attempt: int = 0) -> Cancelled:
    return Cancelled(CancelResult(job_id=job_id, attempt=attempt, state=JobState.CANCELLED, cancelled=True))


def test_act_mode_cancels_a_stopped_job_that_still_runs_and_says_so_in_the_advice():
    state, effects = stopping()
    assert state.state == S.ACTING and kinds(effects)[-1] == "Cancel"
    cancel = effects[-1]
    assert cancel.request.job_id == state.job_id and cancel.request.expected_attempt == 0
    assert cancel.request.reason == state.advice_history[0].reason and cancel.task_queue == state.scheduler_queue
    advice = state.advice_history[0]
    assert advice.action == AdviceAction.STOP and "Lazarus cancels the job" in advice.reason
    assert advice.decided_by == "lazarus (act mode)"
    assert not [e for e in effects if isinstance(e, (Isolate, Requeue))]


def test_a_verified_cancel_stops_the_job_and_records_why_on_the_attempt_and_advice():
    state, _ = stopping()
    state, _ = feed(state, verified_cancel(state.job_id))
    assert state.state == S.STOPPED and state.advice_history[0].status == AdviceStatus.EXECUTED
    assert "application failure" in state.stop_reason and "Lazarus cancelled it" in state.stop_reason
    first = state.attempts[0]
    assert first.end_state == JobState.CANCELLED and first.outcome.startswith("stopped: ")
    assert "left RUNNING/PENDING" in first.outcome


def test_a_cancel_that_finds_the_job_already_cancelled_stops_it_all_the_same():
    state, _ = stopping()
    result = CancelResult(job_id=state.job_id, attempt=0, state=JobState.CANCELLED, already_done=True)
    state, _ = feed(state, Cancelled(result))
    assert state.state == S.STOPPED and "already cancelled when Lazarus acted" in state.stop_reason


def test_an_attempt_that_ended_on_its_own_before_the_cancel_stops_with_nothing_cancelled():
    state, _ = stopping()
    result = CancelResult(
        job_id=state.job_id,
        attempt=0,
        state=JobState.FAILED,
        exit_code=1,
        not_done_reason="attempt 0 had already ended FAILED: nothing to cancel",
    )
    state, _ = feed(state, Cancelled(result))
    assert state.state == S.STOPPED and "nothing to cancel" in state.stop_reason
    assert state.attempts[0].end_state == JobState.FAILED and state.attempts[0].exit_code == 1


def test_an_attempt_that_completed_before_the_cancel_completes_and_the_advice_is_not_executed():
    state, _ = stopping()
    result = CancelResult(
        job_id=state.job_id, attempt=0, state=JobState.COMPLETED, exit_code=0, not_done_reason="ended COMPLETED"
    )
    state, _ = feed(state, Cancelled(result))
    assert state.state == S.COMPLETED and state.advice_history[0].status == AdviceStatus.NOT_EXECUTED


def test_a_job_that_moved_on_to_another_attempt_is_not_cancelled_and_is_watched_again():
    state, _ = stopping()
    result = CancelResult(
        job_id=state.job_id, attempt=1, state=JobState.RUNNING, not_done_reason="job is at attempt 1, not attempt 0"
    )
    state, _ = feed(state, Cancelled(result))
    assert state.state == S.WATCHING
    advice = state.advice_history[0]
    assert advice.status == AdviceStatus.NOT_EXECUTED and "attempt 1" in advice.not_executed_reason
    assert state.attempts[0].outcome.startswith("not cancelled: ")


def test_a_refused_cancel_fails_loudly_saying_the_allocation_may_still_be_held():
    state, _ = stopping()
    state, effects = feed(state, CancelFailed("Access/permission denied"))
    assert state.state == S.FAILED and state.advice_history[0].status == AdviceStatus.FAILED
    assert "may still hold its allocation" in state.stop_reason and any(isinstance(e, Warn) for e in effects)


def test_monitor_mode_stop_advice_says_it_will_cancel_and_waits_for_approval():
    state, effects = stopping(Mode.MONITOR)
    assert state.state == S.AWAITING_APPROVAL and isinstance(effects[-1], AwaitAnswer)
    assert "approving it cancels the job" in state.advice_history[0].reason
    assert not [e for e in effects if isinstance(e, Cancel)]


def test_an_approved_stop_cancels_the_job():
    state, _ = stopping(Mode.MONITOR)
    state, effects = feed(state, Answered(Approval(generation=1, operator="alice")))
    assert state.state == S.ACTING and isinstance(effects[-1], Cancel)
    assert state.advice_history[0].decided_by == "alice"
    state, _ = feed(state, verified_cancel(state.job_id))
    assert state.state == S.STOPPED and state.advice_history[0].status == AdviceStatus.EXECUTED


def test_an_approved_stop_for_a_job_that_moved_on_meanwhile_cancels_nothing():
    state, _ = stopping(Mode.MONITOR)
    state, effects = feed(state, Answered(Approval(generation=1, operator="alice"), news=(started(1),)))
    assert not [e for e in effects if isinstance(e, Cancel)] and state.state == S.WATCHING
    assert state.attempts[0].outcome.startswith("not cancelled: ")


def test_a_rejected_stop_leaves_the_job_running_and_its_end_then_stops():
    state, _ = stopping(Mode.MONITOR)
    state, effects = feed(state, Answered(Rejection(generation=1, operator="bob")))
    assert state.state == S.WATCHING and not [e for e in effects if isinstance(e, Cancel)]
    state, _ = feed(state, ended(0))
    assert state.state == S.STOPPED and "rejected" in state.stop_reason


def test_stop_advice_whose_attempt_ends_before_an_answer_stops_with_nothing_to_cancel():
    state, effects = stopping(Mode.MONITOR)
    assert effects[-1].wake_on_end  # the end of the attempt ends the wait: nothing is left to ask about
    state, effects = feed(state, Answered(None, news=(ended(0),)))
    assert state.state == S.STOPPED and not [e for e in effects if isinstance(e, Cancel)]
    advice = state.advice_history[0]
    assert (
        advice.status == AdviceStatus.NOT_EXECUTED
        and "ended FAILED before anyone approved" in advice.not_executed_reason
    )
    assert "nothing to cancel" in state.stop_reason and "approving it cancels" not in state.stop_reason


def test_stop_advice_whose_attempt_completes_before_an_answer_lets_the_job_complete():
    state, _ = stopping(Mode.MONITOR)
    news = (ended(0, JobState.COMPLETED, 0),)
    state, _ = feed(state, Answered(None, news=news))
    assert state.state == S.WATCHING and state.advice_history[0].status == AdviceStatus.NOT_EXECUTED
    state, _ = feed(state, *news)  # the workflow applies what it heard meanwhile
    assert state.state == S.COMPLETED


def test_act_mode_reads_the_kill_switch_before_cancelling():
    inp = job_input(Mode.ACT).model_copy(update={"ledger_workflow_id": "lazarus-test-ledger"})
    state, effects = feed(inp, started(0), app_error())
    assert state.state == S.SUSPECTED and isinstance(effects[-1], CheckMode)
    state, effects = feed(state, ModeChecked(mode=Mode.MONITOR))
    assert state.state == S.AWAITING_APPROVAL and not [e for e in effects if isinstance(e, Cancel)]
    state, effects = feed(state, Answered(Approval(generation=1, operator="alice")))
    assert isinstance(effects[-1], Cancel)


def test_keep_running_stops_the_workflow_and_leaves_the_job_alone():
    state, effects = stopping(on_stop=OnStop.KEEP_RUNNING)
    assert state.state == S.STOPPED and not [e for e in effects if isinstance(e, Cancel)]
    assert "keeps running" in state.stop_reason and "on_stop: keep_running" in state.stop_reason


def test_a_stop_for_an_attempt_that_already_ended_cancels_nothing():
    state, effects = feed(job_input(), started(0), ended(0, JobState.OUT_OF_MEMORY, 1))
    assert state.advice_history[0].action == AdviceAction.STOP
    assert state.state == S.STOPPED and not [e for e in effects if isinstance(e, Cancel)]
    assert "keeps running" not in state.stop_reason


def test_a_run_that_predates_the_rule_only_marks_the_job_stopped():
    state, _ = feed(job_input(), started(0))
    state, effects = apply(state, app_error(), T0)  # the anomaly is recorded; the workflow is asked to decide
    decide = next(e for e in effects if isinstance(e, Decide))
    state, effects = feed(state, Decide(decide.anomaly, frozenset({STOP_CANCELS})))
    assert state.state == S.STOPPED and not [e for e in effects if isinstance(e, Cancel)]
    assert state.stop_reason == state.advice_history[0].reason
