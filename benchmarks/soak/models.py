"""What the soak records while it runs, what it collects at the end, and what it concludes.

Everything is a pydantic model so that ``--json`` writes the whole run and the invariants (pure functions over
:class:`SoakData`) can be tested on hand-made data.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lazarus.models.recovery import JobStatus


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class JobKind(StrEnum):
    """What a soak job does; the invariants judge Lazarus against it."""

    HEALTHY = "healthy"  # trains and completes
    NOISY = "noisy"  # healthy, with benign warnings (NCCL INFO, deprecations, loss-scale overflows)
    CRASH = "crash"  # a rank fails in attempt 0 (Xid 79, ECC, NCCL timeout or an application error)
    HANG = "hang"  # every rank stops printing in attempt 0 while staying alive
    HOSTILE = "hostile"  # healthy, but prints lies: an Xid for a node outside its allocation, a huge hostlist, escapes

    @property
    def healthy(self) -> bool:
        """Jobs Lazarus must never restart or stop."""
        return self in (JobKind.HEALTHY, JobKind.NOISY)


class JobPlan(_Model):
    """One job the soak submitted."""

    job_id: int
    kind: JobKind
    mode: Literal["act", "monitor"]
    fault: str = Field(description="the trainer's --fault (or 'hostile')")
    outside_node: str | None = Field(None, description="hostile jobs: the node they lie about (excluded from them)")
    submitted_at: datetime
    cancelled_by_soak: bool = Field(False, description="still running when the soak ended, so the soak cancelled it")
    cancelled_at: datetime | None = Field(None, description="when the soak cancelled it (UTC)")


class DecisionSent(_Model):
    """One approval or rejection the soak sent for a job's advice."""

    job_id: int
    generation: int
    verb: Literal["approve", "reject"]
    channel: Literal["cli", "update", "signal"]
    operator: str = Field(description="unique per decision, so its trace in the advice is unambiguous")
    sent_at: datetime
    expires_at: datetime | None = Field(None, description="the advice's deadline as the soak read it")
    accepted: bool | None = Field(description="True: Temporal accepted it; False: refused; None: unknown (a fault)")
    reply: str = ""


class FaultRecord(_Model):
    kind: str
    target: str
    started_at: datetime
    ended_at: datetime | None = None
    seconds: float = 0.0
    skipped: bool = False
    detail: str = ""


class HeldSample(_Model):
    """A soak job seen held in Slurm (the soak itself never holds a job). Slurm's answer describes some moment
    between ``asked_at`` and ``at`` (a read during a controller outage answers only once it is back)."""

    job_id: int
    at: datetime = Field(description="when Slurm's answer came back")
    asked_at: datetime | None = Field(None, description="when the read began (None: at ``at``)")
    reason: str = ""


class ExclusionSample(_Model):
    job_id: int
    at: datetime
    nodes: list[str]


class DrainSeen(_Model):
    """A node first seen drained (one entry per drain spell), with the ledger's record of it at that moment."""

    node: str
    reason: str
    first_seen: datetime
    ledger_record: dict[str, Any] | None = Field(None, description="the ledger view's record (raw JSON), if readable")


class SacctAttempt(_Model):
    index: int
    state: str
    nodes: list[str] = Field(default_factory=list)
    start: datetime | None = None
    end: datetime | None = None


class JobFacts(_Model):
    """Everything known about one soak job at the end."""

    plan: JobPlan
    user: str = ""
    workflow_status: str | None = Field(None, description="Temporal execution status; None: no workflow")
    status: JobStatus | None = Field(None, description="the workflow's status query")
    slurm_attempts: list[SacctAttempt] = Field(default_factory=list, description="sacct -D rows, oldest first")
    slurm_restarts: int | None = Field(None, description="scontrol's Restarts, while Slurm still holds the job")
    final_state: str | None = None


class SoakData(_Model):
    """The input of every invariant."""

    cluster: str
    decision_timeout_s: float
    hold_grace_s: float
    jobs: list[JobFacts]
    decisions: list[DecisionSent] = Field(default_factory=list)
    held: list[HeldSample] = Field(default_factory=list)
    held_at_end: list[HeldSample] = Field(default_factory=list)
    exclusions: list[ExclusionSample] = Field(default_factory=list)
    drains: list[DrainSeen] = Field(default_factory=list)
    ledger: dict[str, Any] | None = Field(None, description="the ledger view at the end (raw JSON)")
    users: dict[int, str] = Field(default_factory=dict, description="job id -> Slurm user, for every job known")


class InvariantResult(_Model):
    name: str
    checked: int
    unit: str = "jobs"
    violations: list[str] = Field(default_factory=list)
    note: str = ""

    @property
    def passed(self) -> bool:
        return not self.violations


class SoakResult(_Model):
    seed: int
    duration_s: float
    started_at: datetime
    ended_at: datetime
    machine: str
    jobs: int
    jobs_by_kind: dict[str, int]
    faults: list[FaultRecord]
    decisions: int
    invariants: list[InvariantResult]
    notes: list[str] = Field(default_factory=list)
    data: SoakData | None = Field(None, description="everything the invariants read (written by --json)")

    @property
    def passed(self) -> bool:
        return all(i.passed for i in self.invariants)

    @property
    def faults_injected(self) -> int:
        return sum(1 for f in self.faults if not f.skipped)
