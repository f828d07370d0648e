"""The scenarios whose workflow histories are stored in tests/histories and replayed by tests/workflows/test_replay.py.

Each scenario drives real workflows (the harness's in-memory scheduler and telemetry activities) on a
Temporal server and names the runs whose histories it keeps. Together they cover every timer (hang
watchdog, decision watchdog, attempt-start watchdog, the ledger's reconciliation), continue-as-new of both
workflows, the node ledger, and approval by update and by signal. ``scripts/record_histories.py`` runs them.

Scenarios only use what every recorded revision of the workflows offers: messages are sent by the workflow
class's own handler (so the name is the code's), and a handler an older revision lacks is skipped, since
``scripts/record_histories.py --rev`` runs these drivers against an older revision's workflow code.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from temporalio import activity
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from lazarus.models import names
from lazarus.models.lease import LeaseGrant, LeaseRequest, LeaseState, LogOffset
from lazarus.models.ledger import Implication, LedgerInput, LedgerPolicy, ResumeRequest
from lazarus.models.policy import Mode
from lazarus.models.recovery import (
    Approval,
    AttemptSuspension,
    JobRecoveryInput,
    LedgerNote,
    ModeChange,
    ProgressDigest,
    RecoveryState,
    Rejection,
    TelemetryNote,
)
from lazarus.models.slurm import JobState, NodeAction, NodeActionResult, NodeCensus, NodeCensusRequest, NodeState
from tests.workflows.harness import (
    T0,
    FakeScheduler,
    Running,
    app_error,
    as_caller,
    ended,
    job_input,
    progress,
    send,
    started,
    workflow_interceptors,
    xid79_on,
)
from tests.workflows.ledger_harness import FakeNodes as NodesWithAgents
from tests.workflows.ledger_harness import imp, running_ledger, settle
from tests.workflows.notify_double import notify_activities
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow
from workflows.telemetry_lease import TelemetryLeaseWorkflow

Server = Literal["time-skipping", "dev"]


Drive = Callable[[WorkflowEnvironment], Awaitable[list[WorkflowHandle]]]


@dataclass(frozen=True)
class Scenario:
    """``drive`` returns the runs whose histories are kept, one per name of ``keeps``
    (stored as ``tests/histories/<name>.json``)."""

    name: str
    server: Server  # "dev": the dev server with continue-as-new suggested after 20 events
    drive: Drive
    covers: str
    keeps: tuple[str, ...]


SCENARIOS: list[Scenario] = []


def scenario(server: Server, covers: str, keeps: tuple[str, ...] = ()):
    """Register a scenario; it keeps one history named after it unless ``keeps`` names several."""

    def register(drive: Drive) -> Drive:
        SCENARIOS.append(Scenario(drive.__name__, server, drive, covers, keeps or (drive.__name__,)))
        return drive

    return register


# ---- helpers ----------------------------------------------------------------------------------------


async def wait_for(env: WorkflowEnvironment, check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Poll ``check`` (advancing a time-skipping server's clock a little each time) until it holds."""
    for _ in range(400):
        if await check():
            return
        await env.sleep(timedelta(milliseconds=50))
    raise AssertionError(f"scenario stuck: never {what}")


async def wait_state(env: WorkflowEnvironment, handle: WorkflowHandle, state: RecoveryState) -> None:
    async def reached() -> bool:
        return (await handle.query(JobRecoveryWorkflow.status)).state == state

    await wait_for(env, reached, f"reached {state.value}")


async def runs_of(client: Client, handle: WorkflowHandle) -> list[WorkflowHandle]:
    """Every run of the workflow from ``handle``'s first one, following continue-as-new."""
    chain = [client.get_workflow_handle(handle.id, run_id=handle.first_execution_run_id or handle.result_run_id)]
    while True:
        last = (await chain[-1].fetch_history()).events[-1]
        if not last.HasField("workflow_execution_continued_as_new_event_attributes"):
            return chain
        run_id = last.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
        chain.append(client.get_workflow_handle(handle.id, run_id=run_id))


class FakeNodes:
    """Slurm's node list for the ledger: drains and resumes change it; an administrator can too."""

    def __init__(self, count: int = 8) -> None:
        self.nodes = {f"node{i}": NodeState(name=f"node{i}", state="IDLE") for i in range(1, count + 1)}

    def activities(self) -> list:
        @activity.defn(name="slurm_list_nodes")
        async def list_nodes() -> list[NodeState]:
            return list(self.nodes.values())

        @activity.defn(name="slurm_node_census")
        async def node_census(req: NodeCensusRequest) -> NodeCensus:
            return NodeCensus.of(list(self.nodes.values()), req.names)

        @activity.defn(name="slurm_drain_nodes")
        async def drain(req: NodeAction) -> NodeActionResult:
            self._known(req.nodes)
            for n in req.nodes:
                self.nodes[n] = NodeState(name=n, state="IDLE+DRAIN", reason=req.reason)
            return NodeActionResult(changed=req.nodes)

        @activity.defn(name="slurm_resume_nodes")
        async def resume(req: NodeAction) -> NodeActionResult:
            self._known(req.nodes)
            for n in req.nodes:
                self.nodes[n] = NodeState(name=n, state="IDLE")
            return NodeActionResult(changed=req.nodes)

        return [list_nodes, node_census, drain, resume, *notify_activities([])]

    def _known(self, names: list[str]) -> None:
        unknown = [n for n in names if n not in self.nodes]
        if unknown:
            raise ApplicationError(
                f"{', '.join(unknown)}: not a node of this cluster", type="UnknownNode", non_retryable=True
            )


class Ledger:
    """A node ledger and the workers serving it; use as an async context manager (it is terminated at the end)."""

    def __init__(self, env: WorkflowEnvironment, fake: FakeNodes | None = None, **policy) -> None:
        self.env, self.client, self.fake, self.policy = env, env.client, fake or FakeNodes(), policy
        self.id = "lazarus-replay-ledger-" + uuid.uuid4().hex[:6]

    async def __aenter__(self) -> Ledger:
        sched, queue = "ledger-sched-" + uuid.uuid4().hex[:6], "ledger-" + uuid.uuid4().hex[:6]
        self._workers = [
            Worker(self.client, task_queue=queue, workflows=[NodeLedgerWorkflow], interceptors=workflow_interceptors()),
            Worker(self.client, task_queue=sched, activities=self.fake.activities()),
        ]
        for w in self._workers:
            await w.__aenter__()
        self.handle = await self.client.start_workflow(
            NodeLedgerWorkflow.run,
            LedgerInput(cluster="test", policy=LedgerPolicy(**self.policy), scheduler_queue=sched),
            id=self.id,
            task_queue=queue,
        )
        return self

    async def __aexit__(self, *exc) -> None:
        # the ledger never ends on its own; its reconciliation timer must not outlive the scenario
        await self.client.get_workflow_handle(self.id).terminate("scenario recorded")
        for w in reversed(self._workers):
            await w.__aexit__(*exc)

    async def implicate(self, node: str, job: int, drain: bool = True) -> None:
        """Job ``job`` blames ``node`` now (within the lemon window, wherever the server's clock is)."""
        await self.handle.signal(
            NodeLedgerWorkflow.record_implication,
            Implication(
                node=node,
                job_id=job,
                attempt=0,
                signature="nvrm_xid_79",
                category="hardware",
                at=await self.env.get_current_time(),
                drain_requested=drain,
                # each job its own user (lemon nodes count users); older revisions know no user
                **({"user": f"user{job}"} if "user" in Implication.model_fields else {}),
            ),
        )

    async def settle(self, predicate, what: str) -> None:
        async def holds() -> bool:
            return predicate({r.node: r for r in (await self.handle.query(NodeLedgerWorkflow.view)).nodes})

        await wait_for(self.env, holds, what)


async def awaiting_approval(env: WorkflowEnvironment, mode: Mode = Mode.MONITOR, **policy) -> Running:
    """A monitor-mode job whose attempt 0 failed with an Xid 79 on node2: advice 1 awaits an operator."""
    run = Running(env.client, job_input(mode, **policy))
    await run.__aenter__()
    await send(run.handle, started(0), xid79_on("node2"), ended(0))
    await wait_state(env, run.handle, RecoveryState.AWAITING_APPROVAL)
    return run


async def next_attempt_completes(run: Running, attempt: int = 1) -> None:
    await send(run.handle, started(attempt, ("node1", "node3")), ended(attempt, JobState.COMPLETED, 0))
    await run.handle.result()


# ---- job workflow: act mode ---------------------------------------------------------------------------


@scenario("time-skipping", "act mode: Xid 79 → drain (no ledger) → requeue excluding the node → next attempt completes")
async def act_mode_restart(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), progress(0, 10, T0, checkpoint=10), xid79_on("node2"), ended(0))
        await next_attempt_completes(run)
    return [run.handle]


@scenario(
    "time-skipping",
    "three milestones: Xid 79 at step 47 (checkpoint 40) → requeue verified → attempt 1 running → its first "
    "progress line at step 41 (progress restored: resumed from 40, 7 steps lost) → completed",
)
async def restart_progress_restored(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT)) as run:
        now = await env.get_current_time()
        await send(run.handle, started(0), progress(0, 47, now, checkpoint=40), xid79_on("node2"), ended(0))
        await wait_state(env, run.handle, RecoveryState.VERIFYING)
        first = {"first_step": 41, "first_progress_at": now + timedelta(seconds=20)}
        digest = progress(1, 43, now + timedelta(seconds=25))
        if "first_step" in ProgressDigest.model_fields:  # older revisions (--rev) know no first progress line
            digest = digest.model_copy(update=first)
        await send(run.handle, started(1, ("node1", "node3"), ("node2",)), digest, ended(1, JobState.COMPLETED, 0))
        await run.handle.result()
    return [run.handle]


@scenario(
    "time-skipping",
    "act mode, expedite on: Xid 79 → requeue expedited (top of the queue) → attempt 1 runs → the boost is lifted",
)
async def act_mode_expedited_restart(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT, expedite={"enabled": True})) as run:
        await send(run.handle, started(0), progress(0, 10, T0, checkpoint=10), xid79_on("node2"), ended(0))
        await next_attempt_completes(run)
    return [run.handle]


@scenario(
    "time-skipping",
    "a recovery told by the signals named for their events (attempt_started, progress, telemetry_note, suspension, "
    "anomaly, attempt_ended, ledger_note), as telemetry and the ledger send them since they replaced job_event",
)
async def recovery_told_by_named_signals(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT)) as run:
        await send(
            run.handle,
            started(0),
            progress(0, 10, T0, checkpoint=10),
            TelemetryNote(text="job 7: stderr file refused (not the job's own)"),
            AttemptSuspension(attempt=0, suspended=True, at=T0),
            AttemptSuspension(attempt=0, suspended=False, at=T0),
            xid79_on("node2"),
            ended(0),
            LedgerNote(text="node2: drain waits for corroboration"),
        )
        await next_attempt_completes(run)
    return [run.handle]


@scenario("time-skipping", "an application error stops recovery at once")
async def application_error(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), app_error(), ended(0))
        await run.handle.result()
    return [run.handle]


@scenario(
    "time-skipping",
    "stop means stop: an application error while the job still runs → act mode cancels it (verified) → stopped",
)
async def act_mode_stop_cancels(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), progress(0, 10, T0, checkpoint=10), app_error())
        await run.handle.result()
    return [run.handle]


@scenario("time-skipping", "stop means stop in monitor mode: the stop advice says it will cancel; approved → cancelled")
async def monitor_mode_stop_approved_cancels(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), app_error())
        await wait_state(env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice"))
        await run.handle.result()
    return [run.handle]


@scenario("time-skipping", "a job output naming a node outside its allocation (hostile): that node is never touched")
async def node_outside_allocation(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), xid79_on("node4"), ended(0))
        await wait_state(env, run.handle, RecoveryState.VERIFYING)
        await next_attempt_completes(run)
    return [run.handle]


@scenario("time-skipping", "the restart is refused: fail-open release of the hold, recovery failed")
async def restart_refused(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT), FakeScheduler(refuse_restart=True)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await run.handle.result()
    return [run.handle]


@scenario("time-skipping", "an invalid opt-in comment: the job is ignored")
async def opt_in_ignored(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    inp = job_input(Mode.ACT).model_copy(update={"opt_in_error": "unknown key 'hang_budgte'"})
    async with Running(env.client, inp) as run:
        await run.handle.result()
    return [run.handle]


# ---- job workflow: monitor mode and operators -----------------------------------------------------------


@scenario("time-skipping", "monitor mode: advice approved by the approve_advice update")
async def monitor_mode_approved(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    run = await awaiting_approval(env)
    try:
        await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice"))
        await wait_state(env, run.handle, RecoveryState.VERIFYING)
        await next_attempt_completes(run)
    finally:
        await run.__aexit__(None, None, None)
    return [run.handle]


@scenario(
    "time-skipping",
    "monitor mode: approval signals for a stale generation or another cluster are refused "
    "(recorded), then the approve_advice signal acts",
)
async def monitor_mode_approved_by_signal(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    run = await awaiting_approval(env)
    try:
        await run.handle.signal(JobRecoveryWorkflow.approve_advice_signal, Approval(generation=7, operator="mallory"))
        if "cluster" in Approval.model_fields:  # older revisions' answers name no job
            await run.handle.signal(
                JobRecoveryWorkflow.approve_advice_signal, Approval(generation=1, operator="eve", cluster="west")
            )
        await run.handle.signal(JobRecoveryWorkflow.approve_advice_signal, Approval(generation=1, operator="alice"))
        await wait_state(env, run.handle, RecoveryState.VERIFYING)
        await next_attempt_completes(run)
    finally:
        await run.__aexit__(None, None, None)
    return [run.handle]


@scenario("time-skipping", "monitor mode: advice rejected by update; the failed job is left alone")
async def monitor_mode_rejected(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    run = await awaiting_approval(env)
    try:
        await run.handle.execute_update(JobRecoveryWorkflow.reject_advice, Rejection(generation=1, operator="bob"))
        await run.handle.result()
    finally:
        await run.__aexit__(None, None, None)
    return [run.handle]


@scenario("time-skipping", "monitor mode: advice rejected by the reject_advice signal")
async def monitor_mode_rejected_by_signal(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    run = await awaiting_approval(env)
    try:
        await run.handle.signal(JobRecoveryWorkflow.reject_advice_signal, Rejection(generation=1, operator="bob"))
        await run.handle.result()
    finally:
        await run.__aexit__(None, None, None)
    return [run.handle]


@scenario("time-skipping", "monitor mode: the decision watchdog expires the advice (fail open)")
async def monitor_mode_expired(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    run = await awaiting_approval(env, decision_timeout=timedelta(minutes=5))
    try:
        await run.handle.result()  # the time-skipping server fires the decision watchdog
    finally:
        await run.__aexit__(None, None, None)
    return [run.handle]


@scenario("time-skipping", "monitor mode: the set_mode signal switches the job to act while advice waits")
async def monitor_mode_switched_to_act(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    run = await awaiting_approval(env)
    try:
        await run.handle.signal(JobRecoveryWorkflow.set_mode, ModeChange(mode=Mode.ACT, scope="job", operator="ops"))
        await wait_state(env, run.handle, RecoveryState.VERIFYING)
        await next_attempt_completes(run)
    finally:
        await run.__aexit__(None, None, None)
    return [run.handle]


@scenario(
    "time-skipping",
    "authorization.operators: a caller not permitted is refused (its approve and mode signals recorded, its "
    "update refused), then a permitted operator approves by update",
)
async def monitor_mode_only_operators_answer(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    run = Running(env.client, job_input(Mode.MONITOR, operators=("alice",)))
    await run.__aenter__()
    try:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(env, run.handle, RecoveryState.AWAITING_APPROVAL)
        mallory = as_caller(env.client, "mallory").get_workflow_handle(run.handle.id)
        await mallory.signal(JobRecoveryWorkflow.approve_advice_signal, Approval(generation=1, operator="alice"))
        await mallory.signal(JobRecoveryWorkflow.set_mode, ModeChange(mode=Mode.ACT, scope="job", operator="alice"))
        with contextlib.suppress(WorkflowUpdateFailedError):  # refused by the validator: leaves no history
            await mallory.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice"))
        alice = as_caller(env.client, "alice").get_workflow_handle(run.handle.id)
        await alice.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice"))
        await wait_state(env, run.handle, RecoveryState.VERIFYING)
        await next_attempt_completes(run)
    finally:
        await run.__aexit__(None, None, None)
    return [run.handle]


# ---- job workflow: timers -----------------------------------------------------------------------------


@scenario(
    "time-skipping",
    "a healthy job: progress keeps moving the hang watchdog on (fired early, re-armed), "
    "a checkpoint save and a learned budget, then completion",
)
async def healthy_job_progress(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    inp = job_input(Mode.ACT, hang_budget=timedelta(minutes=10), startup_grace=timedelta(minutes=5))
    async with Running(env.client, inp) as run:
        now = await env.get_current_time()
        await send(run.handle, started(0).model_copy(update={"at": now}))
        digests = [
            progress(0, 10, now + timedelta(minutes=4)),
            progress(0, 20, now + timedelta(minutes=8), checkpoint=20).model_copy(update={"checkpointing": True}),
            progress(0, 30, now + timedelta(minutes=12)).model_copy(
                update={"max_step_interval": timedelta(seconds=40), "hang_budget": timedelta(minutes=7)}
            ),
            progress(0, 40, now + timedelta(minutes=16), checkpoint=40),
        ]
        for digest in digests:
            await env.sleep(timedelta(minutes=4))
            await send(run.handle, digest)
        await env.sleep(timedelta(minutes=3))
        await send(run.handle, ended(0, JobState.COMPLETED, 0))
        await run.handle.result()
    return [run.handle]


@scenario(
    "time-skipping",
    "slow steps, then a checkpoint save: each digest carries the budget telemetry learned "
    "for the phase (as deployed telemetry does); the watchdog follows it",
)
async def slow_steps_then_checkpoint(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT)) as run:
        now = await env.get_current_time()
        await send(run.handle, started(0).model_copy(update={"at": now}))
        phases = [  # minutes after the start, the digest's changes
            (1, {"max_step_interval": timedelta(minutes=10), "hang_budget": timedelta(minutes=80)}),
            (5, {"checkpointing": True, "hang_budget": timedelta(minutes=30)}),
            (25, {"checkpoint": 10, "hang_budget": timedelta(minutes=80)}),
        ]
        elapsed = 0
        for minute, fields in phases:
            await env.sleep(timedelta(minutes=minute - elapsed))
            elapsed = minute
            digest = progress(0, 10 + minute, now + timedelta(minutes=minute)).model_copy(update=fields)
            await send(run.handle, digest)
        await env.sleep(timedelta(minutes=15))
        await send(run.handle, ended(0, JobState.COMPLETED, 0))
        await run.handle.result()
    return [run.handle]


@scenario("time-skipping", "the hang watchdog fires, telemetry confirms no progress, the job is requeued")
async def hang_watchdog_restart(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    inp = job_input(Mode.ACT, hang_budget=timedelta(minutes=10), startup_grace=timedelta(minutes=5))
    async with Running(env.client, inp) as run:
        now = await env.get_current_time()
        await send(run.handle, started(0).model_copy(update={"at": now}), progress(0, 10, now, checkpoint=10))
        await env.sleep(timedelta(minutes=11))
        await wait_state(env, run.handle, RecoveryState.VERIFYING)
        await next_attempt_completes(run)
    return [run.handle]


@scenario(
    "time-skipping",
    "training reached its declared last step (30 of 30), then silence while Slurm keeps the job running: the "
    "hang watchdog fires, the call is advice none (ending, not hung), nothing more fires; Slurm's end completes it",
)
async def finished_training_not_hung(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    inp = job_input(Mode.ACT, hang_budget=timedelta(minutes=10), startup_grace=timedelta(minutes=5))
    async with Running(env.client, inp) as run:
        now = await env.get_current_time()
        last = progress(0, 30, now, checkpoint=30).model_copy(update={"total_steps": 30})
        await send(run.handle, started(0).model_copy(update={"at": now}), last)
        await env.sleep(timedelta(minutes=11))

        async def advised() -> bool:
            return bool((await run.handle.query(JobRecoveryWorkflow.status)).advice_history)

        await wait_for(env, advised, "recorded the hang call")
        await env.sleep(timedelta(minutes=30))
        await send(run.handle, ended(0, JobState.COMPLETED, 0))
        await run.handle.result()
    return [run.handle]


@scenario(
    "time-skipping",
    "telemetry unreachable when the hang watchdog is due: two blind checks (a blind spell, no decision), then a "
    "view it vouches for: a hang, requeued; a redelivered event (same id) is applied once",
)
async def blind_spell_then_hang(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    inp = job_input(Mode.ACT, hang_budget=timedelta(minutes=10))
    async with Running(env.client, inp, FakeScheduler(telemetry_failures=2)) as run:
        start = started(0).model_copy(update={"id": f"{inp.job_id}/0/attempt_started/0"})
        first = progress(0, 10, T0).model_copy(update={"id": f"{inp.job_id}/0/progress/a"})
        await send(run.handle, start, first, start)
        result = asyncio.ensure_future(run.handle.result())  # waiting on the result lets time skip
        await wait_state(env, run.handle, RecoveryState.VERIFYING)
        await send(run.handle, started(1), ended(1, JobState.COMPLETED, 0))
        await result
    return [run.handle]


@scenario(
    "time-skipping",
    "telemetry keeps the hang clock (patch telemetry-keeps-the-hang-clock): keep-alives and a checkpoint move the "
    "30-minute backstop on (each replaces the timer), a silent digest makes the workflow ask telemetry, which "
    "cannot be reached (a blind spell, rechecked at a quarter budget), then vouches for the silence: a hang, requeued",
)
async def hang_told_by_telemetry(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    budget = timedelta(minutes=2)
    inp = job_input(Mode.ACT, hang_budget=budget, hang_budget_min=budget, startup_grace=budget)
    async with Running(env.client, inp, FakeScheduler(telemetry_failures=1)) as run:
        now = await env.get_current_time()
        await send(run.handle, started(0).model_copy(update={"at": now}))

        def clock(step: int, at: datetime, **fields: object) -> ProgressDigest:
            digest = progress(0, step, at).model_copy(update={"hang_budget": budget, "observed_at": at})
            return digest.model_copy(update={"hang_clock": True, **fields})

        await send(run.handle, clock(1, now))
        for minutes, fields in ((25, {}), (40, {"checkpoint": 200}), (65, {})):  # keep-alives and a checkpoint
            await env.sleep(timedelta(minutes=minutes) - (await env.get_current_time() - now))
            await send(run.handle, clock(minutes * 6, now + timedelta(minutes=minutes), **fields))
        last = now + timedelta(minutes=65)
        await env.sleep(last + budget - await env.get_current_time())
        await send(run.handle, clock(390, last, silent=True, observed_at=last + budget))
        await env.sleep(budget / 4)  # the blind spell's recheck
        await wait_state(env, run.handle, RecoveryState.VERIFYING)
        await next_attempt_completes(run)
    return [run.handle]


def _with_ledger(mode: Mode) -> JobRecoveryInput:
    return job_input(mode).model_copy(update={"ledger_workflow_id": "lazarus-ledger-test"})


@scenario("time-skipping", "act mode reads the kill switch before acting: thrown, the advice waits; an approval acts")
async def act_mode_kill_switch(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, _with_ledger(Mode.ACT), FakeScheduler(cluster_mode=Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice"))
        await next_attempt_completes(run)
    return [run.handle]


@scenario("time-skipping", "an approval that arrives after the job completed is not executed")
async def approved_after_completion(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.MONITOR)) as run:
        await send(run.handle, started(0), xid79_on("node2"))
        await wait_state(env, run.handle, RecoveryState.AWAITING_APPROVAL)
        await send(run.handle, ended(0, JobState.COMPLETED, 0))
        await run.handle.execute_update(JobRecoveryWorkflow.approve_advice, Approval(generation=1, operator="alice"))
        await run.handle.result()
    return [run.handle]


@scenario("time-skipping", "a refused restart releases only the hold Lazarus placed on the attempt it replaced")
async def restart_refused_fail_open(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, _with_ledger(Mode.ACT), FakeScheduler(refuse_restart=True)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await run.handle.result()
    return [run.handle]


@scenario("time-skipping", "the attempt-start watchdog fires when the requeued attempt does not start in time")
async def attempt_start_watchdog(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT, attempt_start_timeout=timedelta(minutes=30))) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await wait_state(env, run.handle, RecoveryState.VERIFYING)
        await env.sleep(timedelta(minutes=31))

        async def reported() -> bool:
            outcome = (await run.handle.query(JobRecoveryWorkflow.status)).attempts[0].outcome or ""
            return "had not started" in outcome

        await wait_for(env, reported, "reported the attempt that did not start")
        await next_attempt_completes(run)
    return [run.handle]


# ---- the node ledger ----------------------------------------------------------------------------------


@scenario(
    "time-skipping",
    "act mode with the node ledger: the job reports its implication; Slurm shows the node not responding "
    "(corroboration from outside the job), so the ledger drains it",
    keeps=("act_mode_via_ledger", "node_ledger_from_job"),
)
async def act_mode_via_ledger(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Ledger(env) as ledger:
        ledger.fake.nodes["node2"] = NodeState(name="node2", state="IDLE*")  # not responding, as Slurm sees it
        inp = job_input(Mode.ACT).model_copy(update={"ledger_workflow_id": ledger.id})
        async with Running(env.client, inp) as run:
            await send(run.handle, started(0), xid79_on("node2"), ended(0))
            await wait_state(env, run.handle, RecoveryState.VERIFYING)
            await ledger.settle(lambda nodes: "node2" in nodes and nodes["node2"].drained_by_lazarus, "drained node2")
            await next_attempt_completes(run)
    return [run.handle, ledger.handle]


@scenario(
    "time-skipping",
    "the node ledger: drain on request, operator drain and resume (updates), a lemon node, "
    "reconciliation timers, a node resumed outside Lazarus, policy and cluster-mode signals",
)
async def node_ledger(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    from lazarus.models.ledger import DrainRequest  # not in every recorded revision: imported where needed

    async with Ledger(env, lemon_job_count=3, max_drain_fraction=0.25) as ledger:
        ledger.fake.nodes["node2"] = NodeState(name="node2", state="DOWN*")  # Slurm corroborates the job's word
        await ledger.implicate("node2", 1)
        await ledger.settle(lambda nodes: "node2" in nodes and nodes["node2"].drained_by_lazarus, "drained node2")
        await ledger.handle.execute_update(
            NodeLedgerWorkflow.drain_node, DrainRequest(node="node6", operator="dave", reason="fan")
        )
        await ledger.handle.execute_update(NodeLedgerWorkflow.resume_node, ResumeRequest(node="node6", operator="dave"))
        await ledger.implicate("node2", 2)
        for job in (3, 4, 5):
            await ledger.implicate("node3", job, drain=False)
        await ledger.settle(lambda nodes: "node3" in nodes and nodes["node3"].drained_by_lazarus, "lemon node3")
        await env.sleep(timedelta(minutes=12))  # two reconciliations
        ledger.fake.nodes["node2"] = NodeState(name="node2", state="IDLE")  # an administrator's scontrol resume
        if hasattr(NodeLedgerWorkflow, "set_policy"):  # older revisions take no policy while running
            from lazarus.models.ledger import PolicyChange

            await ledger.handle.signal(
                NodeLedgerWorkflow.set_policy, PolicyChange(policy=LedgerPolicy(lemon_job_count=2), by="config")
            )
        await ledger.handle.signal(
            NodeLedgerWorkflow.set_cluster_mode, ModeChange(mode=Mode.MONITOR, scope="cluster", operator="ops")
        )
        await env.sleep(timedelta(minutes=6))
        await ledger.handle.query(NodeLedgerWorkflow.view)
    return [ledger.handle]


@scenario(
    "time-skipping",
    "authorization.operators reach a running ledger with the workers' policy; a kill switch from a caller not "
    "permitted is recorded, a permitted operator's drain, resume and kill switch are applied",
)
async def node_ledger_only_operators(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    from lazarus.models.ledger import DrainRequest, PolicyChange

    async with Ledger(env) as ledger:
        await ledger.handle.signal(
            NodeLedgerWorkflow.set_policy, PolicyChange(policy=LedgerPolicy(), by="config", operators=["alice"])
        )
        mallory = as_caller(env.client, "mallory").get_workflow_handle(ledger.id)
        await mallory.signal(NodeLedgerWorkflow.set_cluster_mode, ModeChange(mode=Mode.ACT, scope="cluster"))
        with contextlib.suppress(WorkflowUpdateFailedError):  # refused by the validator: leaves no history
            await mallory.execute_update(NodeLedgerWorkflow.resume_node, ResumeRequest(node="node6", operator="x"))
        alice = as_caller(env.client, "alice").get_workflow_handle(ledger.id)
        await alice.execute_update(
            NodeLedgerWorkflow.drain_node, DrainRequest(node="node6", operator="a", reason="fan")
        )
        await alice.execute_update(NodeLedgerWorkflow.resume_node, ResumeRequest(node="node6", operator="a"))
        await alice.signal(NodeLedgerWorkflow.set_cluster_mode, ModeChange(mode=Mode.MONITOR, scope="cluster"))
        await wait_for(env, lambda: _mode_set(ledger), "the kill switch applied")
    return [ledger.handle]


async def _mode_set(ledger: Ledger) -> bool:
    return (await ledger.handle.query(NodeLedgerWorkflow.view)).mode_override is not None


# ---- continue-as-new (dev server: suggested after 20 events) -------------------------------------------


@scenario(
    "dev",
    "a long job workflow continues as new carrying its record; both runs are kept",
    keeps=("job_continue_as_new", "job_continued_run"),
)
async def job_continue_as_new(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Running(env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), progress(0, 10, T0, checkpoint=10), xid79_on("node2"), ended(0))
        await send(run.handle, started(1, ("node1", "node3")))
        for step in range(11, 40):
            await send(run.handle, progress(1, step, T0 + timedelta(seconds=step), checkpoint=step))
        await send(run.handle, ended(1, JobState.COMPLETED, 0))
        await run.handle.result()
    first, second, *_ = await runs_of(env.client, run.handle)
    return [first, second]


@scenario(
    "dev",
    "the node ledger continues as new carrying its records; both runs are kept",
    keeps=("node_ledger_continue_as_new", "node_ledger_continued_run"),
)
async def node_ledger_continue_as_new(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    async with Ledger(env, lemon_job_count=3) as ledger:
        for job in range(1, 16):
            await ledger.implicate(f"node{job % 8 + 1}", job, drain=False)
            await asyncio.sleep(0.05)

        async def continued() -> bool:
            return len(await runs_of(env.client, ledger.handle)) > 1

        await wait_for(env, continued, "continued as new")
        first, second, *_ = await runs_of(env.client, ledger.handle)
        await second.query(NodeLedgerWorkflow.view)
    return [first, second]


@scenario(
    "time-skipping",
    "the node ledger drains only with corroboration: one user's word waits; a second user's job corroborates "
    "it; a node agent's later verdict drains another node when the ledger looks again (the early re-check)",
)
async def node_ledger_corroborates(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    fake = NodesWithAgents()
    async with running_ledger(env, fake, reconcile_interval=timedelta(minutes=5)) as handle:
        now = await env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 7, user="alice", at=now))
        await settle(env, handle, lambda v: bool(v.nodes) and v.nodes[0].waiting)
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 8, drain=False, user="bob", at=now))
        await settle(env, handle, lambda v: v.nodes[0].drained)
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node3", 9, user="carol", at=now))
        await settle(env, handle, lambda v: len(v.nodes) == 2 and v.nodes[1].waiting)
        fake.failed.add("node3")
        await env.sleep(timedelta(minutes=6))
        await settle(env, handle, lambda v: v.nodes[1].drained)
        return [handle]


@scenario(
    "time-skipping",
    "a spare pool: a member a job implicates waits while no healthy node is free (recorded, notified, looked "
    "at again on the pool's timer), then is replaced by a node of the general pool once one is idle",
)
async def node_ledger_spare_pools(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    from lazarus.models.spares import SparePool  # not in every recorded revision: imported where needed

    fake = NodesWithAgents(count=4)
    fake.reservations = {"big-run": ["node1", "node2", "node3"]}
    fake.admin("node4", "ALLOCATED")
    pool = SparePool(reservation="big-run", count=1, retry_interval=timedelta(seconds=30))
    async with running_ledger(env, fake, spare_pools=(pool,)) as handle:
        now = await env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node1", 7, at=now))
        await settle(env, handle, lambda v: bool(v.spares) and v.spares[0].short == ["node1"])
        await env.sleep(timedelta(seconds=40))
        fake.nodes["node4"] = NodeState(name="node4", state="IDLE")
        await settle(env, handle, lambda v: v.spares[0].refills == 1)
        return [handle]


# ---- telemetry lease --------------------------------------------------------------------------------


@scenario(
    "time-skipping",
    "the telemetry lease: a holds it and saves offsets; b is refused, then takes over when a's term expires "
    "and releases it; a takes it again and renews until the workflow continues as new",
)
async def telemetry_lease(env: WorkflowEnvironment) -> list[WorkflowHandle]:
    ttl = timedelta(seconds=15)
    async with Worker(env.client, task_queue="lease", workflows=[TelemetryLeaseWorkflow]):
        handle = await env.client.start_workflow(
            TelemetryLeaseWorkflow.run,
            LeaseState(cluster="t", history_limit=80),
            id=names.telemetry_lease_id("t"),
            task_queue="lease",
        )
        a = await handle.execute_update(names.ACQUIRE_LEASE, LeaseRequest(holder="a", ttl=ttl), result_type=LeaseGrant)
        for step in range(8):
            await env.sleep(5)
            offsets = {"/logs/1.out": LogOffset(inode=1, offset=100 * step)}
            await handle.execute_update(
                names.RENEW_LEASE, LeaseRequest(holder="a", ttl=ttl, epoch=a.epoch, offsets=offsets)
            )
            with contextlib.suppress(WorkflowUpdateFailedError):
                await handle.execute_update(names.ACQUIRE_LEASE, LeaseRequest(holder="b", ttl=ttl))
        await env.sleep(16)
        b = await handle.execute_update(names.ACQUIRE_LEASE, LeaseRequest(holder="b", ttl=ttl), result_type=LeaseGrant)
        await handle.execute_update(names.RELEASE_LEASE, LeaseRequest(holder="b", ttl=ttl, epoch=b.epoch))
        a = await handle.execute_update(names.ACQUIRE_LEASE, LeaseRequest(holder="a", ttl=ttl), result_type=LeaseGrant)
        first = handle.result_run_id
        while (await handle.describe()).run_id == first:  # renew until it continues as new
            await env.sleep(5)
            await handle.execute_update(names.RENEW_LEASE, LeaseRequest(holder="a", ttl=ttl, epoch=a.epoch))
        await handle.terminate(reason="recorded")
    return [env.client.get_workflow_handle(handle.id, run_id=first)]
