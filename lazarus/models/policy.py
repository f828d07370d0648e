"""Recovery policy and mode: what Lazarus may do for a job, and how fast."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lazarus.models.spares import SparePool


class Mode(StrEnum):
    """Whether Lazarus acts on its own advice."""

    MONITOR = "monitor"  # publish advice, act only after an operator approves it
    ACT = "act"  # execute advice at once


class OnStop(StrEnum):
    """What a *stop* decision does to a job that still holds its allocation (its ranks blocked on a dead peer,
    or hung)."""

    CANCEL = "cancel"  # cancel it through the Slurm adapter, verified: the allocation goes back to the cluster
    KEEP_RUNNING = "keep_running"  # leave it running: its owner (or its time limit) ends it

    @property
    def rank(self) -> int:
        """How tight the choice is: a job comment may raise it, never lower it. Cancelling gives the
        allocation back, so it is the tighter choice (the same direction as a shorter hang budget)."""
        return 1 if self is OnStop.CANCEL else 0


class HangPhase(StrEnum):
    """What a running attempt is doing, as far as the hang budget cares."""

    STARTUP = "startup"  # no progress line yet in this attempt
    TRAINING = "training"
    CHECKPOINT = "checkpoint"  # a save has started and not finished

    @classmethod
    def of(cls, *, progressed: bool, checkpointing: bool) -> HangPhase:
        """The phase of an attempt that has (or has not) printed progress and is (or is not) saving."""
        if checkpointing:
            return cls.CHECKPOINT
        return cls.TRAINING if progressed else cls.STARTUP


class ExpeditePolicy(BaseModel):
    """Expedited requeue: a job restarted for an infrastructure or hardware failure goes to the top of its
    partition's queue (workflows/expedite.py decides, the Slurm adapter acts). Off by default."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(False, description="expedite restarts for infrastructure and hardware failures")
    max_expedited: int = Field(
        2,
        ge=1,
        description="expedite at most this many restarts for the same failure (signature); after that the job "
        "waits like everyone else, so a failing job cannot start a preemption storm",
    )

    def tightened(self, asked: ExpeditePolicy) -> ExpeditePolicy:
        """What a job comment may ask: turn it off, or lower the count; never turn it on or raise it."""
        return ExpeditePolicy(
            enabled=self.enabled and asked.enabled, max_expedited=min(self.max_expedited, asked.max_expedited)
        )


class Policy(BaseModel):
    """Per-job recovery policy. Operators define named policies; jobs pick one in their comment."""

    model_config = ConfigDict(extra="forbid")

    hang_budget: timedelta = Field(
        timedelta(minutes=30), description="no progress for this long while RUNNING is a hang"
    )
    hang_budget_min: timedelta = Field(
        timedelta(minutes=2),
        description="learned hang budget is never below this (a data stall or evaluation pause of a few "
        "steps must not look like a hang)",
    )
    hang_budget_max: timedelta = Field(timedelta(hours=2), description="learned hang budget is never above this")
    startup_grace: timedelta = Field(
        timedelta(minutes=10), description="time allowed from attempt start to the first progress line"
    )
    hang_step_multiple: float = Field(
        8.0, gt=1, description="learned hang budget = this multiple of the slowest observed step interval"
    )
    decision_timeout: timedelta = Field(
        timedelta(minutes=15), description="advice not approved in this time expires; a held job is released"
    )
    attempt_start_timeout: timedelta = Field(
        timedelta(minutes=30), description="a requeued attempt that does not start in this time is reported"
    )
    max_attempts_without_checkpoint: int = Field(
        3, ge=1, description="stop after this many consecutive attempts that saved no new checkpoint"
    )
    max_attempts: int = Field(10, ge=1, description="stop after this many attempts in total")
    drain_implicated_nodes: bool = Field(
        True,
        description="ask the node ledger to drain hardware-implicated nodes as well as excluding them (it "
        "drains only with corroboration from outside the job)",
    )
    min_confidence_to_act: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="act on advice only when the diagnosis' calibrated confidence is at least this; below it, "
        "advice waits for approval even in act mode (0 acts on every diagnosis; see the reliability table in "
        "docs/benchmarks.md)",
    )
    on_stop: OnStop = Field(
        OnStop.CANCEL,
        description="when the decision is stop and the job still holds its allocation: cancel it (verified, "
        "in act mode at once, in monitor mode once the stop advice is approved) or keep_running (Lazarus only "
        "records the stop); a job comment may ask for cancel, never for keep_running",
    )
    expedite: ExpeditePolicy = Field(
        default_factory=ExpeditePolicy,
        description="expedited requeue for infrastructure and hardware failures (off by default); a job comment "
        "may turn it off or lower max_expedited, never turn it on",
    )
    act_on_stragglers: bool = Field(False, description="restart excluding a straggler node (otherwise advice only)")
    mode: Mode | None = Field(None, description="override of the cluster mode for jobs using this policy")
    spares: SparePool | None = Field(
        None,
        description="a hot-spare pool: the Slurm reservation this policy's jobs run in and its spare count; the "
        "node ledger swaps a node Lazarus excludes or drains there for a healthy idle node of the general pool",
    )
    selectable: bool = Field(
        False, description="jobs may name this policy in their comment (the policy named default always may)"
    )

    @model_validator(mode="after")
    def _bounds(self) -> Policy:
        if self.hang_budget_min > self.hang_budget_max:
            raise ValueError("hang_budget_min must not exceed hang_budget_max")
        return self

    def clamp_hang_budget(self, value: timedelta, phase: HangPhase = HangPhase.TRAINING) -> timedelta:
        """The one bound on every hang budget, whoever proposes it (the learner, the workflow, a job comment).

        Never below ``hang_budget_min``; never above ``hang_budget_max``, except in start-up, where the
        operator's own ``startup_grace`` may be longer (it is configured, not learned).
        """
        ceiling = max(self.hang_budget_max, self.startup_grace) if phase is HangPhase.STARTUP else self.hang_budget_max
        return min(ceiling, max(self.hang_budget_min, value))

    def phase_hang_budget(
        self, phase: HangPhase, slowest_step: timedelta | None = None, slowest_checkpoint: timedelta | None = None
    ) -> timedelta:
        """The hang budget in ``phase``, given the slowest step interval and save seen so far (None: none yet).

        - start-up: ``startup_grace``;
        - training: ``hang_step_multiple`` x the slowest step interval (like NVRx's computed timeouts), or
          ``hang_budget`` until an interval is known;
        - checkpoint: the larger of ``hang_budget`` and the multiple of the slowest save, since saves are
          much slower than steps and print nothing.
        """
        if phase is HangPhase.STARTUP:
            value = self.startup_grace
        elif phase is HangPhase.CHECKPOINT:
            value = max(self.hang_budget, (slowest_checkpoint or timedelta(0)) * self.hang_step_multiple)
        else:
            value = slowest_step * self.hang_step_multiple if slowest_step is not None else self.hang_budget
        return self.clamp_hang_budget(value, phase)


# Fields a job may override in its comment; an override may only tighten the operator's policy.
JOB_OVERRIDABLE = frozenset(
    {"hang_budget", "startup_grace", "max_attempts_without_checkpoint", "max_attempts", "on_stop", "expedite"}
)
