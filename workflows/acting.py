"""Deciding and acting on an incident, as pure steps: advice, approval, isolation, restart.

Each function applies one input to a :class:`workflows.change.Change`; the
workflow performs the effects (the wait for an operator, the mode read, the
drain, the restart) and applies their outcomes with the next function here.
The advice in question is always the newest one: nothing new is decided until
it is settled.

Acting re-checks the present, twice. Approved advice is checked against what
telemetry reported while the workflow waited (:func:`stale_reason`: a job
that completed, was cancelled or moved on to another attempt is left alone),
and the restart activity reads the job again before it touches it. Advice
decided in act mode first reads the cluster-wide mode (the kill switch) from
the node ledger; thrown, or unreadable, the advice waits for a person. Advice
is marked executed only when the new attempt carries what it advised.
"""

from __future__ import annotations

from lazarus.models.diagnosis import NODE_LOST_SIGNATURE, EvidenceSource, FailureKind
from lazarus.models.ledger import Implication
from lazarus.models.policy import Mode, OnStop
from lazarus.models.recovery import (
    Advice,
    AdviceAction,
    AdviceStatus,
    Approval,
    Attempt,
    AttemptEnded,
    AttemptStarted,
    JobRecoveryInput,
    RecoveryState,
    Rejection,
)
from lazarus.models.slurm import CancelRequest, JobState, LiftRequest, NodeAction, RestartRequest, RestartResult
from workflows.change import Change
from workflows.decision import decide_advice
from workflows.effects import (
    Answered,
    AwaitAnswer,
    Cancel,
    CancelFailed,
    Cancelled,
    CheckMode,
    Decide,
    DecisionExpired,
    DrainFailed,
    ExpediteLifted,
    HoldReleased,
    Isolate,
    LiftExpedite,
    ModeChecked,
    ReleaseHold,
    Requeue,
    Requeued,
    RequeueFailed,
    SearchAttributes,
    Warn,
)
from workflows.expedite import expedite_rule
from workflows.patches import EXPEDITES, STOP_CANCELS


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
    cancels = decision.action == AdviceAction.STOP and _stop_cancels(c, attempt, incident)
    advice = Advice(
        generation=c.s.generation,
        attempt=attempt.index,
        action=decision.action,
        exclude_nodes=decision.exclude_nodes,
        drain_nodes=decision.drain_nodes,
        reason=f"{decision.reason}; {_CANCEL_WORDS[c.mode]}" if cancels else decision.reason,
        category=diag.category,
        signature=diag.signature,
        evidence=[f"{e.file}:{e.line_no}: {e.text}" for e in diag.evidence[:5]],
        implicated_by=diag.implicated_by,
        created_at=c.now,
    )
    if EXPEDITES not in incident.unpatched:
        verdict = expedite_rule(advice, c.s.advice_history, c.s.policy)
        advice.expedite, advice.expedite_reason = verdict.expedite, verdict.reason
    c.s.advice_history.append(advice)
    attempt.advice_generation = advice.generation
    c.emit(SearchAttributes(generation=advice.generation))
    if decision.action == AdviceAction.NONE:
        advice.status, advice.decided_by, advice.decided_at = AdviceStatus.EXECUTED, "lazarus", c.now
        c.set_state(RecoveryState.WATCHING, f"advice only: {decision.reason}")
    elif decision.action == AdviceAction.STOP and not cancels:
        advice.status, advice.decided_by, advice.decided_at = AdviceStatus.EXECUTED, "lazarus", c.now
        kept = STOP_CANCELS not in incident.unpatched and attempt.ended_at is None
        reason = f"{advice.reason}; {_KEPT_RUNNING}" if kept else advice.reason
        attempt.outcome = f"stopped: {reason}"
        c.s.stop_reason = reason
        c.set_state(RecoveryState.STOPPED, f"stopped: {reason}")
    elif c.mode == Mode.MONITOR:
        _await(c, advice)
    elif c.s.ledger_workflow_id and not c.s.job_mode_by_operator:
        # act mode, unless the kill switch was thrown since the job was discovered (an operator's own choice of
        # act for this job, made after any kill switch reached it, stands)
        c.emit(CheckMode(ledger_workflow_id=c.s.ledger_workflow_id, task_queue=c.s.scheduler_queue))
    else:
        _act(c, attempt, advice)


# What a stop that cancels says it will do, by the mode it was decided in.
_CANCEL_WORDS = {
    Mode.ACT: "Lazarus cancels the job, which still holds its allocation",
    Mode.MONITOR: "approving it cancels the job, which still holds its allocation",
}
_KEPT_RUNNING = "the job keeps running and holds its allocation (policy on_stop: keep_running)"


def _stop_cancels(c: Change, attempt: Attempt, incident: Decide) -> bool:
    """Stop means stop: a stop for an attempt that has not ended cancels the job, unless the policy keeps it
    running (``on_stop: keep_running``) or the run predates the rule (:data:`workflows.patches.STOP_CANCELS`).
    Whether it still runs is for the activity's fresh read to say; an attempt known to have ended needs nothing."""
    return STOP_CANCELS not in incident.unpatched and attempt.ended_at is None and c.s.policy.on_stop == OnStop.CANCEL


def mode_checked(c: Change, checked: ModeChecked) -> None:
    """The cluster-wide mode at the moment of acting: act, unless the kill switch is thrown or cannot be read;
    then the advice waits for a person, as in monitor mode."""
    advice = _advice(c)
    if not checked.read or (checked.error is None and checked.mode != Mode.MONITOR):
        _act(c, c.attempt(advice.attempt), advice)
        return
    if checked.error is not None:
        advice.monitor_reason = (
            f"the cluster-wide mode could not be read ({checked.error}); in doubt Lazarus acts as monitor"
        )
    else:
        c.s.cluster_mode, c.s.job_mode = Mode.MONITOR, None  # what the kill switch's signal would have done
        c.emit(SearchAttributes(mode=Mode.MONITOR))
        advice.monitor_reason = "the kill switch (cluster-wide monitor mode) was thrown before Lazarus acted"
    c.emit(Warn(f"job {c.s.job_id}: advice {advice.generation} waits for approval: {advice.monitor_reason}"))
    _await(c, advice, wake_on_act=checked.error is None)


def stale_reason(
    state: JobRecoveryInput, advice: Advice, news: tuple[AttemptStarted | AttemptEnded, ...]
) -> str | None:
    """Why acting on ``advice`` now would touch a job that has moved on, or None to act.

    ``news`` is what telemetry reported while the workflow waited (not yet applied). A job that completed,
    was cancelled, or started another attempt since the advice was decided is left alone.
    """
    when = "the approved action" if advice.status == AdviceStatus.APPROVED else "the action"
    later = [e.attempt for e in news if isinstance(e, AttemptStarted) and e.attempt > advice.attempt]
    later += [a.index for a in state.attempts if a.index > advice.attempt and a.started_at is not None]
    if later:
        return f"job moved on to attempt {max(later)} before {when}"
    ends = [(e.state, e.exit_code) for e in news if isinstance(e, AttemptEnded) and e.attempt == advice.attempt]
    ends += [(a.end_state, a.exit_code) for a in state.attempts if a.index == advice.attempt and a.end_state]
    for end_state, exit_code in ends:
        if end_state == JobState.COMPLETED and exit_code in (0, None):
            return f"job completed before {when}"
        if end_state == JobState.CANCELLED:
            return f"job was cancelled before {when}"
    return None


def answered(c: Change, outcome: Answered) -> None:
    """Monitor mode: approved (or switched to act) → act, unless the job moved on meanwhile; rejected → leave
    the job; else superseded."""
    advice, answer = _advice(c), outcome.answer
    if isinstance(answer, Approval) or (answer is None and c.mode == Mode.ACT):
        advice.status = AdviceStatus.APPROVED
        advice.decided_by = answer.operator if answer else "lazarus (mode switched to act)"
        advice.decided_at, advice.comment = c.now, answer.comment if answer else None
        reason = stale_reason(c.s, advice, outcome.news)
        if reason is None:
            _act(c, c.attempt(advice.attempt), advice)
            return
        advice.status, advice.not_executed_reason = AdviceStatus.NOT_EXECUTED, reason
        not_done = "not cancelled" if advice.action == AdviceAction.STOP else "not restarted"
        c.attempt(advice.attempt).outcome = f"{not_done}: {reason}"
        c.set_state(RecoveryState.WATCHING, f"advice {advice.generation} not executed: {reason}")
    elif isinstance(answer, Rejection):
        advice.status, advice.decided_by = AdviceStatus.REJECTED, answer.operator
        advice.decided_at, advice.comment = c.now, answer.comment
        _after_no_action(
            c, advice, f"advice {advice.generation} rejected by {answer.operator}; Lazarus leaves the job alone"
        )
    elif advice.action == AdviceAction.STOP and (end := _end_of(advice.attempt, outcome.news)) is not None:
        _ended_unanswered(c, advice, end)
    else:
        advice.status = AdviceStatus.SUPERSEDED
        c.set_state(RecoveryState.WATCHING, "advice superseded: the job moved on")


def _end_of(attempt: int, news: tuple[AttemptStarted | AttemptEnded, ...]) -> AttemptEnded | None:
    return next((e for e in news if isinstance(e, AttemptEnded) and e.attempt == attempt), None)


def _ended_unanswered(c: Change, advice: Advice, end: AttemptEnded) -> None:
    """Stop advice waited for approval to cancel the job, and the attempt ended first: nothing is left to cancel,
    and the job is stopped (or, when it completed, watched until its end is applied)."""
    attempt = c.attempt(advice.attempt)
    advice.status = AdviceStatus.NOT_EXECUTED
    advice.not_executed_reason = f"attempt {attempt.index} ended {end.state.value} before anyone approved it"
    if end.state == JobState.COMPLETED and end.exit_code in (0, None):  # its end, applied next, completes the job
        c.set_state(RecoveryState.WATCHING, f"advice {advice.generation} not executed: the job completed first")
        return
    attempt.end_state, attempt.ended_at, attempt.exit_code = end.state, attempt.ended_at or end.at, end.exit_code
    decided = advice.reason.removesuffix(f"; {_CANCEL_WORDS[Mode.MONITOR]}")
    _stop(c, attempt, f"{decided} ({advice.not_executed_reason}: nothing to cancel)")


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
    advice.comment = "; ".join(filter(None, [advice.comment, f"drain failed: {outcome.cause}"]))  # keep the approver's


def requeued(c: Change, outcome: Requeued) -> None:
    """The restart verified the requeue and its release: wait for the next attempt to start. The advice is
    executed only if the new attempt carries its exclusions; a job the fresh read found completed or
    cancelled was left alone."""
    advice, result = _advice(c), outcome.result
    attempt = c.attempt(advice.attempt)
    c.s.lazarus_hold = False
    if result.not_done_reason is not None:
        _ended_before_acting(c, advice, attempt, result)
        return
    applied = (
        result.exclusions_applied
        if result.exclusions_applied is not None
        else set(advice.exclude_nodes) <= set(result.excluded_nodes)
    )
    if advice.exclude_nodes:
        advice.exclusions_applied = applied
        advice.not_applied_reason = (
            None if applied else (result.exclusions_not_applied_reason or "the new attempt does not carry them")
        )
    advice.expedited = result.expedite
    by = "already requeued before Lazarus acted (by Slurm, or an earlier try)" if result.already_done else "requeued"
    attempt.requeued_at = c.now
    attempt.outcome = f"{by} as attempt {result.new_attempt} excluding {','.join(result.excluded_nodes) or '-'}"
    if advice.exclude_nodes and not applied:
        advice.status, advice.not_executed_reason = AdviceStatus.NOT_EXECUTED, advice.not_applied_reason
    else:
        advice.status = AdviceStatus.EXECUTED
    c.s.verify_deadline = c.now + c.s.policy.attempt_start_timeout
    c.set_state(RecoveryState.VERIFYING, f"waiting for attempt {result.new_attempt} to start")


def _ended_before_acting(c: Change, advice: Advice, attempt: Attempt, result: RestartResult) -> None:
    """The restart's fresh read found the attempt completed or cancelled: nothing was done, and the job is over."""
    completed = result.state == JobState.COMPLETED
    when = "the approved action" if advice.status == AdviceStatus.APPROVED else "the action"
    reason = f"job {'completed' if completed else 'was cancelled'} before {when}"
    advice.status, advice.not_executed_reason = AdviceStatus.NOT_EXECUTED, reason
    if advice.exclude_nodes:
        advice.exclusions_applied, advice.not_applied_reason = False, "the job was not restarted"
    attempt.end_state, attempt.ended_at = attempt.end_state or result.state, attempt.ended_at or c.now
    attempt.exit_code = attempt.exit_code if attempt.exit_code is not None else result.exit_code
    attempt.outcome = "completed successfully" if completed else "cancelled"
    if completed:
        c.set_state(RecoveryState.COMPLETED, f"advice {advice.generation} not executed: {reason}")
    else:
        c.s.stop_reason = f"the job was cancelled outside Lazarus; advice {advice.generation} not executed: {reason}"
        c.set_state(RecoveryState.STOPPED, c.s.stop_reason)


def lift_expedite(c: Change, attempt: Attempt) -> None:
    """The attempt an expedite boosted runs: lift the boost (its priority back to what it was), once."""
    for advice in c.s.advice_history:
        done = advice.expedited
        if done is None or not done.done or done.attempt != attempt.index or advice.expedite_lifted is not None:
            continue
        if done.priority_after is None or done.priority_after == done.priority_before:
            continue  # nothing was changed: nothing to lift
        advice.expedite_lifted = False  # asked; the outcome says whether it was done
        c.emit(
            LiftExpedite(
                request=LiftRequest(
                    job_id=c.s.job_id,
                    attempt=attempt.index,
                    boosted=done.priority_after,
                    restore=max(1, done.priority_before or 1),
                ),
                generation=advice.generation,
                task_queue=c.s.scheduler_queue,
            )
        )


def expedite_lifted(c: Change, outcome: ExpediteLifted) -> None:
    """Record whether the boost was lifted (and why not)."""
    advice = c.s.advice_history[outcome.generation - 1]
    advice.expedite_lifted = outcome.lifted
    if not outcome.lifted and outcome.note:
        advice.expedite_reason = f"{advice.expedite_reason}; not lifted: {outcome.note}"[:500]


def requeue_failed(c: Change, outcome: RequeueFailed) -> None:
    """The scheduler refused the restart for good: release the job (fail-open) and give up."""
    advice = _advice(c)
    advice.status = AdviceStatus.FAILED
    release_if_held(c)
    c.s.stop_reason = f"restart failed: {outcome.cause}"
    c.attempt(advice.attempt).outcome = c.s.stop_reason
    c.set_state(RecoveryState.FAILED, c.s.stop_reason)


def cancelled(c: Change, outcome: Cancelled) -> None:
    """The stop's cancel ran. Cancelled (or found cancelled): the job is stopped and its allocation free. Left
    alone because the attempt had ended on its own: stopped all the same (completed: completed). Left alone
    because the job moved on to another attempt: the advice was not executed, and Lazarus watches the new one."""
    advice, result = _advice(c), outcome.result
    attempt = c.attempt(advice.attempt)
    if result.cancelled or result.already_done:
        advice.status = AdviceStatus.EXECUTED
        how = "Lazarus cancelled it" if result.cancelled else "it was already cancelled when Lazarus acted"
        attempt.end_state, attempt.ended_at = attempt.end_state or result.state, attempt.ended_at or c.now
        _stop(c, attempt, f"{advice.reason} ({how}, verified: attempt {attempt.index} left RUNNING/PENDING)")
        return
    reason = result.not_done_reason or f"job shows {result.state.value} at attempt {result.attempt}"
    if result.attempt != advice.attempt:
        advice.status, advice.not_executed_reason = AdviceStatus.NOT_EXECUTED, reason
        attempt.outcome = f"not cancelled: {reason}"
        c.set_state(RecoveryState.WATCHING, f"advice {advice.generation} not executed: {reason}")
        return
    attempt.end_state, attempt.ended_at = attempt.end_state or result.state, attempt.ended_at or c.now
    attempt.exit_code = attempt.exit_code if attempt.exit_code is not None else result.exit_code
    if result.state == JobState.COMPLETED and result.exit_code in (0, None):
        advice.status, advice.not_executed_reason = AdviceStatus.NOT_EXECUTED, "job completed before the action"
        attempt.outcome = "completed successfully"
        c.set_state(RecoveryState.COMPLETED, f"advice {advice.generation} not executed: job completed first")
        return
    advice.status = AdviceStatus.EXECUTED  # stopped; there was nothing left to cancel
    _stop(c, attempt, f"{advice.reason} ({reason})")


def cancel_failed(c: Change, outcome: CancelFailed) -> None:
    """The scheduler refused the cancel for good: say so loudly, the job may still hold its allocation."""
    advice = _advice(c)
    advice.status = AdviceStatus.FAILED
    c.s.stop_reason = f"{advice.reason}; cancelling the job failed ({outcome.cause}): it may still hold its allocation"
    c.attempt(advice.attempt).outcome = c.s.stop_reason
    c.emit(Warn(f"job {c.s.job_id}: {c.s.stop_reason}"))
    c.set_state(RecoveryState.FAILED, c.s.stop_reason)


def _stop(c: Change, attempt: Attempt, reason: str) -> None:
    attempt.outcome = f"stopped: {reason}"
    c.s.stop_reason = reason
    c.set_state(RecoveryState.STOPPED, f"stopped: {reason}")


def hold_released(c: Change, _: HoldReleased) -> None:
    c.s.lazarus_hold = False


def release_if_held(c: Change) -> None:
    """Fail-open: never leave a job held by Lazarus. Holds Lazarus did not place (a user's, an
    admin's) are not Lazarus's to lift, so nothing is released unless a restart of ours began, and then
    only a hold on the attempt that restart replaced (or the next one, its requeue-hold)."""
    if c.s.lazarus_hold:
        advice = c.current_advice
        c.emit(
            ReleaseHold(job_id=c.s.job_id, task_queue=c.s.scheduler_queue, attempt=advice.attempt if advice else None)
        )


def _advice(c: Change) -> Advice:
    advice = c.current_advice
    if advice is None:
        raise ValueError("an outcome of acting arrived with no advice recorded")
    return advice


def _await(c: Change, advice: Advice, wake_on_act: bool = True) -> None:
    """Publish the advice as awaiting approval and wait for an operator (the decision watchdog fails open)."""
    advice.expires_at = c.now + c.s.policy.decision_timeout
    why = f" ({advice.monitor_reason})" if advice.monitor_reason else ""
    c.set_state(
        RecoveryState.AWAITING_APPROVAL, f"awaiting approval of advice {advice.generation}: {advice.reason}{why}"
    )
    c.emit(
        AwaitAnswer(
            generation=advice.generation,
            attempt=advice.attempt,
            timeout=c.s.policy.decision_timeout,
            wake_on_act=wake_on_act,
            wake_on_end=advice.action == AdviceAction.STOP,
        )
    )


def _after_no_action(c: Change, advice: Advice, reason: str) -> None:
    attempt = c.attempt(advice.attempt)
    attempt.outcome = reason
    if attempt.ended_at is not None:
        c.s.stop_reason = reason
        c.set_state(RecoveryState.STOPPED, reason)
    else:
        c.set_state(RecoveryState.WATCHING, reason)


def _act(c: Change, attempt: Attempt, advice: Advice) -> None:
    """Carry out advice decided in act mode, or approved: cancel for a stop, else isolate and restart."""
    if advice.action == AdviceAction.STOP:
        _cancel(c, attempt, advice)
    else:
        _restart(c, attempt, advice)


def _cancel(c: Change, attempt: Attempt, advice: Advice) -> None:
    """Stop means stop: cancel the attempt (the activity reads it again first: an ended or moved-on job is left
    alone), so its allocation goes back to the cluster."""
    c.set_state(RecoveryState.ACTING, f"acting on advice {advice.generation}: {advice.reason}")
    if advice.decided_by is None:
        advice.decided_by, advice.decided_at = "lazarus (act mode)", c.now
    c.emit(
        Cancel(
            request=CancelRequest(job_id=c.s.job_id, expected_attempt=attempt.index, reason=advice.reason),
            task_queue=c.s.scheduler_queue,
        )
    )


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
                user=c.s.user,
                source=advice.implicated_by,
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
                lost_nodes=lost_nodes(advice),
                reason=advice.reason,
                expedite=advice.expedite,
            ),
            task_queue=c.s.scheduler_queue,
        )
    )


def lost_nodes(advice: Advice) -> list[str]:
    """The excluded nodes that the node agents found dead (liveness): the restart may set them DOWN if their slurmd
    does not answer either, so the requeued job is not held COMPLETING until Slurm's SlurmdTimeout."""
    if advice.signature == NODE_LOST_SIGNATURE and advice.implicated_by == EvidenceSource.NODE_AGENT:
        return list(advice.exclude_nodes)
    return []
