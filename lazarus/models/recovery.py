"""The recovery record of one training job: attempts, anomalies, advice, approvals, events.

Every workflow input, signal, update and query of `JobRecoveryWorkflow` takes or
returns one of these models, so fields can be added with defaults without
breaking stored histories. Enum values are never removed (rename to
``DEPRECATED_...``): they may sit in a stored history.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from lazarus.models import names
from lazarus.models.diagnosis import Category, Diagnosis, EvidenceSource, FailureKind, within_allocation
from lazarus.models.policy import HangPhase, Mode, Policy
from lazarus.models.slurm import ExpediteResult, JobState


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RecoveryState(StrEnum):
    """Where a job's recovery stands; also the `RecoveryState` search attribute."""

    WATCHING = "watching"  # attempt running (or pending), nothing wrong seen
    SUSPECTED = "suspected"  # anomaly recorded, deciding
    AWAITING_APPROVAL = "awaiting-approval"  # monitor mode: advice published, waiting for an operator
    ACTING = "acting"  # isolating nodes / requeueing
    VERIFYING = "verifying"  # requeued; waiting for the next attempt to start
    COMPLETED = "completed"  # the job finished successfully (terminal)
    STOPPED = "stopped"  # Lazarus decided not to recover, or the job ended unrecoverably (terminal)
    FAILED = "failed"  # Lazarus itself could not act (terminal)
    IGNORED = "ignored"  # the job's opt-in comment is invalid; Lazarus leaves it alone (terminal)


TERMINAL_STATES = frozenset(
    {RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, RecoveryState.IGNORED}
)


class AdviceAction(StrEnum):
    RESTART = "restart"
    STOP = "stop"
    NONE = "none"


class AdviceStatus(StrEnum):
    PENDING = "pending"  # published, not yet approved (monitor mode)
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"  # decision watchdog fired: nobody approved in time (fail-open)
    EXECUTED = "executed"
    SUPERSEDED = "superseded"  # the job moved on (new attempt, completed) before the advice was acted on
    FAILED = "failed"  # acting on it failed
    NOT_EXECUTED = "not-executed"  # decided or approved, but the fresh state at the moment of acting said no


class Anomaly(_Model):
    """Something wrong with one attempt."""

    attempt: int = Field(ge=0)
    kind: FailureKind
    diagnosis: Diagnosis
    source: Literal["log", "scheduler", "hang-watchdog", "straggler", "liveness"] = "log"
    observed_at: datetime = Field(description="when the evidence appeared (failing line seen, job end, deadline)")
    recorded_at: datetime | None = Field(None, description="when the workflow recorded it (workflow time)")
    hang_budget_s: float | None = Field(None, description="the hang budget in force (hang anomalies)")


class Advice(_Model):
    """The recorded decision for one attempt. Approvals name the generation they approve."""

    generation: int = Field(ge=1)
    attempt: int = Field(ge=0)
    action: AdviceAction
    exclude_nodes: list[str] = Field(default_factory=list)
    drain_nodes: list[str] = Field(default_factory=list)
    reason: str
    category: Category = Category.UNKNOWN
    signature: str | None = None
    evidence: list[str] = Field(default_factory=list, description="short evidence lines")
    implicated_by: EvidenceSource = Field(
        EvidenceSource.JOB_OUTPUT,
        description="where the evidence against the nodes comes from (the job's own "
        "output alone never drains a node for everyone)",
    )
    status: AdviceStatus = AdviceStatus.PENDING
    created_at: datetime
    expires_at: datetime | None = None
    decided_by: str | None = Field(None, description="operator who approved/rejected, or 'lazarus' in act mode")
    decided_at: datetime | None = None
    comment: str | None = None
    not_executed_reason: str | None = Field(
        None,
        description="why the advice was not carried out (status not-executed), e.g. the job completed "
        "before the approved action",
    )
    exclusions_applied: bool | None = Field(
        None,
        description="after the restart: whether the new attempt carries the advised exclusions (None: "
        "no exclusions advised, or not acted on)",
    )
    not_applied_reason: str | None = Field(None, description="why the advised exclusions were not applied")
    monitor_reason: str | None = Field(
        None,
        description="why advice decided in act mode waited for a person: the kill switch was thrown, or "
        "the cluster-wide mode could not be read at the moment of acting",
    )
    expedite: bool = Field(
        False, description="the restart is to go to the top of its partition's queue (workflows/expedite.py)"
    )
    expedite_reason: str | None = Field(
        None, description="why the restart is, or is not, expedited (None: the policy's expedite is off)"
    )
    expedited: ExpediteResult | None = Field(None, description="what the expedite did, read back from Slurm")
    expedite_lifted: bool | None = Field(
        None, description="the boost was lifted once the attempt ran (None: nothing to lift, or not yet)"
    )


class BlindSpell(_Model):
    """A time when Lazarus could not see an attempt (scheduler unreachable, log unreadable, telemetry down or
    lagging) and the hang watchdog, due then, waited instead of deciding."""

    since: datetime = Field(description="the last time Lazarus saw the attempt before it went blind")
    until: datetime | None = Field(None, description="the first fresh observation heard after it; None while blind")
    checked_at: datetime = Field(description="the latest hang check that found Lazarus blind (workflow time)")
    reason: str = Field(description="why Lazarus could not see the attempt, as the latest check found it")
    checks: int = Field(1, ge=1, description="hang checks that found Lazarus blind in this spell")

    @property
    def seconds(self) -> float:
        """How long Lazarus was blind (so far, while the spell lasts)."""
        return max(0.0, ((self.until or self.checked_at) - self.since).total_seconds())


MAX_BLIND_SPELLS = 10  # per attempt; later spells are merged into the last one


class Attempt(_Model):
    """One execution of the job (index = Slurm restart count)."""

    index: int = Field(ge=0)
    nodes: list[str] = Field(default_factory=list)
    excluded_nodes: list[str] = Field(default_factory=list)
    started_at: datetime | None = None
    ended_at: datetime | None = None
    end_state: JobState | None = None
    exit_code: int | None = None
    last_step: int | None = None
    total_steps: int | None = Field(
        None, description="the steps training declared it will run (its progress lines' total), when it said"
    )
    last_progress_at: datetime | None = None
    max_step_interval: timedelta | None = Field(None, description="slowest observed step interval")
    last_checkpoint: int | None = Field(None, description="newest checkpoint step saved during this attempt")
    checkpointing: bool = Field(False, description="inside a checkpoint save (the hang budget widens)")
    hang_budget: timedelta | None = Field(None, description="hang budget learned by telemetry (current phase)")
    start_checkpoint: int | None = Field(None, description="newest checkpoint known when the attempt started")
    anomaly: Anomaly | None = None
    advice_generation: int | None = None
    outcome: str | None = Field(None, description="what happened to this attempt, in words")
    requeued_at: datetime | None = Field(None, description="when Lazarus's requeue of this attempt was verified")
    first_step: int | None = Field(None, description="the step of the attempt's first progress line")
    first_progress_at: datetime | None = Field(
        None,
        description="when telemetry read the attempt's first progress line: training started (attempt 0) or "
        "training progress restored (a restarted attempt); running is not training",
    )
    resumed_from: int | None = Field(
        None,
        description="a restarted attempt: the checkpoint step it resumed from (the newest checkpoint seen before it "
        "below its first step; 0 when it started over)",
    )
    steps_lost: int | None = Field(
        None, description="a restarted attempt: the last step seen before it minus the checkpoint it resumed from"
    )
    observed_at: datetime | None = Field(
        None, description="the newest time telemetry said it saw the attempt (fresh scheduler row and readable log)"
    )
    blind_spells: list[BlindSpell] = Field(
        default_factory=list,
        description="when the hang watchdog could not "
        f"decide because Lazarus could not see the attempt (the first "
        f"{MAX_BLIND_SPELLS})",
    )
    suspended_at: datetime | None = Field(
        None, description="while Slurm shows the attempt SUSPENDED: since when (the hang watchdog does not run)"
    )
    resumed_at: datetime | None = Field(
        None, description="when the attempt last resumed from a suspension: its hang budget runs afresh from here"
    )
    hang_clock: bool = Field(
        False,
        description="telemetry keeps this attempt's hang clock (its digests said so): it signals a silence that "
        "reaches the budget, and the workflow's own hang timer is only a backstop",
    )

    @property
    def finished_training(self) -> bool:
        """Its progress reached the total steps its progress lines declared: training is over, the job is ending."""
        return self.total_steps is not None and self.last_step is not None and self.last_step >= self.total_steps

    def bound_to_allocation(self, nodes: list[str]) -> list[str]:
        """The ``nodes`` of this attempt's allocation, in order: the only nodes a decision about this
        attempt may exclude or drain (none when the allocation is not known)."""
        return within_allocation(nodes, self.nodes)[0]

    @property
    def saved_new_checkpoint(self) -> bool:
        if self.last_checkpoint is None:
            return False
        return self.start_checkpoint is None or self.last_checkpoint > self.start_checkpoint


MAX_TELEMETRY_NOTES = 20
MAX_APPLIED_EVENT_IDS = 128  # the window of telemetry event ids a workflow remembers, to apply each once
MAX_REFUSED_ANSWERS = 10


class RefusedAnswer(_Model):
    """An approval or rejection sent as a signal that the workflow refused: a signal cannot answer its
    sender, so the refusal is kept in the job's state (the newest :data:`MAX_REFUSED_ANSWERS`)."""

    kind: Literal["approve", "reject", "mode"]
    generation: int | None = Field(None, description="the advice generation answered (None for a mode change)")
    operator: str = Field(description="who sent it: the caller's identity when known, else the message's note")
    reason: str
    at: datetime

    def describe(self) -> str:
        """One sentence: what was refused, from whom, and why."""
        what = "mode signal" if self.kind == "mode" else f"{self.kind} signal for advice generation {self.generation}"
        return f"refused {what} from {self.operator}: {self.reason}"


class JobRecoveryInput(_Model):
    """Workflow input; also the state carried across continue-as-new."""

    cluster: str
    job_id: int = Field(ge=1)
    user: str = ""
    partition: str = ""
    job_name: str = ""
    policy_name: str = "default"
    policy: Policy = Policy()
    cluster_mode: Mode = Mode.MONITOR
    job_mode: Mode | None = Field(None, description="per-job override (`lazarus mode act --job N`)")
    job_mode_by_operator: bool = Field(
        False,
        description="job_mode was set by an operator's signal since the last "
        "kill switch reached the job: it stands without reading the ledger",
    )
    opt_in_error: str | None = Field(None, description="set when the job's comment is invalid: the job is ignored")
    opt_in_notes: list[str] = Field(
        default_factory=list,
        description="what became of the comment's requests "
        "beyond applying them (e.g. a request for act mode not needed or clamped)",
    )
    telemetry_notes: list[str] = Field(
        default_factory=list,
        description="what telemetry would not or could not "
        f"do for the job, e.g. a log file refused (the first {MAX_TELEMETRY_NOTES})",
    )
    ledger_notes: list[str] = Field(
        default_factory=list,
        description="what the node ledger did about the nodes "
        f"the job implicated, e.g. a drain waiting for corroboration (the first "
        f"{MAX_TELEMETRY_NOTES})",
    )
    refused_answers: list[RefusedAnswer] = Field(
        default_factory=list,
        description=f"answers and mode changes by signal that were refused, oldest first (the newest "
        f"{MAX_REFUSED_ANSWERS})",
    )
    operators: list[str] = Field(
        default_factory=list,
        description="who may answer advice and switch the job's mode (authorization.operators when the "
        "workflow started); empty: whoever may write to the namespace",
    )
    # carried across continue-as-new
    attempts: list[Attempt] = Field(default_factory=list)
    advice_history: list[Advice] = Field(default_factory=list)
    generation: int = 0
    state: RecoveryState = RecoveryState.WATCHING
    stop_reason: str | None = None
    last_checkpoint: int | None = None
    runs: int = 1
    verify_deadline: datetime | None = Field(None, description="attempt-start watchdog deadline while verifying")
    lazarus_hold: bool = Field(False, description="a restart Lazarus began may have left the job held")
    scheduler_queue: str = Field("lazarus-scheduler", description="task queue of the Slurm activities")
    telemetry_queue: str = Field("lazarus-telemetry", description="task queue of the telemetry activities")
    ledger_workflow_id: str | None = Field(None, description="node ledger to report implications to")
    applied_event_ids: list[str] = Field(
        default_factory=list,
        description="ids of the latest telemetry events "
        f"applied (at most {MAX_APPLIED_EVENT_IDS}): a redelivered one is ignored",
    )
    follows_hang_clock: bool = Field(
        False,
        description="this run takes telemetry's hang clock (patch `telemetry-keeps-the-hang-clock`): set by "
        "the run itself, never by the caller",
    )


# ---- events the telemetry loop sends (one signal per kind, `names.EVENT_SIGNALS`) -------------


class _JobEvent(_Model):
    """Telemetry delivers events at least once (it re-sends until a signal succeeds); the workflow applies
    each id once. Events from older telemetry carry no id."""

    id: str | None = Field(
        None, max_length=200, description="`<job>/<attempt>/<kind>/<n>`, the same for a resent event"
    )


class AttemptStarted(_JobEvent):
    type: Literal["attempt_started"] = "attempt_started"
    attempt: int = Field(ge=0)
    nodes: list[str]
    excluded_nodes: list[str] = Field(default_factory=list)
    at: datetime


class ProgressDigest(_JobEvent):
    """Coarse progress, never per step: sent on the first progress, a checkpoint, a phase or budget change, sight
    regained, a silence that reached the budget (``silent``) and as a keep-alive (lazarus/telemetry/tracker.py)."""

    type: Literal["progress"] = "progress"
    attempt: int = Field(ge=0)
    step: int | None = None
    last_progress_at: datetime
    checkpoint: int | None = Field(None, description="newest checkpoint step saved in this attempt")
    max_step_interval: timedelta | None = None
    checkpointing: bool = Field(False, description="a checkpoint save has started and not finished")
    hang_budget: timedelta | None = Field(None, description="budget learned by telemetry for the current phase")
    observed_at: datetime | None = Field(
        None,
        description="when telemetry last saw the job (fresh scheduler row "
        "and readable log): the heartbeat that ends a blind spell",
    )
    first_step: int | None = Field(None, description="the step of the attempt's first progress line")
    first_progress_at: datetime | None = Field(None, description="when telemetry read that first progress line")
    total_steps: int | None = Field(
        None, description="the total steps the progress lines declare (older telemetry: never sent)"
    )
    hang_clock: bool = Field(
        False,
        description="telemetry keeps the attempt's hang clock: it signals a silence that reaches the budget "
        "(older telemetry: never sent; the workflow's timer then runs at the budget)",
    )
    silent: bool = Field(
        False,
        description="telemetry's hang clock: the attempt has been silent for its budget, or telemetry has "
        "not seen it for that long (the workflow checks telemetry's progress view before calling a hang)",
    )


class AttemptEnded(_JobEvent):
    type: Literal["attempt_ended"] = "attempt_ended"
    attempt: int = Field(ge=0)
    state: JobState
    exit_code: int | None = None
    at: datetime
    nodes: list[str] = Field(default_factory=list)
    failed_nodes: list[str] = Field(default_factory=list, description="job nodes Slurm shows DOWN/failed")


class AttemptSuspension(_JobEvent):
    """Slurm shows the attempt SUSPENDED (``scontrol suspend``), or running again after it: a suspended job
    makes no progress by design, so the hang watchdog pauses."""

    type: Literal["suspension"] = "suspension"
    attempt: int = Field(ge=0)
    suspended: bool = Field(description="True: suspended now; False: resumed")
    at: datetime


class AnomalyDetected(_JobEvent):
    type: Literal["anomaly"] = "anomaly"
    anomaly: Anomaly


class TelemetryNote(_JobEvent):
    """Something telemetry would not or could not do for the job, e.g. a log file it refused to read."""

    type: Literal["note"] = "note"
    text: str = Field(min_length=1, max_length=500)


class LedgerNote(_JobEvent):
    """What the node ledger did about a node this job implicated (drained, or waiting for corroboration)."""

    type: Literal["ledger_note"] = "ledger_note"
    text: str = Field(min_length=1, max_length=500)


JobEvent = Annotated[
    AttemptStarted | ProgressDigest | AttemptEnded | AnomalyDetected | TelemetryNote | AttemptSuspension | LedgerNote,
    Field(discriminator="type"),
]


class JobEventEnvelope(_Model):
    """What the generic ``job_event`` signal carried before each kind of event had a signal of its own."""

    event: JobEvent


def event_signal(event: JobEvent) -> str:
    """The name of the signal that carries ``event`` (``attempt_started``, ``progress``, ``anomaly``, ...)."""
    return names.EVENT_SIGNALS[event.type]


# ---- operator messages ------------------------------------------------------------------------


class Approval(_Model):
    generation: int = Field(ge=1, description="the advice generation being approved")
    operator: str = Field(min_length=1)
    comment: str | None = None
    job_id: int | None = Field(
        None, description="the job the operator means (the CLI sets it); another job's workflow refuses the answer"
    )
    cluster: str | None = Field(None, description="the cluster of that job (the CLI sets it)")


class Rejection(_Model):
    generation: int = Field(ge=1)
    operator: str = Field(min_length=1)
    comment: str | None = None
    job_id: int | None = Field(None, description="the job the operator means (the CLI sets it)")
    cluster: str | None = Field(None, description="the cluster of that job (the CLI sets it)")


class ModeChange(_Model):
    mode: Mode | None = Field(description="None clears the per-job override")
    scope: Literal["job", "cluster"] = "job"
    operator: str = Field("cli", description="a note for people; who sent it is the caller's identity")


class DecisionReply(_Model):
    generation: int
    status: AdviceStatus
    message: str


class HangBudgetInForce(_Model):
    """The hang budget the watchdog applies to the running attempt, and where it comes from."""

    budget: timedelta
    phase: HangPhase
    source: Literal["telemetry", "policy"] = Field(
        description="learned by telemetry and sent with its digests, or the policy's rule for the phase (no digest yet)"
    )


class AttemptMilestones(_Model):
    """One attempt's milestones (rows from :func:`lazarus.models.milestones.of`). Times are UTC; Slurm's start
    and end times have one-second resolution, so ``running_at`` may read up to a second before ``requeued_at``."""

    attempt: int = Field(ge=0, description="the attempt (Slurm's restart count)")
    fault_at: datetime | None = Field(
        None,
        description="a restarted attempt: when the fault that ended the attempt before it was seen (its failing "
        "line, its end, or its hang budget running out)",
    )
    fault: str | None = Field(None, description="that fault's signature (or kind)")
    requeued_at: datetime | None = Field(
        None, description="when Lazarus's requeue of the attempt before was verified (None: Slurm requeued it)"
    )
    running_at: datetime | None = Field(None, description="when Slurm started the attempt (running, not training)")
    progress_restored_at: datetime | None = Field(
        None,
        description="when telemetry read the attempt's first progress line (attempt 0: training started)",
    )
    first_step: int | None = Field(None, description="the step of that first progress line")
    resumed_from: int | None = Field(None, description="the checkpoint step the attempt resumed from")
    steps_lost: int | None = Field(
        None, description="the last step seen before the attempt minus the checkpoint it resumed from"
    )
    completed_at: datetime | None = Field(None, description="when the attempt ended COMPLETED (the training ran out)")
    ended_at: datetime | None = Field(None, description="when the attempt ended, however it ended")
    end_state: JobState | None = None

    def since_fault(self, at: datetime | None) -> float | None:
        """Seconds from the fault to ``at`` (None when either is unknown)."""
        if self.fault_at is None or at is None:
            return None
        return (at - self.fault_at).total_seconds()

    @property
    def seconds(self) -> dict[str, float | None]:
        """Fault → requeued, running, progress restored and completed, in seconds."""
        return {
            "requeued": self.since_fault(self.requeued_at),
            "running": self.since_fault(self.running_at),
            "progress_restored": self.since_fault(self.progress_restored_at),
            "completed": self.since_fault(self.completed_at),
        }


class JobStatus(_Model):
    """What the `status` query returns."""

    cluster: str
    job_id: int
    state: RecoveryState
    mode: Mode
    policy_name: str
    attempts: list[Attempt]
    advice: Advice | None
    advice_history: list[Advice]
    stop_reason: str | None = None
    hang_deadline: datetime | None = None
    opt_in_notes: list[str] = Field(default_factory=list, description="notes on the job's opt-in comment")
    telemetry_notes: list[str] = Field(default_factory=list, description="e.g. a log file telemetry refused to read")
    ledger_notes: list[str] = Field(default_factory=list, description="e.g. a drain waiting for corroboration")
    refused_answers: list[RefusedAnswer] = Field(default_factory=list, description="answers by signal refused")
    hang_budget: HangBudgetInForce | None = Field(None, description="the hang budget behind hang_deadline")
    hang_clock: bool = Field(
        False,
        description="telemetry keeps the hang clock (a silence of hang_budget is checked at once); hang_deadline "
        "is then the workflow's backstop",
    )
    milestones: list[AttemptMilestones] = Field(
        default_factory=list,
        description="each attempt's milestones (fault, requeued, running, progress restored, completed); "
        "empty from workers older than the milestones: compute them with milestones.of(attempts)",
    )


class JobMemo(BaseModel):
    """The job workflow's memo, set when the telemetry loop starts it; `lazarus jobs` lists it.

    Read leniently (unknown keys ignored, every key optional): workflows started before a key existed
    lack it.
    """

    policy: str | None = Field(None, description="the policy the job's comment names (as asked for, even unknown)")
    ignored_reason: str | None = Field(None, description="why Lazarus ignores the job (its opt-in error)")

    def as_memo(self) -> dict[str, str]:
        return self.model_dump(exclude_none=True)


class ProgressQuery(_Model):
    job_id: int
    attempt: int


class ProgressView(_Model):
    """The telemetry loop's latest view of one attempt's progress."""

    known: bool = Field(description="False when the telemetry loop has not (yet) seen this attempt")
    step: int | None = None
    last_progress_at: datetime | None = None
    checkpoint: int | None = None
    max_step_interval: timedelta | None = None
    checkpointing: bool = False
    hang_budget: timedelta | None = None
    observed_at: datetime | None = Field(
        None,
        description="when telemetry last saw the attempt (fresh scheduler "
        "row and readable log); for an attempt it does not know, its last "
        "scheduler query",
    )
    blind: str | None = Field(
        None,
        description="why telemetry cannot see the attempt now (None: its view is "
        "fresh): the hang watchdog must not decide on it",
    )
    suspended: bool = Field(False, description="Slurm showed the attempt SUSPENDED in the loop's last cycle")
    first_step: int | None = Field(None, description="the step of the attempt's first progress line")
    first_progress_at: datetime | None = Field(None, description="when telemetry read that first progress line")
    total_steps: int | None = Field(
        None, description="the total steps the progress lines declare (older telemetry: never sent)"
    )
