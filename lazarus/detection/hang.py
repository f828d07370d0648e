"""The hang budget: how long a job may go without progress before it counts as hung.

A pure learner, safe inside deterministic workflow code: it never reads the
clock (every method takes ``now``) and is a pydantic model, so the workflow can
keep it in its state and hand it across continue-as-new.

Budgets, always clamped to ``[policy.hang_budget_min, policy.hang_budget_max]``:

- **start-up** (no progress yet in this attempt): ``policy.startup_grace``;
- **training**: ``policy.hang_step_multiple`` x the slowest interval observed
  between two progress reports of this attempt (like NVRx's computed timeouts);
  before two reports exist, ``policy.hang_budget``;
- **checkpointing** (a save has started and not finished): the larger of
  ``policy.hang_budget`` and the multiple of the slowest save seen so far, since
  saves are much slower than steps and print nothing.

:meth:`HangBudget.start_attempt` resets everything learned from progress, so a
stale "checkpoint started" of a dead attempt never triggers after a restart.
Intervals that contained a checkpoint save are not used as step intervals.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from lazarus.detection.progress_lines import ProgressEvent, ProgressSample
from lazarus.models.policy import Policy


class HangPhase(StrEnum):
    STARTUP = "startup"
    TRAINING = "training"
    CHECKPOINT = "checkpoint"


class HangBudget(BaseModel):
    """Per-attempt hang budget state. Create with :meth:`for_attempt`."""

    model_config = ConfigDict(extra="forbid")

    policy: Policy
    attempt: int = 0
    attempt_started_at: datetime
    last_progress_at: datetime | None = None
    last_step: int | None = None
    slowest_step_interval: timedelta | None = None
    checkpoint_started_at: datetime | None = None
    slowest_checkpoint: timedelta | None = None
    saw_checkpoint_since_progress: bool = Field(False, description="the open interval contains a save")

    @classmethod
    def for_attempt(cls, policy: Policy, attempt: int, now: datetime) -> "HangBudget":
        return cls(policy=policy, attempt=attempt, attempt_started_at=now)

    def start_attempt(self, attempt: int, now: datetime) -> "HangBudget":
        """A new attempt began: forget this attempt's progress (the learned nothing carries over)."""
        return HangBudget.for_attempt(self.policy, attempt, now)

    @property
    def phase(self) -> HangPhase:
        if self.checkpoint_started_at is not None:
            return HangPhase.CHECKPOINT
        if self.last_progress_at is None:
            return HangPhase.STARTUP
        return HangPhase.TRAINING

    def observe(self, sample: ProgressSample, now: datetime) -> None:
        """Account for one progress sample seen at ``now``. Samples that go backwards in step are ignored."""
        if sample.step is not None and self.last_step is not None and sample.step < self.last_step:
            return
        if sample.event is ProgressEvent.CHECKPOINT_START:
            self.checkpoint_started_at = now
            self.saw_checkpoint_since_progress = True
            return
        if sample.event is ProgressEvent.CHECKPOINT_SAVED or self.checkpoint_started_at is not None:
            self._close_checkpoint(now)
        elif sample.step is None or sample.step != self.last_step:
            # The same step printed by many ranks is one observation, not a zero-length interval.
            self._record_step_interval(now)
        self.last_progress_at = now
        if sample.step is not None:
            self.last_step = sample.step

    def _close_checkpoint(self, now: datetime) -> None:
        if self.checkpoint_started_at is not None:
            took = now - self.checkpoint_started_at
            if self.slowest_checkpoint is None or took > self.slowest_checkpoint:
                self.slowest_checkpoint = took
        self.checkpoint_started_at = None
        self.saw_checkpoint_since_progress = True

    def _record_step_interval(self, now: datetime) -> None:
        if self.last_progress_at is not None and not self.saw_checkpoint_since_progress:
            interval = now - self.last_progress_at
            if self.slowest_step_interval is None or interval > self.slowest_step_interval:
                self.slowest_step_interval = interval
        self.saw_checkpoint_since_progress = False

    def _clamp(self, value: timedelta) -> timedelta:
        return min(self.policy.hang_budget_max, max(self.policy.hang_budget_min, value))

    def budget(self) -> timedelta:
        """The allowed silence in the current phase."""
        multiple = self.policy.hang_step_multiple
        if self.phase is HangPhase.CHECKPOINT:
            learned = self.slowest_checkpoint * multiple if self.slowest_checkpoint else timedelta(0)
            return self._clamp(max(self.policy.hang_budget, learned))
        if self.phase is HangPhase.STARTUP:
            return self._clamp(self.policy.startup_grace)
        if self.slowest_step_interval is None:
            return self._clamp(self.policy.hang_budget)
        return self._clamp(self.slowest_step_interval * multiple)

    def deadline(self) -> datetime:
        """When the job counts as hung if nothing new arrives."""
        since = self.checkpoint_started_at or self.last_progress_at or self.attempt_started_at
        return since + self.budget()

    def is_hung(self, now: datetime) -> bool:
        return now >= self.deadline()
