"""Shared helpers for the workflow tests: a worker whose scheduler, notify and telemetry
activities are in-memory doubles recording every call.

The doubles stand in for Slurm only in the time-skipping tests, which check
timer and policy logic; the end-to-end tests in tests/e2e use the real cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from temporalio import activity
from temporalio.client import Client, WorkflowHandle
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError
from temporalio.worker import Worker

from lazarus.models import names
from lazarus.models.diagnosis import Category, Diagnosis, Evidence, FailureKind, RetryAdvice
from lazarus.models.ledger import ClusterMode
from lazarus.models.policy import Mode, Policy
from lazarus.models.recovery import (
    Anomaly,
    AnomalyDetected,
    AttemptEnded,
    AttemptStarted,
    JobEventEnvelope,
    JobRecoveryInput,
    ProgressDigest,
    ProgressQuery,
    ProgressView,
)
from lazarus.models.slurm import (
    JobActionResult,
    JobState,
    NodeAction,
    NodeActionResult,
    ReleaseRequest,
    RestartRequest,
    RestartResult,
)
from tests.workflows.notify_double import notify_activities
from workflows.job_recovery import JobRecoveryWorkflow

if TYPE_CHECKING:
    from lazarus.models.notify import Notice
try:
    from lazarus.models.slurm import CancelRequest, CancelResult
except ImportError:  # scripts/record_histories.py --rev: an older revision's code, before the stop's cancel
    CANCELS = False
else:
    CANCELS = True
try:
    from lazarus.models.slurm import ExpediteResult, LiftRequest, LiftResult
except ImportError:  # scripts/record_histories.py --rev: an older revision's code, before the expedite
    EXPEDITES = False
else:
    EXPEDITES = True

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@dataclass
class FakeScheduler:
    restarts: list[RestartRequest] = field(default_factory=list)
    drains: list[NodeAction] = field(default_factory=list)
    releases: list[int] = field(default_factory=list)
    guarded_releases: list[ReleaseRequest] = field(default_factory=list)
    progress: ProgressView = field(default_factory=lambda: ProgressView(known=True))
    refuse_restart: bool = False
    refuse_drain: bool = False
    telemetry_failures: int = 0  # the next calls of the progress activity that fail (no telemetry to ask)
    restart_result: RestartResult | None = None  # what the restart reports, when not the usual verified requeue
    cluster_mode: Mode | None = None  # the ledger's cluster-wide mode, read before acting
    mode_unreadable: bool = False
    mode_reads: int = 0
    notices: list[Notice] = field(default_factory=list)  # what the notify double was given
    cancels: list[CancelRequest] = field(default_factory=list)
    cancel_result: CancelResult | None = None  # what the stop's cancel reports, when not a verified cancel
    lifts: list[LiftRequest] = field(default_factory=list)

    def activities(self) -> list:
        @activity.defn(name="slurm_restart_excluding")
        async def restart(req: RestartRequest) -> RestartResult:
            self.restarts.append(req)
            if self.refuse_restart:
                raise ApplicationError(
                    "Requested operation is presently disabled", type="OperationRefused", non_retryable=True
                )
            if self.restart_result is not None:
                return self.restart_result
            result = RestartResult(
                job_id=req.job_id,
                new_attempt=req.expected_attempt + 1,
                excluded_nodes=req.exclude_nodes,
                state=JobState.PENDING,
                exclusions_applied=True,
            )
            if getattr(req, "expedite", False):  # put ahead of two waiting jobs, at priority 500 (was 100)
                result.expedite = ExpediteResult(
                    job_id=req.job_id,
                    attempt=result.new_attempt,
                    done=True,
                    priority_before=100,
                    priority_after=500,
                    ahead_of=[11, 12],
                )
            return result

        @activity.defn(name="slurm_drain_nodes")
        async def drain(req: NodeAction) -> NodeActionResult:
            self.drains.append(req)  # only runs from before drains went only through the ledger drain directly
            return NodeActionResult(changed=req.nodes)

        @activity.defn(name="slurm_release_job")
        async def release(job_id: int) -> JobActionResult:
            self.releases.append(job_id)
            return JobActionResult(job_id=job_id, changed=False, state=JobState.PENDING)

        @activity.defn(name="slurm_release_lazarus_hold")
        async def release_guarded(req: ReleaseRequest) -> JobActionResult:
            self.releases.append(req.job_id)
            self.guarded_releases.append(req)
            return JobActionResult(job_id=req.job_id, changed=False, state=JobState.PENDING)

        @activity.defn(name="ledger_cluster_mode")
        async def mode(ledger_workflow_id: str) -> ClusterMode:
            self.mode_reads += 1
            if self.mode_unreadable:
                raise ApplicationError(
                    f"cannot read the cluster-wide mode from {ledger_workflow_id}",
                    type="ClusterModeUnreadable",
                    non_retryable=True,
                )
            return ClusterMode(mode=self.cluster_mode)

        @activity.defn(name="telemetry_job_progress")
        async def progress(q: ProgressQuery) -> ProgressView:
            if self.telemetry_failures > 0:
                self.telemetry_failures -= 1
                raise ApplicationError("telemetry worker unreachable", non_retryable=True)
            return self.progress

        scheduler = [
            restart,
            drain,
            release,
            release_guarded,
            *([self._cancel()] if CANCELS else []),
            *([self._lift()] if EXPEDITES else []),
            mode,
        ]
        return [*scheduler, *notify_activities(self.notices), progress]  # the scheduler's, then telemetry's

    def _lift(self):
        """The expedite's lift: the priority set back, as asked."""

        @activity.defn(name="slurm_lift_expedite")
        async def lift(req: LiftRequest) -> LiftResult:
            self.lifts.append(req)
            return LiftResult(job_id=req.job_id, changed=True, priority=req.restore)

        return lift

    def _cancel(self):
        """The stop's cancel: a verified cancel of the attempt asked for, unless ``cancel_result`` says otherwise."""

        @activity.defn(name="slurm_cancel_attempt")
        async def cancel(req: CancelRequest) -> CancelResult:
            self.cancels.append(req)
            if self.cancel_result is not None:
                return self.cancel_result
            return CancelResult(
                job_id=req.job_id, attempt=req.expected_attempt, state=JobState.CANCELLED, cancelled=True
            )

        return cancel


def xid79_on(node: str, attempt: int = 0) -> AnomalyDetected:
    diag = Diagnosis(
        failure_kind=FailureKind.CRASH,
        category=Category.HARDWARE,
        signature="nvrm_xid_79",
        retry_advice=RetryAdvice.RETRY_EXCLUDING_NODES,
        implicated_nodes=[node],
        confidence=0.95,
        evidence=[
            Evidence(
                file="train.out",
                line_no=42,
                text="NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus",
                rule="nvrm_xid_79",
            )
        ],
    )
    return AnomalyDetected(anomaly=Anomaly(attempt=attempt, kind=FailureKind.CRASH, diagnosis=diag, observed_at=T0))


def app_error(attempt: int = 0) -> AnomalyDetected:
    diag = Diagnosis(
        failure_kind=FailureKind.CRASH,
        category=Category.APPLICATION,
        signature="python_key_error",
        retry_advice=RetryAdvice.STOP,
        confidence=0.9,
    )
    return AnomalyDetected(anomaly=Anomaly(attempt=attempt, kind=FailureKind.CRASH, diagnosis=diag, observed_at=T0))


def started(attempt: int, nodes=("node1", "node2"), excluded=()) -> AttemptStarted:
    return AttemptStarted(attempt=attempt, nodes=list(nodes), excluded_nodes=list(excluded), at=T0)


def progress(attempt: int, step: int, at: datetime, checkpoint: int | None = None) -> ProgressDigest:
    return ProgressDigest(attempt=attempt, step=step, last_progress_at=at, checkpoint=checkpoint)


def ended(attempt: int, state: JobState = JobState.FAILED, exit_code: int = 1) -> AttemptEnded:
    return AttemptEnded(attempt=attempt, state=state, exit_code=exit_code, at=T0)


def workflow_interceptors() -> list:
    """The workers' inbound interceptors: the caller of each message (none under a revision older than the
    caller header, which ``scripts/record_histories.py --rev`` imports)."""
    try:
        from workflows.callers import CallerInterceptor
    except ImportError:
        return []
    return [CallerInterceptor()]


def as_caller(client: Client, name: str) -> Client:
    """A client of the same server that sends ``name`` as its caller identity, as the lazarus CLI does."""
    from lazarus.identity import CallerHeaders
    from lazarus.models.callers import Caller

    return Client(
        client.service_client,
        namespace=client.namespace,
        data_converter=pydantic_data_converter,
        interceptors=[CallerHeaders(Caller(name=name))],
    )


async def send(handle: WorkflowHandle, *events) -> None:
    """Signal each event as telemetry does, by the signal named for it; to older workflow code without those
    handlers (``scripts/record_histories.py --rev``), in the generic ``job_event`` envelope."""
    signals = getattr(names, "EVENT_SIGNALS", {})  # older code has none
    for event in events:
        handler = getattr(JobRecoveryWorkflow, signals.get(event.type, ""), None)  # handlers are named like signals
        if handler is None:
            await handle.signal(JobRecoveryWorkflow.job_event, JobEventEnvelope(event=event))
        else:
            await handle.signal(handler, event)


def job_input(mode: Mode = Mode.ACT, operators: tuple[str, ...] = (), **policy) -> JobRecoveryInput:
    return JobRecoveryInput(
        **({"operators": list(operators)} if operators else {}),  # older revisions (--rev) have no list
        cluster="test",
        job_id=1000 + uuid.uuid4().int % 100000,
        user="alice",
        partition="debug",
        cluster_mode=mode,
        policy=Policy(**policy),
        scheduler_queue="sched-" + uuid.uuid4().hex[:6],
        telemetry_queue="telem-" + uuid.uuid4().hex[:6],
    )


class Running:
    """A started workflow plus the workers serving it; use as an async context manager."""

    def __init__(
        self, client: Client, inp: JobRecoveryInput, fake: FakeScheduler | None = None, workflow_id: str | None = None
    ) -> None:
        self.client, self.inp, self.fake = client, inp, fake or FakeScheduler()
        self.task_queue = "control-" + uuid.uuid4().hex[:6]
        self.workflow_id = workflow_id or f"lazarus-test-{inp.job_id}-{uuid.uuid4().hex[:4]}"

    async def __aenter__(self) -> Running:
        acts = self.fake.activities()
        self._workers = [
            Worker(
                self.client,
                task_queue=self.task_queue,
                workflows=[JobRecoveryWorkflow],
                interceptors=workflow_interceptors(),
            ),
            Worker(self.client, task_queue=self.inp.scheduler_queue, activities=acts[:-1]),
            Worker(self.client, task_queue=self.inp.telemetry_queue, activities=acts[-1:]),
        ]
        for w in self._workers:
            await w.__aenter__()
        self.handle = await self.client.start_workflow(
            JobRecoveryWorkflow.run, self.inp, id=self.workflow_id, task_queue=self.task_queue
        )
        terminate = self.handle.terminate

        async def terminate_once_notices_settled(*args: Any, **kwargs: Any) -> None:
            await self.notices_settled()
            await terminate(*args, **kwargs)

        self.handle.terminate = terminate_once_notices_settled  # type: ignore[method-assign]
        return self

    async def notices_settled(self) -> None:
        """Wait until every notice the workflow started has been posted (the double answers at once) and the
        workflow has taken the answer in. The time-skipping server never releases its clock for an activity or
        a workflow task of a workflow terminated in the middle of one, so a test must not terminate then."""
        for _ in range(200):
            notices, closed, tasks, done = set(), set(), set(), set()
            async for event in self.handle.fetch_history_events():
                scheduled = event.activity_task_scheduled_event_attributes
                if (
                    event.HasField("activity_task_scheduled_event_attributes")
                    and scheduled.activity_type.name == "notify"
                ):
                    notices.add(event.event_id)
                if event.HasField("workflow_task_scheduled_event_attributes"):
                    tasks.add(event.event_id)
                for kind in ("activity_task_completed", "activity_task_failed", "activity_task_timed_out"):
                    if event.HasField(f"{kind}_event_attributes"):
                        closed.add(getattr(event, f"{kind}_event_attributes").scheduled_event_id)
                for kind in ("workflow_task_completed", "workflow_task_failed", "workflow_task_timed_out"):
                    if event.HasField(f"{kind}_event_attributes"):
                        done.add(getattr(event, f"{kind}_event_attributes").scheduled_event_id)
            if notices <= closed and tasks <= done:
                return
            await asyncio.sleep(0.02)

    async def __aexit__(self, *exc) -> None:
        """End the workflow if the test left it running, then stop the workers: a task of a workflow nobody
        serves (a timer firing, a notice still being posted) would otherwise hold the time-skipping server's
        clock for the rest of the session."""
        with contextlib.suppress(RPCError):  # already closed: nothing to end
            await self.handle.terminate("test done")
        for w in reversed(self._workers):
            await w.__aexit__(*exc)
