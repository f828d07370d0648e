"""How JobRecoveryWorkflow decides and acts on an incident: advice, approval, isolation, restart.

A mixin of :class:`workflows.job_recovery.JobRecoveryWorkflow` (it uses that class's
state ``self.s`` and helpers); kept apart so each file reads as one concern.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
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
        Approval,
        Attempt,
        AttemptStarted,
        RecoveryState,
        Rejection,
    )
    from lazarus.models.slurm import (
        JobActionResult,
        NodeAction,
        NodeActionResult,
        RestartRequest,
        RestartResult,
    )
    from workflows import attributes
    from workflows.options import SLURM_WRITE_RETRY
    from workflows.policy import decide


class DecideAndAct:
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
        """Fail-open: never leave a job held by Lazarus. Holds Lazarus did not place (a user's, an
        admin's) are not Lazarus's to lift, so nothing is released unless a restart of ours began."""
        if not self.s.lazarus_hold:
            return
        try:
            await workflow.execute_activity("slurm_release_job", self.s.job_id, result_type=JobActionResult,
                                            task_queue=self.s.scheduler_queue,
                                            start_to_close_timeout=timedelta(seconds=60),
                                            retry_policy=SLURM_WRITE_RETRY, summary="fail-open: release if held")
            self.s.lazarus_hold = False
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
        except ActivityError as exc:  # the exclusion below still keeps the job off the node
            workflow.logger.warning(f"job {self.s.job_id}: drain of {advice.drain_nodes} failed ({exc.cause}); "
                                    "restarting with the exclusion anyway")
            advice.comment = f"drain failed: {exc.cause}"
        self.s.lazarus_hold = True
        try:
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
        self.s.lazarus_hold = False  # the activity verified the release
        advice.status = AdviceStatus.EXECUTED
        attempt.requeued_at = workflow.now()
        attempt.outcome = f"requeued as attempt {result.new_attempt} excluding {','.join(result.excluded_nodes) or '-'}"
        self.s.verify_deadline = workflow.now() + self.s.policy.attempt_start_timeout
        self._set_state(RecoveryState.VERIFYING, f"waiting for attempt {result.new_attempt} to start")

