"""Three milestones, measured (issue 12): for every attempt the job's history says when it was requeued and
verified, when it was running, when training progress was restored (its first progress line, with the
checkpoint it resumed from and the steps lost) and when it completed. Running is not training. Pure: the
event path and the milestone rows, no server."""

from __future__ import annotations

from datetime import timedelta

from lazarus.models import metrics as m
from lazarus.models import milestones
from lazarus.models.recovery import AttemptStarted, JobRecoveryInput, ProgressDigest, ProgressView
from lazarus.models.recovery import RecoveryState as S
from lazarus.models.slurm import JobState, RestartResult
from tests.workflows.harness import T0, ended, job_input, progress, started, xid79_on
from workflows.effects import Details, ProgressChecked, Requeued
from workflows.metering import Fact, job_facts
from workflows.transitions import apply

FAULT = T0  # the harness's Xid 79 line is seen at T0


def at(seconds: float):
    return T0 + timedelta(seconds=seconds)


def feed(state: JobRecoveryInput, *inputs, now=T0):
    """Apply ``inputs`` as the workflow does (a ``Decide`` effect is applied at once); the state, the effects
    and the metric facts of every step."""
    effects, facts, pending = [], [], list(inputs)
    while pending:
        before = state
        state, more = apply(state, pending.pop(0), now)
        effects += more
        facts += job_facts(before, state)
        pending[:0] = [e for e in more if type(e).__name__ == "Decide"]
    return state, effects, facts


def first_progress(attempt: int, first_step: int, first_at, step: int, last_at, checkpoint=None) -> ProgressDigest:
    """A digest that, being throttled, arrives after several lines: the newest step, and the first line."""
    return ProgressDigest(
        attempt=attempt,
        step=step,
        last_progress_at=last_at,
        checkpoint=checkpoint,
        first_step=first_step,
        first_progress_at=first_at,
    )


def crashed_at_step_47_after_checkpoint_40():
    """Attempt 0 trains to step 47 (checkpoint 40), crashes with Xid 79 on node2; Lazarus requeues it at +2 s."""
    state, _, _ = feed(
        job_input(),
        started(0),
        progress(0, 47, at(-1), checkpoint=40),
        xid79_on("node2"),
    )
    state, _, facts = feed(
        state,
        Requeued(RestartResult(job_id=state.job_id, new_attempt=1, excluded_nodes=["node2"], state=JobState.PENDING)),
        now=at(2),
    )
    return state, facts


def test_a_verified_requeue_shows_the_next_attempt_waiting_with_its_fault_and_requeue_times():
    state, facts = crashed_at_step_47_after_checkpoint_40()
    assert state.state == S.VERIFYING
    row = milestones.of(state.attempts)[-1]
    assert (row.attempt, row.fault_at, row.fault, row.requeued_at) == (1, FAULT, "nvrm_xid_79", at(2))
    assert row.running_at is None and row.progress_restored_at is None
    assert Fact(m.RECOVERY_MILESTONES, (("milestone", "requeued"),), 2.0) in facts


def test_running_is_not_training_until_the_first_progress_line():
    state, _ = crashed_at_step_47_after_checkpoint_40()
    state, _, facts = feed(state, AttemptStarted(attempt=1, nodes=["node1", "node3"], at=at(5)), now=at(6))
    row = milestones.of(state.attempts)[-1]
    assert row.running_at == at(5) and row.progress_restored_at is None and row.resumed_from is None
    assert Fact(m.RECOVERY_MILESTONES, (("milestone", "running"),), 5.0) in facts
    assert not [f for f in facts if ("milestone", "progress_restored") in f.labels]


def test_progress_restored_is_the_first_progress_line_with_the_checkpoint_resumed_from_and_the_steps_lost():
    state, _ = crashed_at_step_47_after_checkpoint_40()
    state, _, _ = feed(state, AttemptStarted(attempt=1, nodes=["node1", "node3"], at=at(5)), now=at(6))
    state, effects, facts = feed(state, first_progress(1, 41, at(9), 44, at(12)), now=at(13))
    attempt = state.attempts[1]
    assert (attempt.first_step, attempt.first_progress_at) == (41, at(9))  # the first line, not the newest
    assert (attempt.resumed_from, attempt.steps_lost) == (40, 7)  # last step seen 47 - checkpoint 40
    assert (
        Details("watching: attempt 1 training again at 12:00:09 (step 41): resumed from checkpoint 40, 7 steps lost")
        in effects
    )
    assert Fact(m.RECOVERY_MILESTONES, (("milestone", "progress_restored"),), 9.0) in facts
    assert Fact(m.STEPS_LOST, (), 7.0) in facts
    state, _, facts = feed(state, first_progress(1, 41, at(9), 50, at(20)), now=at(21))
    assert state.attempts[1].first_progress_at == at(9) and not facts  # recorded once, counted once


def test_a_completed_attempt_gives_the_milestones_in_order():
    state, _ = crashed_at_step_47_after_checkpoint_40()
    state, _, _ = feed(state, AttemptStarted(attempt=1, nodes=["node1", "node3"], at=at(5)), now=at(6))
    state, _, _ = feed(state, first_progress(1, 41, at(9), 41, at(9)), now=at(10))
    done = ended(1, JobState.COMPLETED, 0).model_copy(update={"at": at(30)})
    state, _, facts = feed(state, done, now=at(31))
    assert state.state == S.COMPLETED
    row = milestones.of(state.attempts)[1]
    assert row.seconds == {"requeued": 2.0, "running": 5.0, "progress_restored": 9.0, "completed": 30.0}
    assert Fact(m.RECOVERY_MILESTONES, (("milestone", "completed"),), 30.0) in facts


def test_the_first_attempt_records_when_training_started_and_has_no_fault():
    state, _, facts = feed(job_input(), started(0), first_progress(0, 1, at(3), 5, at(8)))
    row = milestones.of(state.attempts)[0]
    assert (row.fault_at, row.running_at, row.progress_restored_at, row.first_step) == (None, T0, at(3), 1)
    assert row.resumed_from is None and row.steps_lost is None
    assert not [f for f in facts if f.spec in (m.RECOVERY_MILESTONES, m.STEPS_LOST)]


def test_a_job_that_started_over_resumed_from_step_0_and_lost_every_step():
    state, _ = crashed_at_step_47_after_checkpoint_40()
    state, _, _ = feed(
        state,
        AttemptStarted(attempt=1, nodes=["node1", "node3"], at=at(5)),
        first_progress(1, 1, at(9), 3, at(10)),
        now=at(11),
    )
    assert (state.attempts[1].resumed_from, state.attempts[1].steps_lost) == (0, 47)


def test_telemetry_older_than_the_milestones_gives_its_first_digest_as_the_first_progress():
    state, _ = crashed_at_step_47_after_checkpoint_40()
    state, _, _ = feed(
        state, AttemptStarted(attempt=1, nodes=["node1", "node3"], at=at(5)), progress(1, 44, at(12)), now=at(13)
    )
    attempt = state.attempts[1]
    assert (attempt.first_step, attempt.first_progress_at, attempt.resumed_from, attempt.steps_lost) == (
        44,
        at(12),
        40,
        7,
    )


def test_progress_the_hang_watchdog_fetched_also_restores_progress():
    state, _ = crashed_at_step_47_after_checkpoint_40()
    state, _, _ = feed(state, AttemptStarted(attempt=1, nodes=["node1", "node3"], at=at(5)), now=at(6))
    view = ProgressView(
        known=True, step=45, last_progress_at=at(20), first_step=42, first_progress_at=at(15), observed_at=at(20)
    )
    state, _, _ = feed(state, ProgressChecked(1, view), now=at(21))
    attempt = state.attempts[1]
    assert (attempt.first_step, attempt.first_progress_at, attempt.resumed_from, attempt.steps_lost) == (
        42,
        at(15),
        40,
        7,
    )
