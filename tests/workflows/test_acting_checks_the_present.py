"""Acting re-checks the present (pure event path, no server).

- Approved advice is checked, at the moment of acting, against what telemetry reported while the workflow
  waited: a job that completed, was cancelled or moved on to another attempt is never restarted, and the
  advice says it was not executed, and why.
- The restart's own fresh read has the last word (tests/slurm); its answer is reported truthfully: advice is
  executed only when the new attempt carries its exclusions, else the exclusions are recorded as not applied.
- The fail-open release names the attempt the restart replaced, so only a hold on that attempt is lifted.
- A suspended attempt pauses the hang watchdog; on resume the budget starts afresh.
"""

from __future__ import annotations

from datetime import timedelta

from lazarus.models.policy import Mode
from lazarus.models.recovery import AdviceStatus, Approval, AttemptSuspension, ProgressView
from lazarus.models.recovery import RecoveryState as S
from lazarus.models.slurm import JobState, RestartResult
from tests.workflows.harness import T0, ended, job_input, progress, started, xid79_on
from tests.workflows.test_transitions import acting, feed, kinds
from workflows.effects import Answered, ProgressChecked, ReleaseHold, Requeue, Requeued, RequeueFailed, WatchdogFired
from workflows.transitions import watchdog_deadline

ALICE = Approval(generation=1, operator="alice")


def awaiting():
    """Monitor mode: attempt 0 crashed with Xid 79 on node2 and the restart advice awaits approval."""
    state, _ = acting(Mode.MONITOR)
    assert state.state == S.AWAITING_APPROVAL
    return state


def test_an_approval_that_arrives_after_the_job_completed_is_not_executed():
    state, effects = feed(awaiting(), Answered(ALICE, news=(ended(0, JobState.COMPLETED, 0),)))
    advice = state.advice_history[0]
    assert not [e for e in effects if isinstance(e, Requeue)]
    assert advice.status == AdviceStatus.NOT_EXECUTED and advice.decided_by == "alice"
    assert advice.not_executed_reason == "job completed before the approved action"
    state, _ = feed(state, ended(0, JobState.COMPLETED, 0))  # the queued end, applied next
    assert state.state == S.COMPLETED


def test_an_approval_that_arrives_after_the_job_was_cancelled_is_not_executed():
    state, effects = feed(awaiting(), Answered(ALICE, news=(ended(0, JobState.CANCELLED, 0),)))
    assert not [e for e in effects if isinstance(e, Requeue)]
    assert state.advice_history[0].not_executed_reason == "job was cancelled before the approved action"
    state, _ = feed(state, ended(0, JobState.CANCELLED, 0))
    assert state.state == S.STOPPED


def test_an_approval_that_arrives_after_the_job_moved_on_to_another_attempt_is_not_executed():
    news = (ended(0, JobState.REQUEUED, 0), started(1, ("node3", "node4")))
    state, effects = feed(awaiting(), Answered(ALICE, news=news))
    assert not [e for e in effects if isinstance(e, Requeue)] and state.state == S.WATCHING
    assert state.advice_history[0].not_executed_reason == "job moved on to attempt 1 before the approved action"


def test_an_approval_after_the_attempt_failed_acts():
    state, effects = feed(awaiting(), Answered(ALICE, news=(ended(0),)))
    assert state.state == S.ACTING and kinds(effects)[-1] == "Requeue"


def test_a_requeue_with_its_exclusions_on_the_new_attempt_is_executed():
    state, _ = acting()
    state, _ = feed(
        state,
        Requeued(
            RestartResult(
                job_id=state.job_id,
                new_attempt=1,
                excluded_nodes=["node2"],
                state=JobState.PENDING,
                exclusions_applied=True,
            )
        ),
    )
    advice = state.advice_history[0]
    assert advice.status == AdviceStatus.EXECUTED and advice.exclusions_applied is True
    assert state.state == S.VERIFYING


def test_an_attempt_already_requeued_and_still_pending_gets_the_exclusions_and_the_advice_is_executed():
    state, _ = acting()
    state, _ = feed(
        state,
        Requeued(
            RestartResult(
                job_id=state.job_id,
                new_attempt=1,
                excluded_nodes=["node2"],
                already_done=True,
                state=JobState.PENDING,
                exclusions_applied=True,
            )
        ),
    )
    advice, attempt = state.advice_history[0], state.attempts[0]
    assert advice.status == AdviceStatus.EXECUTED and advice.exclusions_applied is True
    assert attempt.outcome.startswith("already requeued before Lazarus acted")


def test_an_attempt_already_running_without_the_exclusions_is_recorded_as_not_applied_never_executed():
    why = "node2 not excluded: attempt 1 had already been requeued and was running on node1,node2 when Lazarus acted"
    state, _ = acting()
    state, _ = feed(
        state,
        Requeued(
            RestartResult(
                job_id=state.job_id,
                new_attempt=1,
                excluded_nodes=[],
                already_done=True,
                state=JobState.RUNNING,
                nodes=["node1", "node2"],
                exclusions_applied=False,
                exclusions_not_applied_reason=why,
            )
        ),
    )
    advice = state.advice_history[0]
    assert advice.status == AdviceStatus.NOT_EXECUTED
    assert advice.exclusions_applied is False and advice.not_applied_reason == why
    assert advice.not_executed_reason == why
    assert state.state == S.VERIFYING  # the new attempt is Slurm's: it is watched like any other


def test_an_older_workers_result_is_judged_by_the_exclusions_it_shows():
    state, _ = acting()
    state, _ = feed(
        state,
        Requeued(
            RestartResult(
                job_id=state.job_id, new_attempt=1, excluded_nodes=[], already_done=True, state=JobState.RUNNING
            )
        ),
    )
    assert state.advice_history[0].status == AdviceStatus.NOT_EXECUTED
    assert state.advice_history[0].exclusions_applied is False


def test_the_fail_open_release_names_the_attempt_the_restart_replaced():
    state, _ = acting()
    state, effects = feed(state, RequeueFailed("Requested operation is presently disabled"))
    release = next(e for e in effects if isinstance(e, ReleaseHold))
    assert release.attempt == 0 and release.job_id == state.job_id


def test_a_suspended_attempt_has_no_hang_watchdog_and_a_resumed_one_gets_a_fresh_budget():
    state, _ = feed(job_input(hang_budget=timedelta(minutes=10)), started(0), progress(0, 10, T0))
    first, _ = watchdog_deadline(state)
    state, _ = feed(state, AttemptSuspension(attempt=0, suspended=True, at=T0 + timedelta(minutes=1)))
    assert watchdog_deadline(state)[0] is None
    resumed = T0 + timedelta(hours=3)
    state, _ = feed(state, AttemptSuspension(attempt=0, suspended=False, at=resumed))
    deadline, _ = watchdog_deadline(state)
    assert deadline == resumed + (first - T0)


def test_a_hang_check_that_finds_the_attempt_suspended_pauses_instead_of_calling_a_hang():
    state, _ = feed(job_input(hang_budget=timedelta(minutes=10)), started(0), progress(0, 10, T0))
    deadline, _ = watchdog_deadline(state)
    state, _ = feed(state, WatchdogFired(), now=deadline)
    state, _ = feed(state, ProgressChecked(0, ProgressView(known=True, suspended=True)), now=deadline)
    assert state.attempts[0].anomaly is None and state.state == S.WATCHING
    assert watchdog_deadline(state)[0] is None


def test_a_hang_after_a_resume_counts_the_silence_from_the_resume():
    state, _ = feed(job_input(hang_budget=timedelta(minutes=10)), started(0), progress(0, 10, T0))
    resumed = T0 + timedelta(hours=3)
    state, _ = feed(
        state,
        AttemptSuspension(attempt=0, suspended=True, at=T0 + timedelta(minutes=1)),
        AttemptSuspension(attempt=0, suspended=False, at=resumed),
    )
    deadline, _ = watchdog_deadline(state)
    state, _ = feed(state, WatchdogFired(), ProgressChecked(0, ProgressView(known=True)), now=deadline)
    assert deadline == resumed + timedelta(minutes=10)
    assert "no training progress for 600 s" in state.attempts[0].anomaly.diagnosis.explanation


def test_a_crash_reported_while_approval_waits_is_not_mistaken_for_the_end_of_the_job():
    state, _ = feed(job_input(Mode.MONITOR), started(0), xid79_on("node2"))
    state, effects = feed(state, Answered(ALICE, news=(ended(0, JobState.NODE_FAIL, 1),)))
    assert kinds(effects)[-1] == "Requeue"
