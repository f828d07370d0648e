"""JobRecoveryWorkflow: one durable workflow per opted-in training job.

Workflow id ``lazarus-<cluster>-<slurm job id>`` (contract). The telemetry loop
feeds it events (attempt started/ended, coarse progress, anomalies) through
the ``job_event`` signal; operators answer advice through the
``approve_advice`` / ``reject_advice`` updates (synchronous, validated) or the
signals of the same names (Temporal UI, HTTP API).

The loop is: wait for an incident (anomaly event, failed attempt end, or the
hang watchdog) → decide (pure, ``workflows.policy``) → publish advice → in act
mode, or once approved, isolate and restart (activities that read fresh state
and verify) → wait for the next attempt (attempt-start watchdog). Every
watchdog is a durable timer, so worker or server crashes lose nothing.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from lazarus.models.policy import Mode
    from lazarus.models.recovery import (
        TERMINAL_STATES,
        Advice,
        AdviceStatus,
        Approval,
        Attempt,
        DecisionReply,
        JobEventEnvelope,
        JobRecoveryInput,
        JobStatus,
        ModeChange,
        RecoveryState,
        Rejection,
    )
    from workflows import attributes
    from workflows.job_actions import DecideAndAct
    from workflows.job_events import EventHandling
    from workflows.phases import check_transition


def workflow_id(cluster: str, job_id: int) -> str:
    """The contract: one workflow per job, named by cluster and Slurm job id."""
    return f"lazarus-{cluster}-{job_id}"


@workflow.defn
class JobRecoveryWorkflow(EventHandling, DecideAndAct):
    @workflow.init
    def __init__(self, inp: JobRecoveryInput) -> None:
        self.s = inp
        self._events: list = []
        self._answer: Approval | Rejection | None = None
        self._hang_deadline: datetime | None = None
        self._timer: asyncio.Future | None = None  # the one watchdog timer (hang or attempt start)
        self._timer_deadline: datetime | None = None

    # ---- messages ------------------------------------------------------------------------

    @workflow.signal
    def job_event(self, envelope: JobEventEnvelope) -> None:
        self._events.append(envelope.event)

    @workflow.update
    def approve_advice(self, approval: Approval) -> DecisionReply:
        self._answer = approval
        return DecisionReply(generation=approval.generation, status=AdviceStatus.APPROVED,
                             message=f"advice {approval.generation} approved by {approval.operator}")

    @approve_advice.validator
    def _validate_approve(self, approval: Approval) -> None:
        self._check_generation(approval.generation)

    @workflow.update
    def reject_advice(self, rejection: Rejection) -> DecisionReply:
        self._answer = rejection
        return DecisionReply(generation=rejection.generation, status=AdviceStatus.REJECTED,
                             message=f"advice {rejection.generation} rejected by {rejection.operator}")

    @reject_advice.validator
    def _validate_reject(self, rejection: Rejection) -> None:
        self._check_generation(rejection.generation)

    @workflow.signal(name="approve_advice")
    def approve_advice_signal(self, approval: Approval) -> None:
        self._answer_by_signal(approval)

    @workflow.signal(name="reject_advice")
    def reject_advice_signal(self, rejection: Rejection) -> None:
        self._answer_by_signal(rejection)

    @workflow.signal
    def set_mode(self, change: ModeChange) -> None:
        if change.scope == "cluster":
            self.s.cluster_mode = change.mode or Mode.MONITOR
            if self.s.cluster_mode == Mode.MONITOR:
                self.s.job_mode = None  # the kill switch wins over every per-job choice
            # lifting it (act) keeps a job's own request for monitor mode
        else:
            self.s.job_mode = change.mode
        attributes.upsert_mode(self.mode)

    @workflow.query
    def status(self) -> JobStatus:
        return JobStatus(
            cluster=self.s.cluster, job_id=self.s.job_id, state=self.s.state, mode=self.mode,
            policy_name=self.s.policy_name, attempts=self.s.attempts, advice=self.current_advice,
            advice_history=self.s.advice_history, stop_reason=self.s.stop_reason, hang_deadline=self._hang_deadline,
            opt_in_notes=self.s.opt_in_notes, telemetry_notes=self.s.telemetry_notes,
        )

    def _check_generation(self, generation: int) -> None:
        advice = self.current_advice
        if advice is None or advice.status != AdviceStatus.PENDING or self.s.state != RecoveryState.AWAITING_APPROVAL:
            raise ValueError(f"no advice is awaiting approval for this job (state {self.s.state.value})")
        if generation != advice.generation:
            raise ValueError(f"stale advice generation {generation}: the advice awaiting approval is generation "
                             f"{advice.generation}")
        if self._answer is not None:
            raise ValueError(f"advice generation {generation} has already been answered")

    def _answer_by_signal(self, answer: Approval | Rejection) -> None:
        try:
            self._check_generation(answer.generation)
        except ValueError as exc:  # a signal cannot be refused: record why it was ignored
            workflow.logger.warning(f"ignored {type(answer).__name__.lower()} signal: {exc}")
            return
        self._answer = answer

    # ---- derived state -------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        return self.s.job_mode or self.s.cluster_mode

    @property
    def current_advice(self) -> Advice | None:
        return self.s.advice_history[-1] if self.s.advice_history else None

    @property
    def current_attempt(self) -> Attempt | None:
        return self.s.attempts[-1] if self.s.attempts else None

    def _attempt(self, index: int) -> Attempt:
        for attempt in self.s.attempts:
            if attempt.index == index:
                return attempt
        attempt = Attempt(index=index, start_checkpoint=self.s.last_checkpoint)
        self.s.attempts.append(attempt)
        self.s.attempts.sort(key=lambda a: a.index)
        return attempt

    def _set_state(self, new: RecoveryState, details: str | None = None) -> None:
        check_transition(self.s.state, new)
        self.s.state = new
        attributes.upsert_state(new)
        workflow.set_current_details(details or f"{new.value}")

    # ---- main loop -------------------------------------------------------------------------

    @workflow.run
    async def run(self, inp: JobRecoveryInput) -> JobStatus:
        attributes.upsert_job(self.s, self.mode)
        if self.s.opt_in_error:
            self._set_state(RecoveryState.IGNORED, f"ignored: {self.s.opt_in_error}")
            self.s.stop_reason = self.s.opt_in_error
            return self.status()
        while self.s.state not in TERMINAL_STATES:
            incident = await self._next_incident()
            if incident is not None:
                await self._handle_incident(incident)
            if self._should_continue_as_new():
                self._arm(None, None)
                await workflow.wait_condition(workflow.all_handlers_finished)
                self.s.runs += 1
                workflow.continue_as_new(self.s)
        self._arm(None, None)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.status()

    def _should_continue_as_new(self) -> bool:
        return (self.s.state not in TERMINAL_STATES and not self._events
                and workflow.info().is_continue_as_new_suggested())

