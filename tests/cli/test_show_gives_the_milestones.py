"""`lazarus show` gives each attempt's milestones: fault → requeued → running → progress restored → completed,
with the seconds since the fault, the checkpoint resumed from and the steps lost; a worker older than the
milestones returns none, and the CLI reads them from the attempts itself (`show --json` as well)."""

from __future__ import annotations

from lazarus.cli.timeline import render_timeline, with_milestones
from lazarus.models.recovery import AttemptStarted, JobStatus
from lazarus.models.slurm import JobState
from tests.workflows.harness import ended
from tests.workflows.test_milestones import at, crashed_at_step_47_after_checkpoint_40, feed, first_progress


def status_of(state) -> JobStatus:
    """What an older worker's status query returned: attempts, no milestone rows."""
    return JobStatus(
        cluster="c",
        job_id=state.job_id,
        state=state.state,
        mode=state.cluster_mode,
        policy_name="default",
        attempts=state.attempts,
        advice=state.advice_history[-1],
        advice_history=state.advice_history,
    )


def recovered():
    state, _ = crashed_at_step_47_after_checkpoint_40()
    state, _, _ = feed(state, AttemptStarted(attempt=1, nodes=["node1", "node3"], at=at(5)), now=at(6))
    state, _, _ = feed(state, first_progress(1, 41, at(9), 41, at(9)), now=at(10))
    state, _, _ = feed(state, ended(1, JobState.COMPLETED, 0).model_copy(update={"at": at(30)}), now=at(31))
    return state


def test_a_recovered_attempt_shows_its_milestones_in_order_with_seconds_since_the_fault():
    out = render_timeline(status_of(recovered()), "link")
    assert (
        "    milestones: fault 12:00:00 (nvrm_xid_79) -> requeued 12:00:02 (+2.0 s) -> running 12:00:05 (+5.0 s) "
        "-> progress restored 12:00:09 (+9.0 s) at step 41 (resumed from checkpoint 40, 7 steps lost) "
        "-> completed 12:00:30 (+30.0 s)"
    ) in out


def test_a_requeued_attempt_not_yet_running_is_shown_waiting():
    state, _ = crashed_at_step_47_after_checkpoint_40()
    out = render_timeline(status_of(state), "link")
    assert "  attempt 1: requeued, not yet running\n    milestones: fault 12:00:00 (nvrm_xid_79) -> requeued" in out


def test_milestones_missing_from_an_older_worker_are_read_from_the_attempts():
    status = with_milestones(status_of(recovered()))
    row = status.milestones[1]
    assert (row.resumed_from, row.steps_lost, row.seconds["completed"]) == (40, 7, 30.0)


def test_an_attempt_that_failed_says_how_it_ended_not_a_completion_it_never_reached():
    status = status_of(recovered())
    status.attempts[0] = status.attempts[0].model_copy(update={"end_state": JobState.FAILED})
    out = render_timeline(status, "link")
    first = next(line for line in out.splitlines() if line.startswith("    milestones:"))
    assert first.endswith("-> ended FAILED") and "completed" not in first, first
