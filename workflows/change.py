"""One application of an input to the recovery state: a private copy of the state, the time, the effects.

The handlers in :mod:`workflows.transitions` and :mod:`workflows.acting` change
``change.s`` freely: it is a deep copy, so the caller's state is never touched
and :func:`workflows.transitions.apply` stays a pure function.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from lazarus.models import milestones
from lazarus.models.policy import Mode
from lazarus.models.recovery import Advice, Attempt, JobRecoveryInput, RecoveryState
from workflows import notices
from workflows.effects import Details, Effect, Notify, SearchAttributes
from workflows.phases import check_transition


class Change:
    def __init__(self, state: JobRecoveryInput, now: datetime) -> None:
        self.s = state.model_copy(deep=True)
        self.now = now
        self.effects: list[Effect] = []

    def emit(self, *effects: Effect) -> None:
        self.effects.extend(effects)

    @property
    def mode(self) -> Mode:
        return self.s.job_mode or self.s.cluster_mode

    @property
    def current_advice(self) -> Advice | None:
        return self.s.advice_history[-1] if self.s.advice_history else None

    @property
    def current_attempt(self) -> Attempt | None:
        return self.s.attempts[-1] if self.s.attempts else None

    def attempt(self, index: int) -> Attempt:
        """The attempt with this index, recorded now if it is new (attempts stay sorted by index)."""
        for attempt in self.s.attempts:
            if attempt.index == index:
                return attempt
        attempt = Attempt(index=index, start_checkpoint=self.s.last_checkpoint)
        self.s.attempts.append(attempt)
        self.s.attempts.sort(key=lambda a: a.index)
        return attempt

    def set_state(self, new: RecoveryState, details: str | None = None) -> None:
        """Move to ``new`` (the transition table refuses an illegal move) and publish it (search attribute, and
        the current details the Temporal UI shows: the state, then what brought it); tell the operators when
        they need to know (:mod:`workflows.notices`)."""
        check_transition(self.s.state, new)
        self.s.state = new
        text = details or new.value
        if not text.startswith(new.value):
            text = f"{new.value}: {text}"
        self.emit(SearchAttributes(state=new), Details(text))  # the current details say the state first
        notice = notices.on_entering(self.s, new, self.now)
        if notice is not None:
            self.emit(Notify(notice, task_queue=self.s.scheduler_queue))

    def record_progress(
        self,
        attempt: Attempt,
        step: int | None,
        at: datetime | None,
        checkpoint: int | None,
        max_interval: timedelta | None,
    ) -> None:
        """Keep the newest step, progress time and checkpoint, and the slowest step interval."""
        if step is not None:
            attempt.last_step = max(step, attempt.last_step or step)
        if at is not None and (attempt.last_progress_at is None or at > attempt.last_progress_at):
            attempt.last_progress_at = at
        if checkpoint is not None:
            attempt.last_checkpoint = max(checkpoint, attempt.last_checkpoint or checkpoint)
            self.s.last_checkpoint = max(checkpoint, self.s.last_checkpoint or checkpoint)
        if max_interval is not None:
            attempt.max_step_interval = max(max_interval, attempt.max_step_interval or max_interval)

    def record_first_progress(self, attempt: Attempt, step: int | None, at: datetime | None) -> None:
        """The attempt's first progress line, once: training started, or for a restarted attempt training
        progress restored, with the checkpoint it resumed from and the steps lost since (running is not
        training: Slurm's start is ``started_at``)."""
        if attempt.first_progress_at is not None or at is None:
            return
        attempt.first_step, attempt.first_progress_at = step, at
        earlier = [a for a in self.s.attempts if a.index < attempt.index]
        if not earlier:
            return
        text = f"{self.s.state.value}: attempt {attempt.index} training again at {at:%H:%M:%S}"
        if step is not None:
            attempt.resumed_from, attempt.steps_lost = milestones.resumed(step, earlier)
            lost = "" if attempt.steps_lost is None else f", {attempt.steps_lost} steps lost"
            text += f" (step {step}): resumed from checkpoint {attempt.resumed_from}{lost}"
        self.emit(Details(text))
