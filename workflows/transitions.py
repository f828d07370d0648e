"""The pure event path: ``apply(state, input, now) -> (state, effects)``.

Everything that happens to a job's recovery is an input applied here: a job
event from the telemetry loop (attempt started or ended, coarse progress, an
anomaly), an operator's mode change, the watchdog firing, or the outcome of an
effect the workflow performed (see :mod:`workflows.effects`). No Temporal
calls, no clock, no I/O: the workflow passes ``now`` in, and the same inputs
always give the same state and effects, so replay is deterministic and every
rule is tested in plain pytest (tests/workflows/test_transitions.py).

Example story: attempt 0 ends FAILED with no log line → the scheduler's view
becomes the anomaly → ``Decide`` → restart advice in act mode → ``Requeue`` →
``Requeued`` → verifying → attempt 1 starts → watching.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

from lazarus.models.diagnosis import FailureKind
from lazarus.models.policy import Mode
from lazarus.models.recovery import (
    MAX_APPLIED_EVENT_IDS,
    MAX_REFUSED_ANSWERS,
    MAX_TELEMETRY_NOTES,
    AdviceAction,
    AdviceStatus,
    Anomaly,
    AnomalyDetected,
    Approval,
    Attempt,
    AttemptEnded,
    AttemptStarted,
    AttemptSuspension,
    HangBudgetInForce,
    JobRecoveryInput,
    LedgerNote,
    ModeChange,
    ProgressDigest,
    ProgressQuery,
    RecoveryState,
    RefusedAnswer,
    TelemetryNote,
)
from lazarus.models.slurm import JobState
from workflows import acting, blindness
from workflows.change import Change
from workflows.decision import hang_diagnosis, scheduler_diagnosis
from workflows.effects import (
    Answered,
    AnswerRefused,
    CancelFailed,
    Cancelled,
    CheckProgress,
    Decide,
    DecisionExpired,
    Details,
    DrainFailed,
    Effect,
    ExpediteLifted,
    HoldReleased,
    Input,
    ModeChecked,
    ProgressChecked,
    Requeued,
    RequeueFailed,
    SearchAttributes,
    Warn,
    WatchdogFired,
    WorkflowStarted,
)
from workflows.timers import hang_budget, hang_budget_in_force, hang_deadline


class Step(NamedTuple):
    state: JobRecoveryInput
    effects: list[Effect]


def apply(state: JobRecoveryInput, event: Input, now: datetime) -> Step:
    """Apply one input to a copy of ``state``; return the new state and the effects to perform, in order.
    A telemetry event whose id was applied already (a redelivery) changes nothing."""
    change = Change(state, now)
    if _first_delivery(change, event):
        _HANDLERS[type(event)](change, event)
    return Step(change.s, change.effects)


def _first_delivery(c: Change, event: Input) -> bool:
    """Telemetry delivers at least once; remember the latest ids (a bounded window, carried across
    continue-as-new) so that each event is applied at most once. Events without an id are always applied."""
    if not isinstance(event, _TELEMETRY_EVENTS) or event.id is None:
        return True
    if event.id in c.s.applied_event_ids:
        return False
    c.s.applied_event_ids = [*c.s.applied_event_ids, event.id][-MAX_APPLIED_EVENT_IDS:]
    return True


def watchdog_deadline(state: JobRecoveryInput) -> tuple[datetime | None, str | None]:
    """When the one watchdog must fire, and what it is: the hang watchdog while an undecided attempt runs,
    the attempt-start watchdog while a requeue waits for its next attempt; else none."""
    attempt = state.attempts[-1] if state.attempts else None
    if attempt and state.state == RecoveryState.WATCHING and not _decided(state, attempt):
        return hang_deadline(
            state.policy, attempt, backstop_in_force(state)
        ), f"hang watchdog (attempt {attempt.index})"
    if attempt and state.state == RecoveryState.VERIFYING and state.verify_deadline:
        return state.verify_deadline, f"attempt-start watchdog (attempt {attempt.index + 1})"
    return None, None


def backstop_in_force(state: JobRecoveryInput) -> bool:
    """Telemetry keeps the current attempt's hang clock and this run follows it: the hang timer is a backstop
    (``workflows.timers.BACKSTOP``), replaced whenever progress moves it later."""
    attempt = state.attempts[-1] if state.attempts else None
    return (
        state.follows_hang_clock
        and state.state == RecoveryState.WATCHING
        and attempt is not None
        and attempt.hang_clock
    )


def hang_budget_now(state: JobRecoveryInput) -> HangBudgetInForce | None:
    """The hang budget behind the hang watchdog's deadline (:func:`watchdog_deadline`); None when the hang
    watchdog does not run."""
    attempt = state.attempts[-1] if state.attempts else None
    if attempt is None or state.state != RecoveryState.WATCHING or _decided(state, attempt):
        return None
    if hang_deadline(state.policy, attempt) is None:
        return None
    return hang_budget_in_force(state.policy, attempt)


def answer_refusal(state: JobRecoveryInput, generation: int, answered: bool) -> str | None:
    """Why an approval or rejection of advice ``generation`` must be refused now; None to accept it."""
    advice = state.advice_history[-1] if state.advice_history else None
    if advice is None or advice.status != AdviceStatus.PENDING or state.state != RecoveryState.AWAITING_APPROVAL:
        return f"no advice is awaiting approval for this job (state {state.state.value})"
    if generation != advice.generation:
        return f"stale advice generation {generation}: the advice awaiting approval is generation {advice.generation}"
    if answered:
        return f"advice generation {generation} has already been answered"
    return None


def _decided(state: JobRecoveryInput, attempt: Attempt) -> bool:
    """An attempt whose advice (other than advice-only) was already decided gets no second hang call:
    after a rejection or expiry the operator owns it, until the next attempt. Nor does one whose hang call was
    advice only (it had finished training: it is ending, and its end is what the workflow waits for)."""
    if attempt.advice_generation is None:
        return False
    advice = state.advice_history[attempt.advice_generation - 1]
    hang = attempt.anomaly if attempt.anomaly is not None and attempt.anomaly.kind == FailureKind.HANG else None
    return advice.action != AdviceAction.NONE or (hang is not None and advice.signature == hang.diagnosis.signature)


def _workflow_started(c: Change, _: WorkflowStarted) -> None:
    if c.s.opt_in_error:
        c.set_state(RecoveryState.IGNORED, f"ignored: {c.s.opt_in_error}")
        c.s.stop_reason = c.s.opt_in_error


def _mode_change(c: Change, change: ModeChange) -> None:
    if change.scope == "cluster":
        c.s.cluster_mode = change.mode or Mode.MONITOR
        if c.s.cluster_mode == Mode.MONITOR:
            c.s.job_mode, c.s.job_mode_by_operator = None, False  # the kill switch wins over every per-job choice
        # lifting it (act) keeps a job's own request for monitor mode
    else:
        c.s.job_mode, c.s.job_mode_by_operator = change.mode, change.mode is not None
    c.emit(SearchAttributes(mode=c.mode))


def _attempt_started(c: Change, event: AttemptStarted) -> None:
    attempt = c.attempt(event.attempt)
    attempt.nodes, attempt.excluded_nodes = list(event.nodes), list(event.excluded_nodes)
    attempt.started_at = attempt.started_at or event.at
    c.emit(SearchAttributes(attempt=attempt.index))
    advice = c.current_advice
    if advice and advice.status == AdviceStatus.PENDING and advice.attempt < attempt.index:
        advice.status = AdviceStatus.SUPERSEDED
    if c.s.state == RecoveryState.VERIFYING:
        c.set_state(RecoveryState.WATCHING, f"attempt {attempt.index} running on {','.join(attempt.nodes)}")
    acting.lift_expedite(c, attempt)


def _progress(c: Change, event: ProgressDigest) -> None:
    attempt = c.attempt(event.attempt)
    c.record_progress(attempt, event.step, event.last_progress_at, event.checkpoint, event.max_step_interval)
    if event.first_progress_at is not None:
        c.record_first_progress(attempt, event.first_step, event.first_progress_at)
    else:  # telemetry older than the milestones: the first digest is the nearest it tells
        c.record_first_progress(attempt, event.step, event.last_progress_at)
    attempt.checkpointing = event.checkpointing
    attempt.hang_budget = event.hang_budget or attempt.hang_budget
    attempt.total_steps = event.total_steps or attempt.total_steps
    attempt.hang_clock = event.hang_clock
    _sight_back(c, attempt, event.observed_at)  # the digest is telemetry's heartbeat
    if event.silent and c.s.follows_hang_clock and _hang_watch_runs(c, attempt):
        _check_progress(c, attempt)  # telemetry's hang clock ran out: the check the watchdog would make


def _hang_watch_runs(c: Change, attempt: Attempt) -> bool:
    """The hang watchdog runs for this attempt: the current one, watched, undecided, undiagnosed, running."""
    current = c.current_attempt
    return (
        current is attempt
        and c.s.state == RecoveryState.WATCHING
        and not _decided(c.s, attempt)
        and (attempt.anomaly is None or attempt.anomaly.kind == FailureKind.STRAGGLER)
        and hang_deadline(c.s.policy, attempt) is not None
    )


def _check_progress(c: Change, attempt: Attempt) -> None:
    """Ask telemetry for its progress view before calling a hang (``ProgressChecked`` answers)."""
    c.emit(CheckProgress(query=ProgressQuery(job_id=c.s.job_id, attempt=attempt.index), task_queue=c.s.telemetry_queue))


def _sight_back(c: Change, attempt: Attempt, at: datetime | None) -> None:
    """Telemetry saw the attempt at ``at``: an open blind spell ends there."""
    spell = blindness.observed(attempt, at)
    if spell is not None:
        c.emit(Details(f"attempt {attempt.index} seen again after {spell.seconds:.0f} s blind ({spell.reason})"))


def _blind(c: Change, attempt: Attempt, since: datetime, reason: str) -> None:
    """The hang watchdog is due but Lazarus cannot see the attempt: record it, and check again later."""
    spell = blindness.went_blind(attempt, since, reason, c.now)
    if spell.checks == 1:
        c.emit(
            Warn(
                f"job {c.s.job_id}: Lazarus cannot see attempt {attempt.index} ({reason}); the hang watchdog "
                "waits for a fresh observation"
            )
        )
    c.emit(Details(f"blind to attempt {attempt.index} for {spell.seconds:.0f} s: {reason}"))


def _suspension(c: Change, event: AttemptSuspension) -> None:
    """A suspended attempt cannot progress: the hang watchdog stops, and on resume its budget starts afresh."""
    attempt = c.attempt(event.attempt)
    if event.suspended:
        attempt.suspended_at = attempt.suspended_at or event.at
        c.emit(Details(f"attempt {attempt.index} suspended by Slurm since {event.at:%H:%M:%S}: hang watchdog paused"))
    elif attempt.suspended_at is not None:
        attempt.suspended_at, attempt.resumed_at = None, event.at
        c.emit(Details(f"attempt {attempt.index} resumed at {event.at:%H:%M:%S}: hang watchdog armed afresh"))


def _attempt_ended(c: Change, event: AttemptEnded) -> None:
    attempt = c.attempt(event.attempt)
    attempt.ended_at, attempt.end_state, attempt.exit_code = event.at, event.state, event.exit_code
    _sight_back(c, attempt, c.now)  # the scheduler showed the end
    if event.nodes and not attempt.nodes:
        attempt.nodes = list(event.nodes)
    if c.s.state not in (RecoveryState.WATCHING, RecoveryState.VERIFYING):
        return  # we are acting on this attempt already
    if event.state == JobState.COMPLETED and event.exit_code in (0, None):
        attempt.outcome = "completed successfully"
        c.set_state(RecoveryState.COMPLETED, f"job completed in attempt {attempt.index}")
    elif event.state == JobState.CANCELLED:
        attempt.outcome = "cancelled"
        c.s.stop_reason = "the job was cancelled outside Lazarus"
        c.set_state(RecoveryState.STOPPED, c.s.stop_reason)
    elif event.state in (JobState.REQUEUED, JobState.PENDING):
        attempt.outcome = attempt.outcome or "requeued by Slurm"
    elif attempt.advice_generation is not None:
        advice = c.s.advice_history[attempt.advice_generation - 1]
        if c.s.state == RecoveryState.WATCHING and advice.status in (AdviceStatus.REJECTED, AdviceStatus.EXPIRED):
            c.s.stop_reason = (
                f"attempt {attempt.index} ended {event.state.value} after advice "
                f"{advice.generation} was {advice.status.value}; Lazarus leaves the job alone"
            )
            c.set_state(RecoveryState.STOPPED, c.s.stop_reason)
    elif attempt.anomaly is not None:
        if c.s.state == RecoveryState.WATCHING:
            c.emit(Decide(attempt.anomaly))
    else:
        diagnosis = scheduler_diagnosis(event)
        if diagnosis is None:
            return
        attempt.anomaly = Anomaly(
            attempt=attempt.index,
            kind=FailureKind.CRASH,
            diagnosis=diagnosis,
            source="scheduler",
            observed_at=event.at,
            recorded_at=c.now,
        )
        c.emit(
            SearchAttributes(signature=diagnosis.signature, nodes=tuple(diagnosis.implicated_nodes)),
            Decide(attempt.anomaly),
        )


def _anomaly(c: Change, event: AnomalyDetected) -> None:
    attempt = c.attempt(event.anomaly.attempt)
    current = c.current_attempt
    if attempt.index < (current.index if current else 0):
        return  # about an attempt that is already over
    if attempt.anomaly is not None and attempt.anomaly.kind != FailureKind.STRAGGLER:
        return  # one failure per attempt (straggler findings are advice); later lines are victims or repeats
    attempt.anomaly = event.anomaly.model_copy(update={"recorded_at": c.now})
    diag = attempt.anomaly.diagnosis
    c.emit(SearchAttributes(signature=diag.signature, nodes=tuple(diag.implicated_nodes)))
    if c.s.state == RecoveryState.WATCHING:
        c.emit(Decide(attempt.anomaly))


def _watchdog_fired(c: Change, _: WatchdogFired) -> None:
    """Verifying: the requeued attempt did not start in time; report it, make sure it is not held, keep
    waiting. Watching: the attempt was silent for its hang budget; confirm with fresh telemetry first."""
    attempt = c.current_attempt
    if attempt is None:
        return
    if c.s.state == RecoveryState.VERIFYING:
        attempt.outcome = (
            f"requeued, but attempt {attempt.index + 1} had not started after {c.s.policy.attempt_start_timeout}"
        )
        c.emit(Warn(f"job {c.s.job_id}: {attempt.outcome}"), Details(attempt.outcome))
        c.s.verify_deadline = c.now + c.s.policy.attempt_start_timeout
        acting.release_if_held(c)
    elif attempt.anomaly is None or attempt.anomaly.kind == FailureKind.STRAGGLER:  # else already diagnosed
        _check_progress(c, attempt)


def _progress_checked(c: Change, checked: ProgressChecked) -> None:
    """Fresh progress moves the deadline on; a blind telemetry (or none to ask) records a blind spell and
    the watchdog waits; telemetry that has not read the attempt yet gets one more budget; otherwise the
    attempt is hung."""
    attempt, view = c.attempt(checked.attempt), checked.view
    if view.suspended:  # suspended before its suspension event arrived: no hang while Slurm holds it still
        _suspension(c, AttemptSuspension(attempt=attempt.index, suspended=True, at=c.now))
        return
    blind = _blindness(checked)
    since = blindness.last_seen(attempt, view.observed_at, c.now)  # before new progress moves it
    if (
        view.known
        and view.last_progress_at
        and (attempt.last_progress_at is None or view.last_progress_at > attempt.last_progress_at)
    ):
        c.record_progress(attempt, view.step, view.last_progress_at, view.checkpoint, view.max_step_interval)
        if view.first_progress_at is not None:
            c.record_first_progress(attempt, view.first_step, view.first_progress_at)
        else:
            c.record_first_progress(attempt, view.step, view.last_progress_at)
        attempt.checkpointing = view.checkpointing
        attempt.hang_budget = view.hang_budget or attempt.hang_budget
        attempt.total_steps = view.total_steps or attempt.total_steps
        if blind:
            _blind(c, attempt, since, blind)
        else:
            _sight_back(c, attempt, view.observed_at or c.now)
        return
    if blind:
        _blind(c, attempt, since, blind)
        return
    _sight_back(c, attempt, view.observed_at or c.now)  # telemetry vouches for its view now
    attempt.total_steps = view.total_steps or attempt.total_steps  # the total may come with the last line only
    if not view.known and attempt.last_progress_at is None and attempt.started_at is not None:
        attempt.last_progress_at = c.now  # telemetry restarted and has not read this attempt yet
        return
    marks = [t for t in (attempt.last_progress_at or attempt.started_at, attempt.resumed_at) if t is not None]
    silent = (c.now - max(marks, default=c.now)).total_seconds()
    attempt.anomaly = Anomaly(
        attempt=attempt.index,
        kind=FailureKind.HANG,
        diagnosis=hang_diagnosis(attempt, silent),
        source="hang-watchdog",
        observed_at=c.now,
        recorded_at=c.now,
        hang_budget_s=hang_budget(c.s.policy, attempt).total_seconds(),
    )
    c.emit(SearchAttributes(signature=attempt.anomaly.diagnosis.signature, nodes=()), Decide(attempt.anomaly))


def _blindness(checked: ProgressChecked) -> str | None:
    """Why the check cannot see the attempt: telemetry unreachable, or telemetry's own word (None: it can)."""
    if checked.unreachable is not None:
        return f"telemetry unreachable ({checked.unreachable})"
    return checked.view.blind


def _answer_refused(c: Change, event: AnswerRefused) -> None:
    """A signal (an answer, or a mode change from a caller not permitted) cannot be refused to its sender:
    record the refusal (the newest few), log it and show it in the workflow's current details, so `lazarus show`, `lazarus advice list` and the Temporal UI say why."""
    answer = event.answer
    refused = RefusedAnswer(
        kind="mode" if isinstance(answer, ModeChange) else "approve" if isinstance(answer, Approval) else "reject",
        generation=None if isinstance(answer, ModeChange) else answer.generation,
        operator=event.by or answer.operator,
        reason=event.reason,
        at=c.now,
    )
    c.s.refused_answers = [*c.s.refused_answers, refused][-MAX_REFUSED_ANSWERS:]
    c.emit(Warn(f"job {c.s.job_id}: {refused.describe()}"), Details(f"{c.s.state.value}; {refused.describe()}"))


def _telemetry_note(c: Change, event: TelemetryNote) -> None:
    """What telemetry would not or could not do (a refused log file): kept once, a bounded number of them."""
    if event.text not in c.s.telemetry_notes and len(c.s.telemetry_notes) < MAX_TELEMETRY_NOTES:
        c.s.telemetry_notes.append(event.text)


_TELEMETRY_EVENTS = (AttemptStarted, ProgressDigest, AttemptEnded, AnomalyDetected, TelemetryNote)


def _ledger_note(c: Change, event: LedgerNote) -> None:
    """What the node ledger did about a node the job implicated: kept once, the newest of them."""
    if event.text not in c.s.ledger_notes:
        c.s.ledger_notes = [*c.s.ledger_notes, event.text][-MAX_TELEMETRY_NOTES:]


_HANDLERS: dict[type, Callable[[Change, Any], None]] = {
    WorkflowStarted: _workflow_started,
    ModeChange: _mode_change,
    AttemptStarted: _attempt_started,
    ProgressDigest: _progress,
    AttemptEnded: _attempt_ended,
    AnomalyDetected: _anomaly,
    TelemetryNote: _telemetry_note,
    AttemptSuspension: _suspension,
    LedgerNote: _ledger_note,
    WatchdogFired: _watchdog_fired,
    ProgressChecked: _progress_checked,
    Decide: acting.decide,
    Answered: acting.answered,
    ModeChecked: acting.mode_checked,
    AnswerRefused: _answer_refused,
    DecisionExpired: acting.expired,
    DrainFailed: acting.drain_failed,
    Requeued: acting.requeued,
    RequeueFailed: acting.requeue_failed,
    Cancelled: acting.cancelled,
    CancelFailed: acting.cancel_failed,
    HoldReleased: acting.hold_released,
    ExpediteLifted: acting.expedite_lifted,
}
