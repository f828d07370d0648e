"""The hang budget learner: how long a job may go without progress before it counts as hung.

The only place a budget is learned. Telemetry feeds it every progress line and
sends :meth:`HangBudget.budget` (and :attr:`HangBudget.last_progress_at`, the
start of the silence) with its digests; the workflow's watchdog turns them into
a deadline (``workflows.timers``). The rules themselves are pure and live on the
policy (:meth:`~lazarus.models.policy.Policy.phase_hang_budget`, bounded by
:meth:`~lazarus.models.policy.Policy.clamp_hang_budget`), so the workflow's
fallback before a learned budget arrives says the same thing for each phase:

- **start-up** (no progress yet in this attempt): ``policy.startup_grace``;
- **training**: ``policy.hang_step_multiple`` x the slowest interval observed
  between two progress reports of this attempt; before two reports exist,
  ``policy.hang_budget``;
- **checkpointing** (a save has started and not finished): the larger of
  ``policy.hang_budget`` and the multiple of the slowest save seen so far.

A checkpoint start is a sign of life: the silence is counted from it. It never
reads the clock (every method takes ``now``). :meth:`HangBudget.start_attempt`
resets everything learned from progress, so a stale "checkpoint started" of a
dead attempt never triggers after a restart. Intervals that contained a
checkpoint save are not used as step intervals.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field

from lazarus.detection.progress_lines import ProgressEvent, ProgressSample
from lazarus.models.policy import HangPhase, Policy

__all__ = ["HangBudget", "HangPhase"]


class HangBudget(BaseModel):
    """Per-attempt hang budget state. Create with :meth:`for_attempt`."""

    model_config = ConfigDict(extra="forbid")

    policy: Policy
    attempt: int = 0
    last_progress_at: datetime | None = Field(None, description="last sign of life: a step or a checkpoint line")
    last_step: int | None = None
    slowest_step_interval: timedelta | None = None
    checkpoint_started_at: datetime | None = None
    slowest_checkpoint: timedelta | None = None
    saw_checkpoint_since_progress: bool = Field(False, description="the open interval contains a save")

    @classmethod
    def for_attempt(cls, policy: Policy, attempt: int) -> HangBudget:
        return cls(policy=policy, attempt=attempt)

    def start_attempt(self, attempt: int) -> HangBudget:
        """A new attempt began: forget this attempt's progress (the learned nothing carries over)."""
        return HangBudget.for_attempt(self.policy, attempt)

    @property
    def phase(self) -> HangPhase:
        return HangPhase.of(
            progressed=self.last_progress_at is not None, checkpointing=self.checkpoint_started_at is not None
        )

    def observe(self, sample: ProgressSample, now: datetime) -> None:
        """Account for one progress sample seen at ``now``. Samples that go backwards in step are ignored."""
        if sample.step is not None and self.last_step is not None and sample.step < self.last_step:
            return
        if sample.event is ProgressEvent.CHECKPOINT_START:
            self.checkpoint_started_at = self.last_progress_at = now
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

    def budget(self) -> timedelta:
        """The allowed silence in the current phase, counted from :attr:`last_progress_at` (or the attempt's start)."""
        return self.policy.phase_hang_budget(
            self.phase, slowest_step=self.slowest_step_interval, slowest_checkpoint=self.slowest_checkpoint
        )
