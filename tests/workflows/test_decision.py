"""The pure decision core, one rule per test (no server)."""

from __future__ import annotations

from datetime import UTC, datetime

from lazarus.models.diagnosis import Category, Diagnosis, FailureKind, RetryAdvice
from lazarus.models.policy import Policy
from lazarus.models.recovery import AdviceAction, Anomaly, Attempt, AttemptEnded
from lazarus.models.slurm import JobState
from workflows.decision import consecutive_attempts_without_checkpoint, decide_advice, scheduler_diagnosis

T = datetime(2026, 1, 1, tzinfo=UTC)


def anomaly(
    category=Category.HARDWARE,
    advice=RetryAdvice.RETRY_EXCLUDING_NODES,
    nodes=("node2",),
    kind=FailureKind.CRASH,
    attempt=0,
) -> Anomaly:
    diag = Diagnosis(
        failure_kind=kind, category=category, retry_advice=advice, implicated_nodes=list(nodes), signature="sig"
    )
    return Anomaly(attempt=attempt, kind=kind, diagnosis=diag, observed_at=T)


def attempt(i, nodes=("node1", "node2"), start_ckpt=None, last_ckpt=None, anomaly_=None, excluded=()) -> Attempt:
    return Attempt(
        index=i,
        nodes=list(nodes),
        start_checkpoint=start_ckpt,
        last_checkpoint=last_ckpt,
        anomaly=anomaly_,
        excluded_nodes=list(excluded),
    )


def test_hardware_failure_excludes_and_drains_the_implicated_node():
    d = decide_advice(anomaly(), [attempt(0, last_ckpt=10)], Policy())
    assert (d.action, d.exclude_nodes, d.drain_nodes) == (AdviceAction.RESTART, ["node2"], ["node2"])


def test_infrastructure_failure_excludes_but_does_not_drain():
    d = decide_advice(anomaly(Category.INFRASTRUCTURE), [attempt(0, last_ckpt=10)], Policy())
    assert d.exclude_nodes == ["node2"] and d.drain_nodes == []


def test_exclusions_accumulate_across_attempts():
    d = decide_advice(
        anomaly(nodes=("node3",), attempt=1),
        [attempt(0, last_ckpt=5), attempt(1, ("node1", "node3"), 5, 10, excluded=("node2",))],
        Policy(),
    )
    assert d.exclude_nodes == ["node2", "node3"]


def test_application_error_stops():
    d = decide_advice(anomaly(Category.APPLICATION, RetryAdvice.STOP, ()), [attempt(0)], Policy())
    assert d.action == AdviceAction.STOP and "application" in d.reason


def test_unknown_failure_restarts_on_the_same_nodes_once():
    first = decide_advice(
        anomaly(Category.UNKNOWN, RetryAdvice.RETRY_SAME_NODES, ()), [attempt(0, last_ckpt=1)], Policy()
    )
    assert first.action == AdviceAction.RESTART and first.exclude_nodes == []
    prior = anomaly(Category.UNKNOWN, RetryAdvice.RETRY_SAME_NODES, ())
    second = decide_advice(
        anomaly(Category.UNKNOWN, RetryAdvice.RETRY_SAME_NODES, (), attempt=1),
        [attempt(0, last_ckpt=1, anomaly_=prior), attempt(1, start_ckpt=1, last_ckpt=2)],
        Policy(),
    )
    assert second.action == AdviceAction.STOP and "unknown failure repeated" in second.reason


def test_checkpoint_progress_limit_counts_consecutive_attempts_without_a_new_checkpoint():
    attempts = [attempt(0, last_ckpt=10), attempt(1, start_ckpt=10), attempt(2, start_ckpt=10)]
    assert consecutive_attempts_without_checkpoint(attempts) == 2
    assert (
        decide_advice(anomaly(attempt=2), attempts, Policy(max_attempts_without_checkpoint=3)).action
        == AdviceAction.RESTART
    )
    attempts.append(attempt(3, start_ckpt=10))
    d = decide_advice(anomaly(attempt=3), attempts, Policy(max_attempts_without_checkpoint=3))
    assert d.action == AdviceAction.STOP and "3 consecutive attempts" in d.reason


def test_overall_attempt_cap_stops_even_with_progress():
    attempts = [attempt(i, start_ckpt=i, last_ckpt=i + 1) for i in range(4)]
    assert decide_advice(anomaly(attempt=3), attempts, Policy(max_attempts=4)).action == AdviceAction.STOP


def test_straggler_is_advice_only_unless_the_policy_opts_in():
    a = anomaly(kind=FailureKind.STRAGGLER)
    assert decide_advice(a, [attempt(0, last_ckpt=1)], Policy()).action == AdviceAction.NONE
    assert decide_advice(a, [attempt(0, last_ckpt=1)], Policy(act_on_stragglers=True)).action == AdviceAction.RESTART


def test_scheduler_fallback_maps_end_states():
    def diag(state, failed=()):
        return scheduler_diagnosis(AttemptEnded(attempt=0, state=state, at=T, failed_nodes=list(failed)))

    assert diag(JobState.NODE_FAIL, ["node3"]).implicated_nodes == ["node3"]
    assert diag(JobState.NODE_FAIL).retry_advice == RetryAdvice.RETRY_SAME_NODES
    assert diag(JobState.OUT_OF_MEMORY).retry_advice == RetryAdvice.STOP
    assert diag(JobState.TIMEOUT).retry_advice == RetryAdvice.RETRY_SAME_NODES
    assert diag(JobState.COMPLETED) is None and diag(JobState.CANCELLED) is None
    unhealthy = diag(JobState.FAILED, ["node4"])
    assert (unhealthy.category, unhealthy.implicated_nodes) == (Category.INFRASTRUCTURE, ["node4"])
