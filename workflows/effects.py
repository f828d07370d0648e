"""What the pure event path takes in and what it asks the workflow to do, as plain typed values.

:func:`workflows.transitions.apply` takes the recovery state, one *input* and the
time, and returns the new state and a list of *effects*. The workflow performs
the effects in order; an effect that runs an activity or waits for an operator
comes back as an input (its outcome), which the workflow applies in turn.

Inputs: the telemetry loop's job events (``lazarus.models.recovery``), an
operator's :class:`ModeChange`, and the outcomes below. :class:`Decide` is both:
an effect ("decide this anomaly") that the workflow hands straight back as an
input once it is ready to decide.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from lazarus.models.ledger import Implication
from lazarus.models.notify import Notice
from lazarus.models.policy import Mode
from lazarus.models.recovery import (
    Anomaly,
    AnomalyDetected,
    Approval,
    AttemptEnded,
    AttemptStarted,
    AttemptSuspension,
    LedgerNote,
    ModeChange,
    ProgressDigest,
    ProgressQuery,
    ProgressView,
    RecoveryState,
    Rejection,
    TelemetryNote,
)
from lazarus.models.slurm import CancelRequest, CancelResult, LiftRequest, NodeAction, RestartRequest, RestartResult

# ---- effects ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchAttributes:
    """Upsert these search attributes (one upsert; unset fields are left alone). ``nodes`` goes with
    ``signature``: the implicated nodes are always written, the signature only when there is one."""

    state: RecoveryState | None = None
    mode: Mode | None = None
    signature: str | None = None
    nodes: tuple[str, ...] | None = None
    attempt: int | None = None
    generation: int | None = None


@dataclass(frozen=True)
class Details:
    """Show this as the workflow's current details (Temporal UI)."""

    text: str


@dataclass(frozen=True)
class Warn:
    """Log this warning from the workflow (not replayed into logs twice)."""

    text: str


@dataclass(frozen=True)
class Decide:
    """Decide what to do about this anomaly (an incident). Also an input: see the module docstring.

    ``unpatched``: the patch ids (:mod:`workflows.patches`) the run predates, filled in by the workflow when
    it hands the effect back as an input; the decision follows their old rules.
    """

    anomaly: Anomaly
    unpatched: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CheckProgress:
    """Ask the telemetry worker for fresh progress before calling the attempt hung → ProgressChecked."""

    query: ProgressQuery
    task_queue: str


@dataclass(frozen=True)
class AwaitAnswer:
    """Wait for an operator's answer to advice ``generation``, a mode switch to act, or a new attempt of
    the job (after ``attempt``), for at most ``timeout`` → Answered or DecisionExpired. ``wake_on_act`` False:
    the job's act mode does not end the wait (the cluster-wide mode could not be read: only a person may).
    ``wake_on_end``: the end of ``attempt`` ends the wait too (a stop that would cancel it has nothing left
    to ask about)."""

    generation: int
    attempt: int
    timeout: timedelta
    wake_on_act: bool = True
    wake_on_end: bool = False


@dataclass(frozen=True)
class CheckMode:
    """Read the cluster-wide mode (the kill switch) from the node ledger right before acting without a
    person's approval → ModeChecked."""

    ledger_workflow_id: str
    task_queue: str


@dataclass(frozen=True)
class Isolate:
    """Report the implicated nodes to the node ledger (one signal each), the only path to a drain →
    DrainFailed when a drain was asked for and no ledger took it (``drain``: what runs from before drained
    directly)."""

    ledger_workflow_id: str | None
    implications: tuple[Implication, ...]
    drain: NodeAction | None
    task_queue: str


@dataclass(frozen=True)
class Requeue:
    """Run the verified restart (requeuehold, exclude, release) → Requeued or RequeueFailed."""

    request: RestartRequest
    task_queue: str


@dataclass(frozen=True)
class Cancel:
    """Stop means stop: cancel the attempt the stop was decided for, if fresh state shows it still holds its
    allocation, and verify it left RUNNING/PENDING → Cancelled or CancelFailed."""

    request: CancelRequest
    task_queue: str


@dataclass(frozen=True)
class ReleaseHold:
    """Fail-open: release the job, which a restart of Lazarus's may have left held → HoldReleased. Only a hold
    of Lazarus's kind on ``attempt`` (the attempt the restart replaced) or on the next one is released."""

    job_id: int
    task_queue: str
    attempt: int | None = None


@dataclass(frozen=True)
class LiftExpedite:
    """The expedited attempt runs: set its priority back (only if it still has exactly the boosted one) →
    ExpediteLifted."""

    request: LiftRequest
    generation: int
    task_queue: str


@dataclass(frozen=True)
class Notify:
    """Post this notice to the webhooks (an activity the workflow does not wait for: notices never hold up a
    recovery) → no outcome."""

    notice: Notice
    task_queue: str


Effect = (
    SearchAttributes
    | Details
    | Warn
    | Decide
    | CheckProgress
    | AwaitAnswer
    | CheckMode
    | Isolate
    | Requeue
    | Cancel
    | ReleaseHold
    | LiftExpedite
    | Notify
)

# ---- outcomes (inputs) --------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkflowStarted:
    """The workflow began (or continued as new)."""


@dataclass(frozen=True)
class WatchdogFired:
    """The watchdog's deadline passed with no new event: the hang or the attempt-start deadline."""


@dataclass(frozen=True)
class ProgressChecked:
    """Telemetry's view of the attempt's progress; ``unreachable`` says why telemetry could not be asked (the
    view is then empty: Lazarus is blind to the attempt)."""

    attempt: int
    view: ProgressView
    unreachable: str | None = None


@dataclass(frozen=True)
class Answered:
    """The wait for an answer ended: an approval, a rejection, or None (mode switched, or superseded).

    ``news``: what the telemetry loop reported about the job's attempts while the workflow waited, not yet
    applied (attempt ends and starts, oldest first): the job's state at the moment of acting.
    """

    answer: Approval | Rejection | None
    news: tuple[AttemptStarted | AttemptEnded, ...] = ()


@dataclass(frozen=True)
class ModeChecked:
    """The cluster-wide mode read before acting: ``mode`` (None: no operator override), or ``error`` when it
    could not be read. ``read`` False: not read at all (a workflow that began before the read existed)."""

    mode: Mode | None = None
    error: str | None = None
    read: bool = True


@dataclass(frozen=True)
class AnswerRefused:
    """An approval, rejection or mode change sent as a signal was refused (``reason``): the sender cannot be
    told, so the refusal is recorded in the job's state and shown. ``by``: the caller's identity when the
    message carried one, else its free-text ``operator`` (None: that note)."""

    answer: Approval | Rejection | ModeChange
    reason: str
    by: str | None = None


@dataclass(frozen=True)
class DecisionExpired:
    """Nobody answered the advice within the policy's decision timeout."""


@dataclass(frozen=True)
class DrainFailed:
    cause: str


@dataclass(frozen=True)
class Requeued:
    result: RestartResult


@dataclass(frozen=True)
class RequeueFailed:
    cause: str


@dataclass(frozen=True)
class Cancelled:
    """The stop's cancel ran: cancelled and verified, found already cancelled, or left alone (the attempt had
    ended on its own, or the job had moved on; ``result.not_done_reason``)."""

    result: CancelResult


@dataclass(frozen=True)
class CancelFailed:
    """The scheduler refused the cancel for good (or it never verified): the job may still hold its allocation."""

    cause: str


@dataclass(frozen=True)
class HoldReleased:
    """The fail-open release succeeded: no hold of Lazarus's remains."""


JobEvent = (
    AttemptStarted | ProgressDigest | AttemptEnded | AnomalyDetected | TelemetryNote | AttemptSuspension | LedgerNote
)


@dataclass(frozen=True)
class ExpediteLifted:
    """What became of the lift of advice ``generation``'s expedite: ``lifted`` when the priority was set back;
    ``note`` says why not (the job moved on, someone else changed its priority, the activity failed)."""

    generation: int
    lifted: bool
    note: str = ""


Input = (
    JobEvent
    | ModeChange
    | WorkflowStarted
    | WatchdogFired
    | ProgressChecked
    | Decide
    | Answered
    | ModeChecked
    | AnswerRefused
    | DecisionExpired
    | DrainFailed
    | Requeued
    | RequeueFailed
    | Cancelled
    | CancelFailed
    | HoldReleased
    | ExpediteLifted
)
