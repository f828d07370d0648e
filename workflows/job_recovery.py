"""JobRecoveryWorkflow: one durable workflow per opted-in training job.

Workflow id ``lazarus-<cluster>-<slurm job id>`` (:func:`lazarus.models.names.workflow_id`).
The telemetry loop feeds it events through signals named for what they carry
(``attempt_started``, ``progress``, ``attempt_ended``, ``suspension``,
``anomaly``, ``telemetry_note``; the node ledger sends ``ledger_note``), so the
Temporal UI's timeline reads as the job's story; the generic ``job_event``
signal that carried them all before is still handled (running workflows and
stored histories have it). Operators answer advice through
the ``approve_advice`` / ``reject_advice`` updates (synchronous, validated) or
the signals of the same names (Temporal UI, HTTP API). A signal cannot be
refused to its sender, so a refused one is recorded in the state
(``refused_answers``) and shown in the workflow's current details. With
operators configured (``JobRecoveryInput.operators``), only the callers they
name may answer or switch the job's mode: the caller is read from the message's
``lazarus-caller`` header (:mod:`workflows.callers`), never from its text.

The class only receives messages, keeps the one watchdog timer and performs
effects. Where telemetry keeps the hang clock (patch ``telemetry-keeps-the-hang-clock``,
:mod:`workflows.patches`), a ``silent`` digest starts the hang check and the
timer is a backstop (:data:`workflows.timers.BACKSTOP`). What an event means is decided by the pure function
:func:`workflows.transitions.apply`: wait for an incident (anomaly event,
failed attempt end, or the hang watchdog) → decide (``workflows.decision``) →
publish advice → in act mode, or once approved, isolate and restart
(activities that read fresh state and verify) → wait for the next attempt
(attempt-start watchdog). Every wait is a durable timer, so worker or server
crashes lose nothing.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from lazarus.models import milestones, names
    from lazarus.models.policy import Mode
    from lazarus.models.recovery import (
        TERMINAL_STATES,
        AdviceStatus,
        AnomalyDetected,
        Approval,
        AttemptEnded,
        AttemptStarted,
        AttemptSuspension,
        DecisionReply,
        JobEvent,
        JobEventEnvelope,
        JobRecoveryInput,
        JobStatus,
        LedgerNote,
        ModeChange,
        ProgressDigest,
        Rejection,
        TelemetryNote,
    )
    from workflows import attributes, callers, calls, metering
    from workflows.answers import misaddressed, signed
    from workflows.authorization import caller_refusal, decided_by
    from workflows.calls import FRESH_STATE_PATCH
    from workflows.effects import (
        Answered,
        AnswerRefused,
        AwaitAnswer,
        Cancel,
        CheckMode,
        CheckProgress,
        Decide,
        DecisionExpired,
        Details,
        Effect,
        Input,
        Isolate,
        LiftExpedite,
        Notify,
        ReleaseHold,
        Requeue,
        SearchAttributes,
        Warn,
        WatchdogFired,
        WorkflowStarted,
    )
    from workflows.notifier import Notifier
    from workflows.patches import DECISION_PATCHES, TELEMETRY_KEEPS_THE_HANG_CLOCK
    from workflows.transitions import answer_refusal, apply, backstop_in_force, hang_budget_now, watchdog_deadline
    from workflows.watchdog import Watchdog


@workflow.defn(name=names.JOB_WORKFLOW)
class JobRecoveryWorkflow:
    @workflow.init
    def __init__(self, inp: JobRecoveryInput) -> None:
        self.s = inp
        self._events: list[JobEvent] = []
        self._answer: Approval | Rejection | None = None
        self._watchdog = Watchdog()
        self._mode_changes = 0  # operators' mode changes so far (a wait that ignores act mode ends on a new one)
        self._notifier = Notifier()

    # ---- messages ------------------------------------------------------------------------

    @workflow.signal(name=names.ATTEMPT_STARTED)
    def attempt_started(self, event: AttemptStarted) -> None:
        self._events.append(event)

    @workflow.signal(name=names.PROGRESS)
    def progress(self, event: ProgressDigest) -> None:
        self._events.append(event)

    @workflow.signal(name=names.ATTEMPT_ENDED)
    def attempt_ended(self, event: AttemptEnded) -> None:
        self._events.append(event)

    @workflow.signal(name=names.SUSPENSION)
    def suspension(self, event: AttemptSuspension) -> None:
        self._events.append(event)

    @workflow.signal(name=names.ANOMALY)
    def anomaly(self, event: AnomalyDetected) -> None:
        self._events.append(event)

    @workflow.signal(name=names.TELEMETRY_NOTE)
    def telemetry_note(self, event: TelemetryNote) -> None:
        self._events.append(event)

    @workflow.signal(name=names.LEDGER_NOTE)
    def ledger_note(self, event: LedgerNote) -> None:
        self._events.append(event)

    @workflow.signal(name=names.JOB_EVENT)
    def job_event(self, envelope: JobEventEnvelope) -> None:
        """Any event, in an envelope: what telemetry sent before the named signals (kept for running workflows)."""
        self._events.append(envelope.event)

    @workflow.update(name=names.APPROVE_ADVICE)
    def approve_advice(self, approval: Approval) -> DecisionReply:
        answer = self._answer = signed(approval, callers.current())
        return DecisionReply(
            generation=approval.generation,
            status=AdviceStatus.APPROVED,
            message=f"advice {approval.generation} approved by {answer.operator}",
        )

    @approve_advice.validator
    def _validate_approve(self, approval: Approval) -> None:
        self._check(approval)

    @workflow.update(name=names.REJECT_ADVICE)
    def reject_advice(self, rejection: Rejection) -> DecisionReply:
        answer = self._answer = signed(rejection, callers.current())
        return DecisionReply(
            generation=rejection.generation,
            status=AdviceStatus.REJECTED,
            message=f"advice {rejection.generation} rejected by {answer.operator}",
        )

    @reject_advice.validator
    def _validate_reject(self, rejection: Rejection) -> None:
        self._check(rejection)

    @workflow.signal(name=names.APPROVE_ADVICE)
    def approve_advice_signal(self, approval: Approval) -> None:
        self._answer_by_signal(approval)

    @workflow.signal(name=names.REJECT_ADVICE)
    def reject_advice_signal(self, rejection: Rejection) -> None:
        self._answer_by_signal(rejection)

    @workflow.signal(name=names.SET_MODE)
    def set_mode(self, change: ModeChange) -> None:
        refusal = caller_refusal(self.s.operators, callers.current(), "switch modes")
        if refusal is not None:  # ignored, and recorded: a signal cannot be refused to its sender
            self._record_refusal(change, refusal)
            return
        self._mode_changes += 1
        for effect in self._apply(change):  # search attributes only: nothing to wait for
            self._perform_now(effect)

    @workflow.query(name=names.JOB_STATUS)
    def status(self) -> JobStatus:
        budget = hang_budget_now(self.s)
        return JobStatus(
            cluster=self.s.cluster,
            job_id=self.s.job_id,
            state=self.s.state,
            mode=self.mode,
            policy_name=self.s.policy_name,
            attempts=self.s.attempts,
            advice=self.s.advice_history[-1] if self.s.advice_history else None,
            advice_history=self.s.advice_history,
            stop_reason=self.s.stop_reason,
            hang_deadline=watchdog_deadline(self.s)[0] if budget else None,
            hang_budget=budget,
            hang_clock=budget is not None and backstop_in_force(self.s),
            opt_in_notes=self.s.opt_in_notes,
            telemetry_notes=self.s.telemetry_notes,
            ledger_notes=self.s.ledger_notes,
            refused_answers=self.s.refused_answers,
            milestones=milestones.of(self.s.attempts),
        )

    def _refusal(self, answer: Approval | Rejection) -> str | None:
        action = "approve advice" if isinstance(answer, Approval) else "reject advice"
        return (
            caller_refusal(self.s.operators, callers.current(), action)
            or misaddressed(self.s, answer)
            or answer_refusal(self.s, answer.generation, answered=self._answer is not None)
        )

    def _check(self, answer: Approval | Rejection) -> None:
        """An update's validator: a refused answer fails the update (the caller sees why) and leaves no history."""
        refusal = self._refusal(answer)
        if refusal is not None:
            who = decided_by(callers.current(), answer.operator)
            workflow.logger.warning(f"refused {type(answer).__name__.lower()} by {who!r}: {refusal}")
            raise ValueError(refusal)

    def _answer_by_signal(self, answer: Approval | Rejection) -> None:
        refusal = self._refusal(answer)
        if refusal is None:
            self._answer = signed(answer, callers.current())
            return
        self._record_refusal(answer, refusal)

    def _record_refusal(self, message: Approval | Rejection | ModeChange, refusal: str) -> None:
        by = decided_by(callers.current(), message.operator)
        for effect in self._apply(AnswerRefused(message, refusal, by)):  # recorded and shown: nothing to wait for
            self._perform_now(effect)

    @property
    def mode(self) -> Mode:
        return self.s.job_mode or self.s.cluster_mode

    # ---- main loop -------------------------------------------------------------------------

    @workflow.run
    async def run(self, inp: JobRecoveryInput) -> JobStatus:
        self.s.follows_hang_clock = workflow.patched(TELEMETRY_KEEPS_THE_HANG_CLOCK)
        attributes.upsert_job(self.s, self.mode)
        await self._feed(WorkflowStarted())
        while self.s.state not in TERMINAL_STATES:
            await self._next()
            if self._should_continue_as_new():
                self._watchdog.arm(None, None)
                await self._notifier.flush()
                await workflow.wait_condition(workflow.all_handlers_finished)
                if self._events:
                    continue  # events arrived while the notices were posted: apply them first
                self.s.runs += 1
                workflow.continue_as_new(self.s)
        self._watchdog.arm(None, None)
        await self._notifier.flush()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self.status()

    def _should_continue_as_new(self) -> bool:
        return (
            self.s.state not in TERMINAL_STATES and not self._events and workflow.info().is_continue_as_new_suggested()
        )

    async def _next(self) -> None:
        """Wait for events or the watchdog; apply them up to and including the first incident."""
        deadline, summary = watchdog_deadline(self.s)
        # a backstop moves later with each digest: replaced then (no extra workflow task), not left to fire early
        self._watchdog.arm(deadline, summary, replace_later=backstop_in_force(self.s))
        await workflow.wait_condition(lambda: bool(self._events) or self._watchdog.fired)
        if self._watchdog.fired and not self._events:
            fired_for = self._watchdog.take()
            deadline, _ = watchdog_deadline(self.s)
            # the timer was set for ``fired_for``: a deadline no later than that has passed; a later one means
            # progress moved it on (re-arm). Never workflow.now() here: see workflows/watchdog.py.
            if deadline is not None and fired_for is not None and deadline <= fired_for:
                await self._feed(WatchdogFired())
            return
        while self._events:
            if await self._feed(self._events.pop(0)):
                return

    # ---- effects ---------------------------------------------------------------------------

    def _apply(self, event: Input) -> list[Effect]:
        before = self.s
        self.s, effects = apply(self.s, event, workflow.now())
        metering.record_job(before, self.s)
        return effects

    async def _feed(self, event: Input) -> bool:
        """Apply ``event``, perform its effects in order, and apply each outcome as it comes (its effects
        go first). True when an incident was decided."""
        queue, decided = deque(self._apply(event)), False
        while queue:
            effect = queue.popleft()
            decided = decided or isinstance(effect, Decide)
            outcome = self._perform_now(effect) if _immediate(effect) else await self._perform(effect)
            if outcome is not None:
                queue.extendleft(reversed(self._apply(outcome)))
        return decided

    def _perform_now(self, effect: Effect) -> Input | None:
        if isinstance(effect, SearchAttributes):
            attributes.upsert(effect)
        elif isinstance(effect, Details):
            workflow.set_current_details(effect.text)
        elif isinstance(effect, Warn):
            workflow.logger.warning(effect.text)
        elif isinstance(effect, Decide):  # decide now: handed straight back as the next input
            return replace(effect, unpatched=frozenset(p for p in DECISION_PATCHES if not workflow.patched(p)))
        elif isinstance(effect, Notify):
            self._notifier.send(effect)  # in the background: a notice never holds up the recovery
        return None

    async def _perform(self, effect: Effect) -> Input | None:
        if isinstance(effect, AwaitAnswer):
            return await self._await_answer(effect)
        if isinstance(effect, CheckProgress):
            return await calls.check_progress(effect)
        if isinstance(effect, CheckMode):
            return await calls.cluster_mode(effect)
        if isinstance(effect, Isolate):
            return await calls.isolate(effect)
        if isinstance(effect, Requeue):
            return await calls.requeue(effect)
        if isinstance(effect, Cancel):
            return await calls.cancel(effect)
        if isinstance(effect, ReleaseHold):
            return await calls.release(effect)
        if isinstance(effect, LiftExpedite):
            return await calls.lift_expedite(effect)
        raise TypeError(f"unknown effect {effect!r}")

    async def _await_answer(self, effect: AwaitAnswer) -> Input:
        """Monitor mode: wait for an operator; the decision watchdog fails open. The answer comes with what
        telemetry reported meanwhile (not yet applied), so acting on it is checked against the job's present."""
        self._answer = None
        changes = self._mode_changes

        def switched_to_act() -> bool:
            return self.mode == Mode.ACT and (effect.wake_on_act or self._mode_changes > changes)

        try:
            await workflow.wait_condition(
                lambda: (
                    self._answer is not None
                    or switched_to_act()
                    or self._superseded(effect.attempt)
                    or (effect.wake_on_end and self._ended(effect.attempt))
                ),
                timeout=effect.timeout,
                timeout_summary=f"decision watchdog (advice {effect.generation})",
            )
        except TimeoutError:
            return DecisionExpired()
        answer, self._answer = self._answer, None
        news = tuple(e for e in self._events if isinstance(e, (AttemptStarted, AttemptEnded)))
        if news and not workflow.patched(FRESH_STATE_PATCH):
            news = ()  # a workflow that waited under older code acts as that code did
        return Answered(answer, news)

    def _superseded(self, attempt: int) -> bool:
        return any(isinstance(e, AttemptStarted) and e.attempt > attempt for e in self._events)

    def _ended(self, attempt: int) -> bool:
        return any(isinstance(e, AttemptEnded) and e.attempt == attempt for e in self._events)


def _immediate(effect: Effect) -> bool:
    return isinstance(effect, (SearchAttributes, Details, Warn, Decide, Notify))
