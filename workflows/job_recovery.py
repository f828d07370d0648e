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
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from lazarus.models.diagnosis import FailureKind
    from lazarus.models.ledger import Implication
    from lazarus.models.policy import Mode
    from lazarus.models.recovery import (
        Advice,
        AdviceAction,
        AdviceStatus,
        Anomaly,
        AnomalyDetected,
        Approval,
        Attempt,
        AttemptEnded,
        AttemptStarted,
        DecisionReply,
        JobEventEnvelope,
        JobRecoveryInput,
        JobStatus,
        ModeChange,
        ProgressDigest,
        ProgressQuery,
        ProgressView,
        RecoveryState,
        Rejection,
        TERMINAL_STATES,
    )
    from lazarus.models.slurm import JobActionResult, JobState, NodeAction, NodeActionResult, RestartRequest, RestartResult
    from workflows import attributes
    from workflows.phases import check_transition
    from workflows.policy import decide, hang_diagnosis, scheduler_diagnosis
    from workflows.timers import hang_budget, hang_deadline

SLURM_WRITE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=20,
    non_retryable_error_types=["UnknownJob", "InvalidArgument", "PermissionDenied", "OperationRefused"],
)
SLURM_READ_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=5),
                               maximum_attempts=10, non_retryable_error_types=["UnknownJob", "InvalidArgument"])


def _advisory(anomaly: Anomaly) -> bool:
    """Straggler findings are advice; a later crash or hang of the same attempt still gets decided."""
    return anomaly.kind == FailureKind.STRAGGLER


def workflow_id(cluster: str, job_id: int) -> str:
    """The contract: one workflow per job, named by cluster and Slurm job id."""
    return f"lazarus-{cluster}-{job_id}"


@workflow.defn
class JobRecoveryWorkflow:
    @workflow.init
    def __init__(self, inp: JobRecoveryInput) -> None:
        self.s = inp
        self._events: list = []
        self._answer: Approval | Rejection | None = None
        self._hang_deadline: datetime | None = None

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
            # the kill switch: the cluster mode wins over every per-job override
            self.s.cluster_mode, self.s.job_mode = change.mode or Mode.MONITOR, None
        else:
            self.s.job_mode = change.mode
        attributes.upsert_mode(self.mode)

    @workflow.query
    def status(self) -> JobStatus:
        return JobStatus(
            cluster=self.s.cluster, job_id=self.s.job_id, state=self.s.state, mode=self.mode,
            policy_name=self.s.policy_name, attempts=self.s.attempts, advice=self.current_advice,
            advice_history=self.s.advice_history, stop_reason=self.s.stop_reason, hang_deadline=self._hang_deadline,
        )

    def _check_generation(self, generation: int) -> None:
        advice = self.current_advice
        if advice is None or advice.status != AdviceStatus.PENDING:
            raise ValueError("no advice is awaiting approval for this job")
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
                await workflow.wait_condition(workflow.all_handlers_finished)
                self.s.runs += 1
                workflow.continue_as_new(self.s)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.status()

    def _should_continue_as_new(self) -> bool:
        return (self.s.state not in TERMINAL_STATES and not self._events
                and workflow.info().is_continue_as_new_suggested())

    async def _next_incident(self) -> Anomaly | None:
        """Wait for events or a watchdog; return an anomaly that needs a decision, if any.

        While watching, the hang watchdog runs; while verifying a requeue, the
        attempt-start watchdog does. Both are durable timers.
        """
        attempt = self.current_attempt
        deadline, summary = None, None
        if attempt and self.s.state == RecoveryState.WATCHING:
            deadline, summary = hang_deadline(self.s.policy, attempt), f"hang watchdog (attempt {attempt.index})"
        elif attempt and self.s.state == RecoveryState.VERIFYING and self.s.verify_deadline:
            deadline, summary = self.s.verify_deadline, f"attempt-start watchdog (attempt {attempt.index + 1})"
        self._hang_deadline = deadline if self.s.state == RecoveryState.WATCHING else None
        timeout = max(deadline - workflow.now(), timedelta(seconds=1)) if deadline else None
        try:
            await workflow.wait_condition(lambda: bool(self._events), timeout=timeout, timeout_summary=summary)
        except asyncio.TimeoutError:
            if self.s.state == RecoveryState.VERIFYING:
                await self._on_attempt_start_deadline(attempt)
                return None
            return await self._on_hang_deadline(attempt)
        while self._events:
            incident = self._apply(self._events.pop(0))
            if incident is not None:
                return incident
        return None

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
        view = await workflow.execute_activity(
            "telemetry_job_progress", ProgressQuery(job_id=self.s.job_id, attempt=attempt.index),
            result_type=ProgressView, task_queue=self.s.telemetry_queue,
            start_to_close_timeout=timedelta(seconds=20), retry_policy=SLURM_READ_RETRY,
            summary=f"confirm no progress in attempt {attempt.index}",
        )
        if view.known and view.last_progress_at and (attempt.last_progress_at is None
                                                      or view.last_progress_at > attempt.last_progress_at):
            self._record_progress(attempt, view.step, view.last_progress_at, view.checkpoint, view.max_step_interval)
            attempt.checkpointing = view.checkpointing
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
            return None
        if isinstance(event, AttemptEnded):
            return self._on_attempt_ended(event)
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

    async def _handle_incident(self, anomaly: Anomaly) -> None:
        attempt = self._attempt(anomaly.attempt)
        if attempt.advice_generation is not None and not (
                self.s.advice_history[attempt.advice_generation - 1].action == AdviceAction.NONE
                and anomaly.kind != FailureKind.STRAGGLER):
            return  # already decided for this attempt (advice-only straggler findings do not count)
        self._set_state(RecoveryState.SUSPECTED, f"{anomaly.kind.value} in attempt {attempt.index}")
        decision = decide(anomaly, [a for a in self.s.attempts if a.index <= attempt.index], self.s.policy)
        self.s.generation += 1
        diag = anomaly.diagnosis
        advice = Advice(
            generation=self.s.generation, attempt=attempt.index, action=decision.action,
            exclude_nodes=decision.exclude_nodes, drain_nodes=decision.drain_nodes, reason=decision.reason,
            category=diag.category, signature=diag.signature,
            evidence=[f"{e.file}:{e.line_no}: {e.text}" for e in diag.evidence[:5]], created_at=workflow.now(),
        )
        self.s.advice_history.append(advice)
        attempt.advice_generation = advice.generation
        attributes.upsert_generation(advice.generation)
        if decision.action == AdviceAction.NONE:
            advice.status, advice.decided_by, advice.decided_at = AdviceStatus.EXECUTED, "lazarus", workflow.now()
            self._set_state(RecoveryState.WATCHING, f"advice only: {decision.reason}")
            return
        if decision.action == AdviceAction.STOP:
            await self._stop(attempt, advice)
            return
        if self.mode == Mode.MONITOR and not await self._await_approval(advice):
            return
        await self._restart(attempt, advice)

    async def _stop(self, attempt: Attempt, advice: Advice) -> None:
        advice.status, advice.decided_by, advice.decided_at = AdviceStatus.EXECUTED, "lazarus", workflow.now()
        attempt.outcome = f"stopped: {advice.reason}"
        self.s.stop_reason = advice.reason
        self._set_state(RecoveryState.STOPPED, f"stopped: {advice.reason}")

    async def _await_approval(self, advice: Advice) -> bool:
        """Monitor mode: wait for an operator; the decision watchdog fails open. True = go ahead."""
        advice.expires_at = workflow.now() + self.s.policy.decision_timeout
        self._answer = None
        self._set_state(RecoveryState.AWAITING_APPROVAL,
                        f"awaiting approval of advice {advice.generation}: {advice.reason}")
        try:
            await workflow.wait_condition(
                lambda: self._answer is not None or self.mode == Mode.ACT or self._superseded(advice),
                timeout=self.s.policy.decision_timeout,
                timeout_summary=f"decision watchdog (advice {advice.generation})",
            )
        except asyncio.TimeoutError:
            advice.status, advice.decided_at = AdviceStatus.EXPIRED, workflow.now()
            await self._release_if_held()
            self._after_no_action(advice, f"advice {advice.generation} expired: nobody approved it within "
                                          f"{self.s.policy.decision_timeout}; the job is left to normal scheduling")
            return False
        answer, self._answer = self._answer, None
        if isinstance(answer, Approval) or (answer is None and self.mode == Mode.ACT):
            advice.status = AdviceStatus.APPROVED
            advice.decided_by = answer.operator if answer else "lazarus (mode switched to act)"
            advice.decided_at, advice.comment = workflow.now(), answer.comment if answer else None
            return True
        if isinstance(answer, Rejection):
            advice.status, advice.decided_by = AdviceStatus.REJECTED, answer.operator
            advice.decided_at, advice.comment = workflow.now(), answer.comment
            self._after_no_action(advice, f"advice {advice.generation} rejected by {answer.operator}; "
                                          "Lazarus leaves the job alone")
            return False
        advice.status = AdviceStatus.SUPERSEDED
        self._set_state(RecoveryState.WATCHING, "advice superseded: the job moved on")
        return False

    def _superseded(self, advice: Advice) -> bool:
        return any(isinstance(e, AttemptStarted) and e.attempt > advice.attempt for e in self._events)

    def _after_no_action(self, advice: Advice, reason: str) -> None:
        attempt = self._attempt(advice.attempt)
        attempt.outcome = reason
        if attempt.ended_at is not None:
            self.s.stop_reason = reason
            self._set_state(RecoveryState.STOPPED, reason)
        else:
            self._set_state(RecoveryState.WATCHING, reason)

    async def _release_if_held(self) -> None:
        """Fail-open: never leave a job held by Lazarus."""
        try:
            await workflow.execute_activity("slurm_release_job", self.s.job_id, result_type=JobActionResult,
                                            task_queue=self.s.scheduler_queue,
                                            start_to_close_timeout=timedelta(seconds=60),
                                            retry_policy=SLURM_WRITE_RETRY, summary="fail-open: release if held")
        except ActivityError as exc:
            workflow.logger.warning(f"fail-open release of job {self.s.job_id} failed: {exc.cause}")

    async def _isolate(self, attempt: Attempt, advice: Advice) -> None:
        """Drain hardware-implicated nodes: through the cluster's node ledger (one drain however many jobs
        blame a node, within the drain budget), or directly when no ledger runs."""
        if not advice.drain_nodes and not advice.exclude_nodes:
            return
        if self.s.ledger_workflow_id:
            ledger = workflow.get_external_workflow_handle(self.s.ledger_workflow_id)
            try:
                for node in sorted(set(advice.exclude_nodes) - set(attempt.excluded_nodes)):
                    await ledger.signal("record_implication", Implication(
                        node=node, job_id=self.s.job_id, attempt=attempt.index, signature=advice.signature,
                        category=advice.category.value, at=workflow.now(), drain_requested=node in advice.drain_nodes))
                return
            except ApplicationError as exc:
                workflow.logger.warning(f"node ledger unreachable ({exc}); draining directly")
        if advice.drain_nodes:
            await workflow.execute_activity(
                "slurm_drain_nodes", NodeAction(nodes=advice.drain_nodes, reason=f"lazarus: {advice.signature} "
                                                f"in job {self.s.job_id}"),
                result_type=NodeActionResult, task_queue=self.s.scheduler_queue,
                start_to_close_timeout=timedelta(seconds=60), retry_policy=SLURM_WRITE_RETRY,
                summary=f"drain {','.join(advice.drain_nodes)}")

    async def _restart(self, attempt: Attempt, advice: Advice) -> None:
        self._set_state(RecoveryState.ACTING, f"acting on advice {advice.generation}: {advice.reason}")
        if advice.decided_by is None:
            advice.decided_by, advice.decided_at = "lazarus (act mode)", workflow.now()
        try:
            await self._isolate(attempt, advice)
            result = await workflow.execute_activity(
                "slurm_restart_excluding",
                RestartRequest(job_id=self.s.job_id, expected_attempt=attempt.index,
                               exclude_nodes=advice.exclude_nodes, reason=advice.reason),
                result_type=RestartResult, task_queue=self.s.scheduler_queue,
                start_to_close_timeout=timedelta(minutes=2), heartbeat_timeout=timedelta(seconds=10),
                retry_policy=SLURM_WRITE_RETRY,
                summary=f"requeue job {self.s.job_id} excluding {','.join(advice.exclude_nodes) or 'no nodes'}")
        except ActivityError as exc:
            advice.status = AdviceStatus.FAILED
            await self._release_if_held()
            self.s.stop_reason = f"restart failed: {exc.cause or exc}"
            attempt.outcome = self.s.stop_reason
            self._set_state(RecoveryState.FAILED, self.s.stop_reason)
            return
        advice.status = AdviceStatus.EXECUTED
        attempt.requeued_at = workflow.now()
        attempt.outcome = f"requeued as attempt {result.new_attempt} excluding {','.join(result.excluded_nodes) or '-'}"
        self.s.verify_deadline = workflow.now() + self.s.policy.attempt_start_timeout
        self._set_state(RecoveryState.VERIFYING, f"waiting for attempt {result.new_attempt} to start")
