"""Deciding and acting on an incident, as pure steps: advice, approval, isolation, restart.

Each function applies one input to a :class:`workflows.change.Change`; the
workflow performs the effects (the wait for an operator, the drain, the
restart) and applies their outcomes with the next function here. The advice in
question is always the newest one: nothing new is decided until it is settled.
"""

from __future__ import annotations

from lazarus.models.diagnosis import FailureKind
from lazarus.models.ledger import Implication
from lazarus.models.policy import Mode
from lazarus.models.recovery import Advice, AdviceAction, AdviceStatus, Approval, Attempt, RecoveryState, Rejection
from lazarus.models.slurm import NodeAction, RestartRequest
from workflows.change import Change
from workflows.decision import decide_advice
from workflows.effects import (
    Answered,
    AwaitAnswer,
    Decide,
    DecisionExpired,
    DrainFailed,
    HoldReleased,
    Isolate,
    ReleaseHold,
    Requeue,
    Requeued,
    RequeueFailed,
    SearchAttributes,
    Warn,
)


def decide(c: Change, incident: Decide) -> None:
    """Publish advice for the incident, then stop, wait for an operator (monitor mode) or act."""
    anomaly = incident.anomaly
    attempt = c.attempt(anomaly.attempt)
    if attempt.advice_generation is not None and not (
        c.s.advice_history[attempt.advice_generation - 1].action == AdviceAction.NONE
        and anomaly.kind != FailureKind.STRAGGLER
    ):
        return  # already decided for this attempt (advice-only straggler findings do not count)
    c.set_state(RecoveryState.SUSPECTED, f"{anomaly.kind.value} in attempt {attempt.index}")
    decision = decide_advice(
        anomaly, [a for a in c.s.attempts if a.index <= attempt.index], c.s.policy, incident.unpatched
    )
    c.s.generation += 1
    diag = anomaly.diagnosis
    advice = Advice(
        generation=c.s.generation,
        attempt=attempt.index,
        action=decision.action,
        exclude_nodes=decision.exclude_nodes,
        drain_nodes=decision.drain_nodes,
        reason=decision.reason,
        category=diag.category,
        signature=diag.signature,
        evidence=[f"{e.file}:{e.line_no}: {e.text}" for e in diag.evidence[:5]],
        created_at=c.now,
    )
    c.s.advice_history.append(advice)
    attempt.advice_generation = advice.generation
    c.emit(SearchAttributes(generation=advice.generation))
    if decision.action == AdviceAction.NONE:
        advice.status, advice.decided_by, advice.decided_at = AdviceStatus.EXECUTED, "lazarus", c.now
        c.set_state(RecoveryState.WATCHING, f"advice only: {decision.reason}")
    elif decision.action == AdviceAction.STOP:
        advice.status, advice.decided_by, advice.decided_at = AdviceStatus.EXECUTED, "lazarus", c.now
        attempt.outcome = f"stopped: {advice.reason}"
        c.s.stop_reason = advice.reason
        c.set_state(RecoveryState.STOPPED, f"stopped: {advice.reason}")
    elif c.mode == Mode.MONITOR:
        advice.expires_at = c.now + c.s.policy.decision_timeout
        c.set_state(
            RecoveryState.AWAITING_APPROVAL, f"awaiting approval of advice {advice.generation}: {advice.reason}"
        )
        c.emit(AwaitAnswer(generation=advice.generation, attempt=advice.attempt, timeout=c.s.policy.decision_timeout))
    else:
        _restart(c, attempt, advice)


def answered(c: Change, outcome: Answered) -> None:
    """Monitor mode: approved (or switched to act) → act; rejected → leave the job; else superseded."""
    advice, answer = _advice(c), outcome.answer
    if isinstance(answer, Approval) or (answer is None and c.mode == Mode.ACT):
        advice.status = AdviceStatus.APPROVED
        advice.decided_by = answer.operator if answer else "lazarus (mode switched to act)"
        advice.decided_at, advice.comment = c.now, answer.comment if answer else None
        _restart(c, c.attempt(advice.attempt), advice)
    elif isinstance(answer, Rejection):
        advice.status, advice.decided_by = AdviceStatus.REJECTED, answer.operator
        advice.decided_at, advice.comment = c.now, answer.comment
        _after_no_action(
            c, advice, f"advice {advice.generation} rejected by {answer.operator}; Lazarus leaves the job alone"
        )
    else:
        advice.status = AdviceStatus.SUPERSEDED
        c.set_state(RecoveryState.WATCHING, "advice superseded: the job moved on")


def expired(c: Change, _: DecisionExpired) -> None:
    """The decision watchdog fired: fail open (never leave the job held), Lazarus touches nothing."""
    advice = _advice(c)
    advice.status, advice.decided_at = AdviceStatus.EXPIRED, c.now
    release_if_held(c)
    _after_no_action(
        c,
        advice,
        f"advice {advice.generation} expired: nobody approved it within "
        f"{c.s.policy.decision_timeout}; the job is left to normal scheduling",
    )


def drain_failed(c: Change, outcome: DrainFailed) -> None:
    """The exclusion still keeps the job off the node: note the failure and restart anyway."""
    advice = _advice(c)
    c.emit(
        Warn(
            f"job {c.s.job_id}: drain of {advice.drain_nodes} failed ({outcome.cause}); "
            "restarting with the exclusion anyway"
        )
    )
    advice.comment = f"drain failed: {outcome.cause}"


def requeued(c: Change, outcome: Requeued) -> None:
    """The restart verified the requeue and its release: wait for the next attempt to start."""
    advice = _advice(c)
    attempt = c.attempt(advice.attempt)
    c.s.lazarus_hold = False
    advice.status = AdviceStatus.EXECUTED
    attempt.requeued_at = c.now
    attempt.outcome = (
        f"requeued as attempt {outcome.result.new_attempt} excluding {','.join(outcome.result.excluded_nodes) or '-'}"
    )
    c.s.verify_deadline = c.now + c.s.policy.attempt_start_timeout
    c.set_state(RecoveryState.VERIFYING, f"waiting for attempt {outcome.result.new_attempt} to start")


def requeue_failed(c: Change, outcome: RequeueFailed) -> None:
    """The scheduler refused the restart for good: release the job (fail-open) and give up."""
    advice = _advice(c)
    advice.status = AdviceStatus.FAILED
    release_if_held(c)
    c.s.stop_reason = f"restart failed: {outcome.cause}"
    c.attempt(advice.attempt).outcome = c.s.stop_reason
    c.set_state(RecoveryState.FAILED, c.s.stop_reason)


def hold_released(c: Change, _: HoldReleased) -> None:
    c.s.lazarus_hold = False


def release_if_held(c: Change) -> None:
    """Fail-open: never leave a job held by Lazarus. Holds Lazarus did not place (a user's, an
    admin's) are not Lazarus's to lift, so nothing is released unless a restart of ours began."""
    if c.s.lazarus_hold:
        c.emit(ReleaseHold(job_id=c.s.job_id, task_queue=c.s.scheduler_queue))


def _advice(c: Change) -> Advice:
    advice = c.current_advice
    if advice is None:
        raise ValueError("an outcome of acting arrived with no advice recorded")
    return advice


def _after_no_action(c: Change, advice: Advice, reason: str) -> None:
    attempt = c.attempt(advice.attempt)
    attempt.outcome = reason
    if attempt.ended_at is not None:
        c.s.stop_reason = reason
        c.set_state(RecoveryState.STOPPED, reason)
    else:
        c.set_state(RecoveryState.WATCHING, reason)


def _restart(c: Change, attempt: Attempt, advice: Advice) -> None:
    """Isolate the implicated nodes (drain through the ledger), then requeue the job excluding them."""
    c.set_state(RecoveryState.ACTING, f"acting on advice {advice.generation}: {advice.reason}")
    if advice.decided_by is None:
        advice.decided_by, advice.decided_at = "lazarus (act mode)", c.now
    if advice.drain_nodes or advice.exclude_nodes:
        implications = tuple(
            Implication(
                node=node,
                job_id=c.s.job_id,
                attempt=attempt.index,
                signature=advice.signature,
                category=advice.category.value,
                at=c.now,
                drain_requested=node in advice.drain_nodes,
            )
            for node in sorted(set(advice.exclude_nodes) - set(attempt.excluded_nodes))
        )
        drain = (
            NodeAction(nodes=advice.drain_nodes, reason=f"lazarus: {advice.signature} in job {c.s.job_id}")
            if advice.drain_nodes
            else None
        )
        c.emit(
            Isolate(
                ledger_workflow_id=c.s.ledger_workflow_id,
                implications=implications,
                drain=drain,
                task_queue=c.s.scheduler_queue,
            )
        )
    c.s.lazarus_hold = True
    c.emit(
        Requeue(
            request=RestartRequest(
                job_id=c.s.job_id,
                expected_attempt=attempt.index,
                exclude_nodes=advice.exclude_nodes,
                reason=advice.reason,
            ),
            task_queue=c.s.scheduler_queue,
        )
    )
