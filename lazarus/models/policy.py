"""Recovery policy and mode: what Lazarus may do for a job, and how fast."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Mode(StrEnum):
    """Whether Lazarus acts on its own advice."""

    MONITOR = "monitor"  # publish advice, act only after an operator approves it
    ACT = "act"  # execute advice at once


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
    drain_implicated_nodes: bool = Field(True, description="drain hardware-implicated nodes as well as excluding them")
    act_on_stragglers: bool = Field(False, description="restart excluding a straggler node (otherwise advice only)")
    mode: Mode | None = Field(None, description="override of the cluster mode for jobs using this policy")

    @model_validator(mode="after")
    def _bounds(self) -> "Policy":
        if self.hang_budget_min > self.hang_budget_max:
            raise ValueError("hang_budget_min must not exceed hang_budget_max")
        return self


# Fields a job may override in its comment, within the operator's limits.
JOB_OVERRIDABLE = frozenset({"hang_budget", "startup_grace", "max_attempts_without_checkpoint", "max_attempts"})
