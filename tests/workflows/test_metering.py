"""The workflows' metrics are facts read from the event path: each step of a job's recovery counts once, by
bounded labels, and the latencies measure what the design promises (docs/metrics.md)."""

from __future__ import annotations

from datetime import datetime, timedelta

from lazarus.models import metrics as m
from lazarus.models.diagnosis import Category, Diagnosis, FailureKind, RetryAdvice
from lazarus.models.policy import Mode
from lazarus.models.recovery import (
    Anomaly,
    AnomalyDetected,
    Approval,
    AttemptStarted,
    JobRecoveryInput,
    ProgressView,
    Rejection,
)
from lazarus.models.slurm import CancelResult, JobState, RestartResult
from tests.workflows.harness import T0, app_error, ended, job_input, progress, started, xid79_on
from workflows.effects import (
    Answered,
    Cancelled,
    Decide,
    DecisionExpired,
    Input,
    ProgressChecked,
    Requeued,
    RequeueFailed,
    WatchdogFired,
)
from workflows.metering import Fact, job_facts
from workflows.transitions import apply


class Story:
    """The pure event path, as the workflow drives it (a ``Decide`` effect is applied at once), with the
    facts of every step."""

    def __init__(self, state: JobRecoveryInput) -> None:
        self.state, self.facts = state, []

    def __call__(self, *inputs: Input, at: datetime = T0) -> Story:
        for event in inputs:
            queue = [event]
            while queue:
                before = self.state
                self.state, effects = apply(self.state, queue.pop(0), at)
                self.facts += job_facts(before, self.state)
                queue += [e for e in effects if isinstance(e, Decide)]
        return self

    def counted(self, spec: m.MetricSpec) -> list[dict[str, str]]:
        return [dict(f.labels) for f in self.facts if f.spec == spec]

    def observed(self, spec: m.MetricSpec) -> list[tuple[dict[str, str], float]]:
        return [(dict(f.labels), f.value) for f in self.facts if f.spec == spec]


def requeued(attempt: int = 0) -> Requeued:
    return Requeued(RestartResult(job_id=1, new_attempt=attempt + 1, excluded_nodes=["node2"], state=JobState.PENDING))


def test_a_crash_counts_one_detection_by_kind_category_signature_and_source():
    story = Story(job_input(Mode.ACT))(started(0), xid79_on("node2"), xid79_on("node2"), at=T0 + timedelta(seconds=2))
    assert story.counted(m.DETECTIONS) == [
        {"kind": "crash", "category": "hardware", "signature": "nvrm_xid_79", "source": "log"}
    ]


def test_detection_latency_runs_from_the_failing_line_to_the_record():
    story = Story(job_input(Mode.ACT))(started(0), xid79_on("node2"), at=T0 + timedelta(seconds=3))
    assert story.observed(m.DETECTION_LATENCY) == [({"kind": "crash", "source": "log"}, 3.0)]


def test_a_hang_is_timed_from_the_moment_its_budget_ran_out():
    story = Story(job_input(Mode.MONITOR, hang_budget=timedelta(minutes=5)))
    story(started(0), progress(0, 10, T0))
    budget = story.state.attempts[0].hang_budget or timedelta(minutes=5)
    fired = T0 + budget + timedelta(seconds=4)
    story(WatchdogFired(), ProgressChecked(attempt=0, view=ProgressView(known=True)), at=fired)
    [(labels, seconds)] = story.observed(m.DETECTION_LATENCY)
    assert labels == {"kind": "hang", "source": "hang-watchdog"}
    assert 0 <= seconds <= 4.0 + 1e-6


def test_a_failed_end_without_a_line_counts_as_a_scheduler_detection():
    story = Story(job_input(Mode.ACT))(started(0), ended(0, JobState.NODE_FAIL))
    [labels] = story.counted(m.DETECTIONS)
    assert labels["source"] == "scheduler" and labels["kind"] == "crash"


def test_act_mode_restart_counts_advice_a_recovery_and_both_action_latencies():
    story = Story(job_input(Mode.ACT))(started(0), xid79_on("node2"), ended(0), at=T0)
    story(requeued(), at=T0 + timedelta(seconds=4))
    elsewhere = AttemptStarted(
        attempt=1, nodes=["node1", "node3"], excluded_nodes=["node2"], at=T0 + timedelta(seconds=9)
    )
    story(elsewhere, at=T0 + timedelta(seconds=10))
    assert story.counted(m.ADVICE) == [{"action": "restart", "mode": "act"}]
    assert story.counted(m.RECOVERIES) == [{"outcome": "restarted"}]
    assert story.counted(m.ADVICE_ANSWERS) == []  # nobody had to answer
    assert story.observed(m.ACTION_LATENCY) == [
        ({"until": "requeue_verified"}, 4.0),
        ({"until": "running_elsewhere"}, 9.0),  # to Slurm's start time of the new attempt
    ]


def test_monitor_mode_latency_runs_from_the_approval_not_from_the_advice():
    story = Story(job_input(Mode.MONITOR))(started(0), xid79_on("node2"), at=T0)
    approved_at = T0 + timedelta(minutes=7)
    story(Answered(Approval(generation=1, operator="carol")), at=approved_at)
    story(requeued(), at=approved_at + timedelta(seconds=2))
    assert story.counted(m.ADVICE_ANSWERS) == [{"answer": "approved"}]
    assert story.observed(m.ACTION_LATENCY) == [({"until": "requeue_verified"}, 2.0)]


def test_rejected_and_expired_advice_count_as_answers_and_as_not_acted():
    rejected = Story(job_input(Mode.MONITOR))(started(0), xid79_on("node2"))
    rejected(Answered(Rejection(generation=1, operator="carol")))
    expired = Story(job_input(Mode.MONITOR))(started(0), xid79_on("node2"))
    expired(DecisionExpired())
    assert rejected.counted(m.ADVICE_ANSWERS) == [{"answer": "rejected"}]
    assert expired.counted(m.ADVICE_ANSWERS) == [{"answer": "expired"}]
    assert rejected.counted(m.RECOVERIES) == expired.counted(m.RECOVERIES) == [{"outcome": "not_acted"}]


def test_stop_advice_counts_a_stopped_recovery_and_a_finished_job():
    story = Story(job_input(Mode.ACT))(started(0), app_error())
    story(Cancelled(CancelResult(job_id=1, attempt=0, state=JobState.CANCELLED, cancelled=True)))  # stop means stop
    assert story.counted(m.ADVICE) == [{"action": "stop", "mode": "act"}]
    assert story.counted(m.RECOVERIES) == [{"outcome": "stopped"}]
    assert story.counted(m.JOBS_FINISHED) == [{"state": "stopped"}]


def test_a_refused_restart_counts_as_action_failed():
    story = Story(job_input(Mode.ACT))(started(0), xid79_on("node2"), RequeueFailed("Requested operation disabled"))
    assert story.counted(m.RECOVERIES) == [{"outcome": "action_failed"}]
    assert story.counted(m.JOBS_FINISHED) == [{"state": "failed"}]


def test_a_healthy_job_counts_only_its_completion():
    story = Story(job_input(Mode.ACT))(started(0), progress(0, 10, T0), ended(0, JobState.COMPLETED, 0))
    assert story.facts == [Fact(m.JOBS_FINISHED, (("state", "completed"),))]


def test_a_signature_outside_the_plain_id_form_is_labelled_other():
    diag = Diagnosis(
        failure_kind=FailureKind.CRASH,
        category=Category.INFRASTRUCTURE,
        signature="Provider Says: NCCL {timeout} #4711 " * 3,
        retry_advice=RetryAdvice.RETRY_SAME_NODES,
    )
    anomaly = AnomalyDetected(anomaly=Anomaly(attempt=0, kind=FailureKind.CRASH, diagnosis=diag, observed_at=T0))
    story = Story(job_input(Mode.MONITOR))(started(0), anomaly)
    assert story.counted(m.DETECTIONS)[0]["signature"] == "other"
    assert m.signature_label(None) == "none" and m.signature_label("nccl_timeout") == "nccl_timeout"


def test_no_fact_carries_a_job_or_node_label():
    story = Story(job_input(Mode.ACT))(started(0), xid79_on("node2"), ended(0), requeued())
    story(started(1, nodes=("node1", "node3"), excluded=("node2",)), ended(1, JobState.COMPLETED, 0))
    for fact in story.facts:
        names = {name for name, _ in fact.labels}
        assert names <= set(fact.spec.labels) and "cluster" not in names  # the meter adds the cluster
        assert not any(value.startswith("node") or value.isdigit() for _, value in fact.labels)
