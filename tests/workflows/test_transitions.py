"""The pure event path, one rule per test (no server): what each input does to the recovery state, and
which effects the workflow is asked to perform. Together the tests take every edge of the transition table
(the last test checks that)."""

from __future__ import annotations

import inspect
import sys
from datetime import timedelta

from lazarus.models.policy import Mode
from lazarus.models.recovery import (
    AdviceAction,
    AdviceStatus,
    Approval,
    JobRecoveryInput,
    ModeChange,
    ProgressView,
    Rejection,
)
from lazarus.models.recovery import (
    RecoveryState as S,
)
from lazarus.models.slurm import JobState, RestartResult
from tests.workflows.harness import T0, app_error, ended, job_input, progress, started, xid79_on
from tests.workflows.test_straggler_advice import straggler
from workflows.effects import (
    Answered,
    AnswerRefused,
    AwaitAnswer,
    CheckProgress,
    Decide,
    DecisionExpired,
    Details,
    DrainFailed,
    HoldReleased,
    Isolate,
    ProgressChecked,
    ReleaseHold,
    Requeue,
    Requeued,
    RequeueFailed,
    SearchAttributes,
    WatchdogFired,
    WorkflowStarted,
)
from workflows.phases import ALLOWED_TRANSITIONS
from workflows.transitions import answer_refusal, apply, hang_budget_now, watchdog_deadline

TAKEN: set[tuple[S, S]] = set()


def feed(state: JobRecoveryInput, *inputs, now=T0):
    """Apply ``inputs`` in order as the workflow does (a ``Decide`` effect is handed straight back);
    return the final state and every effect, and record the edges taken."""
    effects: list = []
    pending = list(inputs)
    while pending:
        before = state.state
        state, more = apply(state, pending.pop(0), now)
        effects += more
        for effect in more:
            if isinstance(effect, SearchAttributes) and effect.state is not None:
                if effect.state != before:
                    TAKEN.add((before, effect.state))
                before = effect.state
        pending[:0] = [e for e in more if isinstance(e, Decide)]
    return state, effects


def kinds(effects) -> list[str]:
    return [type(e).__name__ for e in effects]


def acting(mode: Mode = Mode.ACT, **policy):
    """A job whose attempt 0 crashed with Xid 79 on node2, up to the restart (act) or the question (monitor)."""
    return feed(job_input(mode, **policy), started(0), progress(0, 10, T0, checkpoint=10), xid79_on("node2"))


def restarted():
    state, _ = acting()
    return feed(
        state,
        Requeued(RestartResult(job_id=state.job_id, new_attempt=1, excluded_nodes=["node2"], state=JobState.PENDING)),
    )


def test_apply_never_changes_the_state_it_is_given():
    state = job_input(Mode.ACT)
    before = state.model_dump()
    new, _ = apply(state, started(0), T0)
    assert state.model_dump() == before and new.attempts[0].nodes == ["node1", "node2"]


def test_an_invalid_opt_in_is_ignored():
    state, _effects = feed(job_input().model_copy(update={"opt_in_error": "bad comment"}), WorkflowStarted())
    assert state.state == S.IGNORED and state.stop_reason == "bad comment"


def test_a_hardware_crash_in_act_mode_isolates_then_requeues_excluding_the_node():
    state, effects = acting()
    assert state.state == S.ACTING and state.lazarus_hold
    assert kinds(effects)[-2:] == ["Isolate", "Requeue"]
    isolate, requeue = effects[-2:]
    assert isolate.drain.nodes == ["node2"] and [i.node for i in isolate.implications] == ["node2"]
    assert requeue.request.exclude_nodes == ["node2"] and requeue.request.expected_attempt == 0
    assert SearchAttributes(signature="nvrm_xid_79", nodes=("node2",)) in effects


def test_a_verified_requeue_waits_for_the_next_attempt_which_then_completes():
    state, _ = restarted()
    assert state.state == S.VERIFYING and not state.lazarus_hold
    assert state.verify_deadline == T0 + state.policy.attempt_start_timeout
    state, _ = feed(state, started(1, ("node1", "node3"), ("node2",)))
    assert state.state == S.WATCHING
    state, _ = feed(state, ended(1, JobState.COMPLETED, 0))
    assert state.state == S.COMPLETED and state.advice_history[0].status == AdviceStatus.EXECUTED


def test_a_refused_restart_releases_the_job_then_fails():
    state, _ = acting()
    state, effects = feed(state, RequeueFailed("Requested operation is presently disabled"))
    assert kinds(effects)[0] == "ReleaseHold" and state.state == S.FAILED
    assert state.stop_reason == "restart failed: Requested operation is presently disabled"


def test_a_restart_whose_fresh_read_finds_the_job_completed_leaves_it_alone_and_completes():
    state, _ = acting()
    state, effects = feed(
        state,
        Requeued(
            RestartResult(
                job_id=state.job_id,
                new_attempt=0,
                excluded_nodes=[],
                state=JobState.COMPLETED,
                exit_code=0,
                not_done_reason="job completed in attempt 0",
            )
        ),
    )
    assert state.state == S.COMPLETED and state.advice_history[0].status == AdviceStatus.NOT_EXECUTED
    assert not state.lazarus_hold and not [e for e in effects if isinstance(e, ReleaseHold)]


def test_a_restart_whose_fresh_read_finds_the_job_cancelled_leaves_it_alone_and_stops():
    state, _ = acting()
    state, _ = feed(
        state,
        Requeued(
            RestartResult(
                job_id=state.job_id,
                new_attempt=0,
                excluded_nodes=[],
                state=JobState.CANCELLED,
                not_done_reason="job was cancelled",
            )
        ),
    )
    assert state.state == S.STOPPED
    assert state.advice_history[0].not_executed_reason == "job was cancelled before the action"


def test_a_failed_drain_is_noted_and_the_restart_goes_on():
    state, _ = acting()
    state, _effects = feed(state, DrainFailed("Access/permission denied"))
    assert state.state == S.ACTING and state.advice_history[0].comment == "drain failed: Access/permission denied"


def test_an_application_error_stops_without_requeueing_or_excluding():
    state, effects = feed(job_input(), started(0), app_error(), ended(0))
    assert not [e for e in effects if isinstance(e, (Isolate, Requeue))]
    assert state.advice_history[0].action == AdviceAction.STOP  # and cancels: tests/workflows/test_stop_means_stop.py


def test_a_straggler_is_advice_only_and_the_job_keeps_being_watched():
    state, _ = feed(job_input(), started(0), straggler("node1"))
    assert state.state == S.WATCHING and state.advice_history[0].action == AdviceAction.NONE


def test_monitor_mode_asks_an_operator_and_an_approval_acts():
    state, effects = acting(Mode.MONITOR)
    assert state.state == S.AWAITING_APPROVAL and effects[-1] == AwaitAnswer(1, 0, state.policy.decision_timeout)
    state, effects = feed(state, Answered(Approval(generation=1, operator="alice")))
    assert state.state == S.ACTING and state.advice_history[0].decided_by == "alice"


def test_a_rejection_while_the_job_runs_returns_to_watching_and_its_end_then_stops():
    state, _ = acting(Mode.MONITOR)
    state, _ = feed(state, Answered(Rejection(generation=1, operator="bob")))
    assert state.state == S.WATCHING and state.advice_history[0].status == AdviceStatus.REJECTED
    assert watchdog_deadline(state) == (None, None)  # the operator owns it now: no second hang call
    state, _ = feed(state, ended(0))
    assert state.state == S.STOPPED and "rejected" in state.stop_reason


def test_expired_advice_after_the_job_ended_stops_and_releases_nothing_lazarus_did_not_hold():
    state, _ = feed(job_input(Mode.MONITOR), started(0), xid79_on("node2"), ended(0))
    state, effects = feed(state, DecisionExpired())
    assert state.state == S.STOPPED and "expired" in state.stop_reason
    assert not [e for e in effects if isinstance(e, ReleaseHold)]


def test_advice_superseded_by_a_new_attempt_returns_to_watching():
    state, _ = acting(Mode.MONITOR)
    state, _ = feed(state, Answered(None))
    assert state.state == S.WATCHING and state.advice_history[0].status == AdviceStatus.SUPERSEDED


def test_a_cancelled_job_stops():
    state, _ = feed(job_input(), started(0), ended(0, JobState.CANCELLED, 0))
    assert state.state == S.STOPPED and state.stop_reason == "the job was cancelled outside Lazarus"


def test_a_requeued_attempt_that_fails_before_starting_is_decided_again():
    state, _ = restarted()
    state, _effects = feed(state, ended(1, JobState.NODE_FAIL, 1))
    assert state.attempts[1].anomaly.source == "scheduler" and state.state == S.ACTING


def test_a_requeued_attempt_cancelled_while_pending_stops():
    state, _ = restarted()
    state, _ = feed(state, ended(1, JobState.CANCELLED, 0))
    assert state.state == S.STOPPED


def test_a_very_short_requeued_attempt_completes():
    state, _ = restarted()
    state, _ = feed(state, ended(1, JobState.COMPLETED, 0))
    assert state.state == S.COMPLETED


def test_the_hang_watchdog_confirms_with_telemetry_before_calling_a_hang():
    state, _ = feed(job_input(hang_budget=timedelta(minutes=10)), started(0), progress(0, 10, T0))
    deadline, summary = watchdog_deadline(state)
    assert summary == "hang watchdog (attempt 0)" and deadline is not None
    state, effects = feed(state, WatchdogFired(), now=deadline)
    assert kinds(effects) == ["CheckProgress"] and isinstance(effects[0], CheckProgress)
    moved, _ = feed(
        state, ProgressChecked(0, ProgressView(known=True, step=11, last_progress_at=deadline)), now=deadline
    )
    assert moved.state == S.WATCHING and moved.attempts[0].anomaly is None
    hung, effects = feed(state, ProgressChecked(0, ProgressView(known=True)), now=deadline)
    assert hung.attempts[0].anomaly.source == "hang-watchdog" and hung.state == S.ACTING
    assert hung.advice_history[0].exclude_nodes == []


def test_an_attempt_that_does_not_start_in_time_is_reported_and_released_only_if_lazarus_holds_it():
    state, _ = restarted()
    later = state.verify_deadline
    state, effects = feed(state, WatchdogFired(), now=later)
    assert "had not started after" in state.attempts[0].outcome and state.state == S.VERIFYING
    assert state.verify_deadline == later + state.policy.attempt_start_timeout
    assert not [e for e in effects if isinstance(e, ReleaseHold)]
    held, effects = feed(state.model_copy(update={"lazarus_hold": True}), WatchdogFired(), now=later)
    assert kinds(effects)[-1] == "ReleaseHold"
    held, _ = feed(held, HoldReleased())
    assert not held.lazarus_hold


def test_answers_are_refused_unless_they_name_the_advice_awaiting_approval():
    state, _ = acting(Mode.MONITOR)
    assert answer_refusal(state, 1, answered=False) is None
    assert "stale advice generation 2" in answer_refusal(state, 2, answered=False)
    assert "already been answered" in answer_refusal(state, 1, answered=True)
    assert "no advice is awaiting approval" in answer_refusal(job_input(), 1, answered=False)


def test_a_refused_answer_by_signal_is_recorded_logged_and_shown_and_changes_nothing_else():
    state, _ = acting(Mode.MONITOR)
    reason = answer_refusal(state, 5, answered=False)
    new, effects = feed(state, AnswerRefused(Approval(generation=5, operator="eve"), reason), now=T0)
    [refused] = new.refused_answers
    assert (refused.kind, refused.generation, refused.operator, refused.reason, refused.at) == (
        "approve",
        5,
        "eve",
        reason,
        T0,
    )
    assert kinds(effects) == ["Warn", "Details"] and "stale advice generation 5" in effects[1].text
    assert effects[1] == Details(f"awaiting-approval; {refused.describe()}")
    assert new.model_copy(update={"refused_answers": []}) == state  # the advice still waits for its answer


def test_only_the_newest_refused_answers_are_kept():
    state = job_input()
    for generation in range(1, 15):
        state, _ = feed(state, AnswerRefused(Rejection(generation=generation, operator="bob"), "no advice"))
    assert [r.generation for r in state.refused_answers] == list(range(5, 15))
    assert {r.kind for r in state.refused_answers} == {"reject"}


def test_the_hang_budget_in_force_says_its_phase_and_whether_telemetry_learned_it():
    state, _ = feed(job_input(startup_grace=timedelta(minutes=10)), started(0))
    budget = hang_budget_now(state)
    assert (budget.budget, budget.phase.value, budget.source) == (timedelta(minutes=10), "startup", "policy")
    digest = progress(0, 3, T0 + timedelta(seconds=30)).model_copy(update={"hang_budget": timedelta(minutes=3)})
    state, _ = feed(state, digest)
    budget = hang_budget_now(state)
    assert (budget.budget, budget.phase.value, budget.source) == (timedelta(minutes=3), "training", "telemetry")
    assert watchdog_deadline(state)[0] == T0 + timedelta(seconds=30) + budget.budget
    state, _ = feed(state, ended(0, JobState.COMPLETED, 0))
    assert hang_budget_now(state) is None


def test_the_last_digest_sent_with_the_attempt_end_is_what_a_completed_attempt_shows():
    state, _ = feed(job_input(), started(0), progress(0, 21, T0))
    state, _ = feed(state, progress(0, 25, T0 + timedelta(seconds=4), checkpoint=25), ended(0, JobState.COMPLETED, 0))
    attempt = state.attempts[0]
    assert state.state == S.COMPLETED
    assert (attempt.last_step, attempt.last_checkpoint, attempt.last_progress_at) == (25, 25, T0 + timedelta(seconds=4))


def test_the_kill_switch_clears_a_jobs_own_mode_and_is_published():
    state = job_input(Mode.ACT).model_copy(update={"job_mode": Mode.ACT})
    state, effects = feed(state, ModeChange(mode=Mode.MONITOR, scope="cluster"))
    assert state.job_mode is None and effects == [SearchAttributes(mode=Mode.MONITOR)]


def test_every_edge_of_the_transition_table_is_taken_by_a_test():
    from tests.workflows import test_stop_means_stop  # the stop's cancel: its own specification

    TAKEN.clear()
    for module in (sys.modules[__name__], test_stop_means_stop):
        for name, test in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("test_") and test is not test_every_edge_of_the_transition_table_is_taken_by_a_test:
                test()
    assert {(a, b) for a, targets in ALLOWED_TRANSITIONS.items() for b in targets} == TAKEN
