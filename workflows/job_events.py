"""How JobRecoveryWorkflow turns telemetry events and watchdog deadlines into incidents.

A mixin of :class:`workflows.job_recovery.JobRecoveryWorkflow` (it uses that class's
state ``self.s`` and helpers); kept apart so each file reads as one concern.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from lazarus.models.diagnosis import FailureKind
    from lazarus.models.recovery import (
        MAX_TELEMETRY_NOTES,
        AdviceAction,
        AdviceStatus,
        Anomaly,
        AnomalyDetected,
        Attempt,
        AttemptEnded,
        AttemptStarted,
        ProgressDigest,
        ProgressQuery,
        ProgressView,
        RecoveryState,
        TelemetryNote,
    )
    from lazarus.models.slurm import (
        JobState,
    )
    from workflows import attributes
    from workflows.options import SLURM_READ_RETRY
    from workflows.policy import hang_diagnosis, scheduler_diagnosis
    from workflows.timers import hang_budget, hang_deadline


def _advisory(anomaly: Anomaly) -> bool:
    """Straggler findings are advice; a later crash or hang of the same attempt still gets decided."""
    return anomaly.kind == FailureKind.STRAGGLER


class EventHandling:
    async def _next_incident(self) -> Anomaly | None:
        """Wait for events or a watchdog; return an anomaly that needs a decision, if any.

        While watching, the hang watchdog runs; while verifying a requeue, the
        attempt-start watchdog does. Both are durable timers. A timer is not
        cancelled and restarted for every progress digest (that would cost two
        history events per digest): it keeps running while the wanted deadline
        is later than its own, and when it fires early the deadline is simply
        re-evaluated and a new timer set. A timer is replaced only when the
        deadline moves earlier.
        """
        attempt = self.current_attempt
        deadline, summary = self._wanted_deadline(attempt)
        self._hang_deadline = deadline if self.s.state == RecoveryState.WATCHING else None
        self._arm(deadline, summary)
        timer = self._timer
        await workflow.wait_condition(lambda: bool(self._events) or (timer is not None and timer.done()))
        if timer is not None and timer.done() and not self._events:
            self._timer, fired_for = None, self._timer_deadline
            deadline, _ = self._wanted_deadline(attempt)
            if deadline is None or deadline > workflow.now() or fired_for is None:
                return None  # progress moved the deadline on: the loop arms a new timer
            if self.s.state == RecoveryState.VERIFYING:
                await self._on_attempt_start_deadline(attempt)
                return None
            return await self._on_hang_deadline(attempt)
        while self._events:
            incident = self._apply(self._events.pop(0))
            if incident is not None:
                return incident
        return None

    def _wanted_deadline(self, attempt: Attempt | None) -> tuple[datetime | None, str | None]:
        if attempt and self.s.state == RecoveryState.WATCHING and not self._decided(attempt):
            return hang_deadline(self.s.policy, attempt), f"hang watchdog (attempt {attempt.index})"
        if attempt and self.s.state == RecoveryState.VERIFYING and self.s.verify_deadline:
            return self.s.verify_deadline, f"attempt-start watchdog (attempt {attempt.index + 1})"
        return None, None

    def _decided(self, attempt: Attempt) -> bool:
        """An attempt whose advice (other than advice-only) was already decided gets no second hang call:
        after a rejection or expiry the operator owns it, until the next attempt."""
        if attempt.advice_generation is None:
            return False
        return self.s.advice_history[attempt.advice_generation - 1].action != AdviceAction.NONE

    def _arm(self, deadline: datetime | None, summary: str | None) -> None:
        """Keep, replace or cancel the single watchdog timer so that it fires no later than ``deadline``."""
        if self._timer is not None and not self._timer.done():
            if deadline is not None and self._timer_deadline is not None and self._timer_deadline <= deadline:
                return  # fires first; the deadline is re-checked then
            self._timer.cancel()
        self._timer, self._timer_deadline = None, None
        if deadline is None:
            return
        delay = max(deadline - workflow.now(), timedelta(seconds=1))
        self._timer = asyncio.ensure_future(workflow.sleep(delay, summary=summary))
        self._timer_deadline = workflow.now() + delay

    async def _on_attempt_start_deadline(self, attempt: Attempt) -> None:
        """The requeued attempt did not start in time: report it, make sure it is not held, keep waiting."""
        attempt.outcome = (f"requeued, but attempt {attempt.index + 1} had not started after "
                           f"{self.s.policy.attempt_start_timeout}")
        workflow.logger.warning(f"job {self.s.job_id}: {attempt.outcome}")
        workflow.set_current_details(attempt.outcome)
        self.s.verify_deadline = workflow.now() + self.s.policy.attempt_start_timeout
        await self._release_if_held()

    async def _on_hang_deadline(self, attempt: Attempt) -> Anomaly | None:
        """The watchdog fired: confirm with fresh telemetry before calling it a hang."""
        if attempt.anomaly is not None and attempt.anomaly.kind != FailureKind.STRAGGLER:
            return None  # already diagnosed; never overwrite the record
        try:
            view = await workflow.execute_activity(
                "telemetry_job_progress", ProgressQuery(job_id=self.s.job_id, attempt=attempt.index),
                result_type=ProgressView, task_queue=self.s.telemetry_queue,
                start_to_close_timeout=timedelta(seconds=20), retry_policy=SLURM_READ_RETRY,
                summary=f"confirm no progress in attempt {attempt.index}",
            )
        except ActivityError as exc:
            # no telemetry to confirm with: the workflow's own view decides (it was silent for the budget)
            workflow.logger.warning(f"job {self.s.job_id}: progress check failed ({exc.cause}); deciding on the "
                                    "last progress the workflow heard")
            view = ProgressView(known=True)
        if view.known and view.last_progress_at and (attempt.last_progress_at is None
                                                      or view.last_progress_at > attempt.last_progress_at):
            self._record_progress(attempt, view.step, view.last_progress_at, view.checkpoint, view.max_step_interval)
            attempt.checkpointing = view.checkpointing
            attempt.hang_budget = view.hang_budget or attempt.hang_budget
            return None
        if not view.known and attempt.last_progress_at is None and attempt.started_at is not None:
            # telemetry restarted and has not read this attempt yet: allow it one more budget
            attempt.last_progress_at = workflow.now()
            return None
        silent = (workflow.now() - (attempt.last_progress_at or attempt.started_at)).total_seconds()
        attempt.anomaly = Anomaly(attempt=attempt.index, kind=FailureKind.HANG, diagnosis=hang_diagnosis(attempt, silent),
                                  source="hang-watchdog", observed_at=workflow.now(), recorded_at=workflow.now(),
                                  hang_budget_s=hang_budget(self.s.policy, attempt).total_seconds())
        attributes.upsert_signature(attempt.anomaly.diagnosis.signature, [])
        return attempt.anomaly

    def _apply(self, event) -> Anomaly | None:
        if isinstance(event, AttemptStarted):
            return self._on_attempt_started(event)
        if isinstance(event, ProgressDigest):
            attempt = self._attempt(event.attempt)
            self._record_progress(attempt, event.step, event.last_progress_at, event.checkpoint, event.max_step_interval)
            attempt.checkpointing = event.checkpointing
            attempt.hang_budget = event.hang_budget or attempt.hang_budget
            return None
        if isinstance(event, AttemptEnded):
            return self._on_attempt_ended(event)
        if isinstance(event, TelemetryNote):
            if event.text not in self.s.telemetry_notes and len(self.s.telemetry_notes) < MAX_TELEMETRY_NOTES:
                self.s.telemetry_notes.append(event.text)
            return None
        if isinstance(event, AnomalyDetected):
            anomaly = event.anomaly
            attempt = self._attempt(anomaly.attempt)
            if attempt.index < (self.current_attempt.index if self.current_attempt else 0):
                return None  # about an attempt that is already over
            if attempt.anomaly is not None and not _advisory(attempt.anomaly):
                return None  # one failure per attempt; later lines are victims or repeats
            anomaly.recorded_at = workflow.now()
            attempt.anomaly = anomaly
            attributes.upsert_signature(anomaly.diagnosis.signature, anomaly.diagnosis.implicated_nodes)
            return anomaly if self.s.state == RecoveryState.WATCHING else None
        return None

    def _record_progress(self, attempt: Attempt, step, at, checkpoint, max_interval) -> None:
        if step is not None:
            attempt.last_step = max(step, attempt.last_step or step)
        if at is not None and (attempt.last_progress_at is None or at > attempt.last_progress_at):
            attempt.last_progress_at = at
        if checkpoint is not None:
            attempt.last_checkpoint = max(checkpoint, attempt.last_checkpoint or checkpoint)
            self.s.last_checkpoint = max(checkpoint, self.s.last_checkpoint or checkpoint)
        if max_interval is not None:
            attempt.max_step_interval = max(max_interval, attempt.max_step_interval or max_interval)

    def _on_attempt_started(self, event: AttemptStarted) -> None:
        attempt = self._attempt(event.attempt)
        attempt.nodes, attempt.excluded_nodes = list(event.nodes), list(event.excluded_nodes)
        attempt.started_at = attempt.started_at or event.at
        attributes.upsert_attempt(attempt.index)
        advice = self.current_advice
        if advice and advice.status == AdviceStatus.PENDING and advice.attempt < attempt.index:
            advice.status = AdviceStatus.SUPERSEDED
        if self.s.state == RecoveryState.VERIFYING:
            self._set_state(RecoveryState.WATCHING, f"attempt {attempt.index} running on {','.join(attempt.nodes)}")
        return None

    def _on_attempt_ended(self, event: AttemptEnded) -> Anomaly | None:
        attempt = self._attempt(event.attempt)
        attempt.ended_at, attempt.end_state, attempt.exit_code = event.at, event.state, event.exit_code
        if event.nodes and not attempt.nodes:
            attempt.nodes = list(event.nodes)
        if self.s.state not in (RecoveryState.WATCHING, RecoveryState.VERIFYING):
            return None  # we are acting on this attempt already
        if event.state == JobState.COMPLETED and event.exit_code in (0, None):
            attempt.outcome = "completed successfully"
            self._set_state(RecoveryState.COMPLETED, f"job completed in attempt {attempt.index}")
            return None
        if event.state == JobState.CANCELLED:
            attempt.outcome = "cancelled"
            self.s.stop_reason = "the job was cancelled outside Lazarus"
            self._set_state(RecoveryState.STOPPED, self.s.stop_reason)
            return None
        if event.state in (JobState.REQUEUED, JobState.PENDING):
            attempt.outcome = attempt.outcome or "requeued by Slurm"
            return None
        if attempt.advice_generation is not None:
            advice = self.s.advice_history[attempt.advice_generation - 1]
            if self.s.state == RecoveryState.WATCHING and advice.status in (AdviceStatus.REJECTED, AdviceStatus.EXPIRED):
                self.s.stop_reason = (f"attempt {attempt.index} ended {event.state.value} after advice "
                                      f"{advice.generation} was {advice.status.value}; Lazarus leaves the job alone")
                self._set_state(RecoveryState.STOPPED, self.s.stop_reason)
            return None
        if attempt.anomaly is not None:
            return attempt.anomaly if self.s.state == RecoveryState.WATCHING else None
        diagnosis = scheduler_diagnosis(event)
        if diagnosis is None:
            return None
        attempt.anomaly = Anomaly(attempt=attempt.index, kind=FailureKind.CRASH, diagnosis=diagnosis,
                                  source="scheduler", observed_at=event.at, recorded_at=workflow.now())
        attributes.upsert_signature(diagnosis.signature, diagnosis.implicated_nodes)
        return attempt.anomaly

    # ---- decide and act ----------------------------------------------------------------------

