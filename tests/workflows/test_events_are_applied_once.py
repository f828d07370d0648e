"""Telemetry delivers events at least once; the pure event path applies each event id once, remembering a
bounded window of ids that continue-as-new carries."""

from __future__ import annotations

from datetime import timedelta

from lazarus.models.recovery import MAX_APPLIED_EVENT_IDS, JobRecoveryInput
from lazarus.models.recovery import RecoveryState as S
from lazarus.models.slurm import JobState
from tests.workflows.harness import T0, ended, job_input, progress, started, xid79_on
from tests.workflows.test_transitions import feed, kinds
from workflows.transitions import apply


def test_a_redelivered_event_changes_nothing():
    state, _ = feed(job_input(), started(0).model_copy(update={"id": "7/0/attempt_started/0"}))
    digest = progress(0, 10, T0).model_copy(update={"id": "7/0/progress/a"})
    state, _ = feed(state, digest)
    again, effects = apply(state, digest.model_copy(update={"step": 99}), T0 + timedelta(seconds=5))
    assert effects == [] and again == state and again.attempts[0].last_step == 10


def test_a_redelivered_anomaly_decides_once():
    state, _ = feed(job_input(), started(0), progress(0, 10, T0, checkpoint=10))
    anomaly = xid79_on("node2").model_copy(update={"id": "7/0/anomaly/b"})
    state, effects = apply(state, anomaly, T0)
    assert kinds(effects)[-1] == "Decide"
    _, effects = apply(state, anomaly, T0)
    assert effects == []


def test_a_job_end_delivered_twice_completes_the_job_once():
    state, _ = feed(job_input(), started(0))
    end = ended(0, JobState.COMPLETED, 0).model_copy(update={"id": "7/0/attempt_ended/0"})
    state, _ = feed(state, end)
    assert state.state == S.COMPLETED and state.applied_event_ids[-1] == "7/0/attempt_ended/0"
    assert apply(state, end, T0).effects == []


def test_events_without_an_id_are_always_applied():
    state, _ = feed(job_input(), started(0), progress(0, 10, T0))
    state, _ = feed(state, progress(0, 11, T0 + timedelta(seconds=1)))
    assert state.attempts[0].last_step == 11 and state.applied_event_ids == []


def test_the_window_of_ids_is_bounded_and_carried_across_continue_as_new():
    state, _ = feed(job_input(), started(0))
    for step in range(MAX_APPLIED_EVENT_IDS + 10):
        state, _ = feed(state, progress(0, step, T0).model_copy(update={"id": f"7/0/progress/{step}"}))
    assert len(state.applied_event_ids) == MAX_APPLIED_EVENT_IDS
    assert state.applied_event_ids[-1] == f"7/0/progress/{MAX_APPLIED_EVENT_IDS + 9}"
    carried = JobRecoveryInput.model_validate_json(state.model_dump_json())  # continue-as-new's input
    assert carried.applied_event_ids == state.applied_event_ids
