"""The workflows' metrics: facts read from each step of the event path, recorded with Temporal's meter.

:func:`job_facts` compares the recovery state before and after one application of
:func:`workflows.transitions.apply` and names what happened (a detection, advice published or
answered, a requeue verified, the next attempt running, an incident's outcome, a job finished). It
is pure, so the event path stays untouched and every rule is tested in plain pytest.
:func:`record_job` and the ledger's helpers record facts through ``workflow.metric_meter()``,
which records nothing while a workflow replays: a fact is counted once, when it first happens,
whichever worker replays the history later. The names and help texts come from the catalogue
:mod:`lazarus.models.metrics` (docs/metrics.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from temporalio import workflow

from lazarus.models import metrics as m
from lazarus.models import milestones
from lazarus.models.diagnosis import FailureKind
from lazarus.models.recovery import (
    TERMINAL_STATES,
    Advice,
    AdviceAction,
    AdviceStatus,
    Anomaly,
    Attempt,
    JobRecoveryInput,
)

_ANSWERS = {
    AdviceStatus.APPROVED: "approved",
    AdviceStatus.REJECTED: "rejected",
    AdviceStatus.EXPIRED: "expired",
    AdviceStatus.SUPERSEDED: "superseded",
}
_NOT_ACTED = (AdviceStatus.REJECTED, AdviceStatus.EXPIRED, AdviceStatus.SUPERSEDED)


@dataclass(frozen=True)
class Fact:
    """One thing that happened, as a metric: add 1 to a counter, or observe a histogram value."""

    spec: m.MetricSpec
    labels: tuple[tuple[str, str], ...]
    value: float = 1.0


def job_facts(before: JobRecoveryInput, after: JobRecoveryInput) -> list[Fact]:
    """What one step of the event path did, in metrics."""
    old_attempts = {a.index: a for a in before.attempts}
    old_advice = {a.generation: a.status for a in before.advice_history}
    facts: list[Fact] = []
    for attempt in after.attempts:
        facts += _attempt_facts(old_attempts.get(attempt.index), attempt, after)
    for advice in after.advice_history:
        facts += _advice_facts(old_advice.get(advice.generation), advice, after)
    facts += _milestone_facts(before, after)
    if after.state != before.state and after.state in TERMINAL_STATES:
        facts.append(Fact(m.JOBS_FINISHED, (("state", after.state.value),)))
    return facts


def _attempt_facts(old: Attempt | None, new: Attempt, state: JobRecoveryInput) -> Iterator[Fact]:
    anomaly = new.anomaly
    if anomaly is not None and (old is None or old.anomaly != anomaly):
        kind, source = (("kind", anomaly.kind.value),), (("source", anomaly.source),)
        diag = anomaly.diagnosis
        yield Fact(
            m.DETECTIONS,
            (*kind, ("category", diag.category.value), ("signature", m.signature_label(diag.signature)), *source),
        )
        latency = _detection_latency(anomaly, new)
        if latency is not None:
            yield Fact(m.DETECTION_LATENCY, kind + source, latency)
    if new.requeued_at is not None and (old is None or old.requeued_at is None):
        decided = _decided_at(state, new)
        if decided is not None:
            yield _latency("requeue_verified", new.requeued_at - decided)
    if new.started_at is not None and (old is None or old.started_at is None):
        previous = next((a for a in state.attempts if a.index == new.index - 1 and a.requeued_at), None)
        decided = _decided_at(state, previous) if previous is not None else None
        if decided is not None:
            yield _latency("running_elsewhere", new.started_at - decided)


def _milestone_facts(before: JobRecoveryInput, after: JobRecoveryInput) -> Iterator[Fact]:
    """Each milestone of a restarted attempt once, in seconds from the fault; its steps lost once."""
    old = {row.attempt: row for row in milestones.of(before.attempts)}
    for row in milestones.of(after.attempts):
        if row.fault_at is None:
            continue
        was = old.get(row.attempt)
        then = was.seconds if was is not None else {}
        for name, seconds in row.seconds.items():
            if seconds is not None and then.get(name) is None:
                yield Fact(m.RECOVERY_MILESTONES, (("milestone", name),), max(0.0, seconds))
        if row.steps_lost and (was is None or was.steps_lost is None):
            yield Fact(m.STEPS_LOST, (), float(row.steps_lost))


def _advice_facts(old: AdviceStatus | None, new: Advice, state: JobRecoveryInput) -> Iterator[Fact]:
    if old == new.status:
        return
    if old is None:
        mode = (state.job_mode or state.cluster_mode).value
        yield Fact(m.ADVICE, (("action", new.action.value), ("mode", mode)))
    if old in (None, AdviceStatus.PENDING) and new.status in _ANSWERS:
        yield Fact(m.ADVICE_ANSWERS, (("answer", _ANSWERS[new.status]),))
    outcome = _outcome(new)
    if outcome is not None:
        yield Fact(m.RECOVERIES, (("outcome", outcome),))


def _outcome(advice: Advice) -> str | None:
    """How an incident that called for action ended; None while it is open, and for advice-only findings."""
    if advice.action == AdviceAction.NONE:
        return None
    if advice.status == AdviceStatus.EXECUTED:
        return "restarted" if advice.action == AdviceAction.RESTART else "stopped"
    if advice.status == AdviceStatus.FAILED:
        return "action_failed"
    if advice.status in _NOT_ACTED:
        return "not_acted"
    return None


def _detection_latency(anomaly: Anomaly, attempt: Attempt) -> float | None:
    """Seconds from the evidence to the record; for a hang, from the moment its budget ran out."""
    if anomaly.recorded_at is None:
        return None
    start = anomaly.observed_at
    if anomaly.kind == FailureKind.HANG and anomaly.hang_budget_s is not None:
        silent_since = attempt.last_progress_at or attempt.started_at
        if silent_since is not None:
            start = silent_since + timedelta(seconds=anomaly.hang_budget_s)
    return max(0.0, (anomaly.recorded_at - start).total_seconds())


def _decided_at(state: JobRecoveryInput, attempt: Attempt) -> datetime | None:
    if attempt.advice_generation is None or attempt.advice_generation > len(state.advice_history):
        return None
    return state.advice_history[attempt.advice_generation - 1].decided_at


def _latency(until: str, elapsed: timedelta) -> Fact:
    return Fact(m.ACTION_LATENCY, (("until", until),), max(0.0, elapsed.total_seconds()))


# ---- recording (inside a workflow) ----------------------------------------------------------------------


def record_job(before: JobRecoveryInput, after: JobRecoveryInput) -> None:
    """Record the facts of one step of a job workflow (nothing while it replays)."""
    record(after.cluster, job_facts(before, after))


def drained(cluster: str, by: str) -> None:
    """The node ledger drained a node (``by``: lazarus or operator)."""
    record(cluster, [Fact(m.DRAINS, (("by", by),))])


def drain_refused(cluster: str, reason: str) -> None:
    """The node ledger did not drain a node it meant to (``reason``: budget, scheduler_unreadable, failed)."""
    record(cluster, [Fact(m.DRAINS_REFUSED, (("reason", reason),))])


def spare_refills(cluster: str, reservation: str, refilled: int, short: int) -> None:
    """A spare pool check: members replaced (``refilled``), members newly left without a replacement (``short``)."""
    facts = (
        [Fact(m.SPARE_REFILLS, (("reservation", reservation), ("outcome", "refilled")), refilled)] if refilled else []
    )
    if short:
        facts.append(Fact(m.SPARE_REFILLS, (("reservation", reservation), ("outcome", "short")), short))
    record(cluster, facts)


def record(cluster: str, facts: list[Fact]) -> None:
    if not facts:
        return
    meter = workflow.metric_meter().with_additional_attributes({"cluster": cluster})
    for fact in facts:
        labels = dict(fact.labels)
        if fact.spec.kind == "counter":
            meter.create_counter(fact.spec.name, fact.spec.help).add(int(fact.value), labels)
        elif fact.spec.kind == "histogram":
            meter.create_histogram_float(fact.spec.name, fact.spec.help, "s").record(fact.value, labels)
        else:
            raise ValueError(f"{fact.spec.name}: a workflow records counters and histograms only")
