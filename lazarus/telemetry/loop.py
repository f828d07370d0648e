"""The telemetry loop: one scheduler query per cycle for the whole cluster.

Each cycle: ``squeue --json`` once → for every opted-in job, make sure its
workflow exists (idempotent start, ``lazarus-<cluster>-<jobid>``), turn state
changes into events, tail its output files from the last offset, and signal
the workflow only when something changed (attempt started/ended, anomaly,
checkpoint, coarse progress). Never one signal per training step.

The loop keeps no state that matters for correctness: workflows deduplicate
events, and log offsets are kept by :mod:`lazarus.telemetry.offsets` so that a
restarted loop does not charge an earlier attempt's failure lines to the
current one.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path

from loguru import logger
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from lazarus.config import Settings
from lazarus.errors import JobCommentError, LazarusError
from lazarus.models.diagnosis import FailureKind
from lazarus.models.ledger import LedgerInput, PolicyChange
from lazarus.models.policy import Mode
from lazarus.models.recovery import (
    Anomaly,
    AnomalyDetected,
    JobEventEnvelope,
    JobMemo,
    JobRecoveryInput,
)
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.slurm.client import SlurmClient
from lazarus.telemetry.enrich import Enricher
from lazarus.telemetry.offsets import OffsetStore
from lazarus.telemetry.optin import mentions_lazarus, parse_opt_in, requested_policy
from lazarus.telemetry.tracker import JobTracker
from workflows.job_recovery import JobRecoveryWorkflow, workflow_id
from workflows.node_ledger import NodeLedgerWorkflow, ledger_id


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class TelemetryLoop:
    def __init__(self, settings: Settings, slurm: SlurmClient, client: Client, state_file: Path | None = None) -> None:
        self.settings, self.slurm, self.client = settings, slurm, client
        self.trackers: dict[int, JobTracker] = {}
        self.offsets = OffsetStore(state_file)
        self._ledger_started = False
        self._prefix = settings.discovery.job_name_prefix or ""
        self.enricher = Enricher(settings)
        self._next_straggler_check: datetime | None = None

    # ---- the cycle ----------------------------------------------------------------------------

    async def run_forever(self, stop: asyncio.Event | None = None) -> None:
        interval = self.settings.discovery.interval.total_seconds()
        logger.info(f"telemetry loop for cluster {self.settings.cluster}: one scheduler query every {interval:g} s")
        while not (stop and stop.is_set()):
            started = asyncio.get_running_loop().time()
            try:
                await self.cycle()
            except LazarusError as exc:  # e.g. slurmctld unreachable: say so, keep going
                logger.warning(f"telemetry cycle failed: {exc}")
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the process edge: one bad cycle must not end detection
                logger.exception("telemetry cycle failed unexpectedly; continuing with the next cycle")
            elapsed = asyncio.get_running_loop().time() - started
            await asyncio.sleep(max(0.05, interval - elapsed))

    async def ensure_ledger(self) -> str:
        """Start the cluster's node ledger if it is not running (idempotent), and send it the configured
        ledger policy, so a configuration change reaches a ledger that is already running."""
        wid = ledger_id(self.settings.cluster)
        if not self._ledger_started:
            await self.client.start_workflow(
                NodeLedgerWorkflow.run,
                LedgerInput(cluster=self.settings.cluster, policy=self.settings.ledger,
                            scheduler_queue=self.settings.task_queues.scheduler),
                id=wid, task_queue=self.settings.task_queues.control,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                static_summary=f"node ledger of cluster {self.settings.cluster}",
                start_signal="set_policy",
                start_signal_args=[PolicyChange(policy=self.settings.ledger, by="configuration at worker start")],
            )
            self._ledger_started = True
        return wid

    async def _cluster_mode(self, ledger: str) -> Mode | None:
        """The operator's cluster-wide mode from the ledger (kill switch), if one is set."""
        try:
            view = await self.client.get_workflow_handle(ledger).query(NodeLedgerWorkflow.view)
        except RPCError as exc:
            logger.warning(f"cannot read the cluster mode from {ledger} ({exc.message}); using {self.settings.mode}")
            self._ledger_started = False  # start it again next cycle if it is gone
            return None
        return Mode(view.mode_override) if view.mode_override else None

    async def cycle(self) -> None:
        try:
            ledger = await self.ensure_ledger()
            jobs = await self.slurm.jobs()
            now = utcnow()
            self._forget_gone({j.job_id for j in jobs})
            for job in jobs:
                if mentions_lazarus(job.comment) and job.name.startswith(self._prefix):
                    await self._one_job(job, ledger, now)
            await self._check_stragglers(now, {j.job_id: j for j in jobs})
        finally:
            self.offsets.save()

    async def _one_job(self, job: JobSnapshot, ledger: str, now: datetime) -> None:
        """One job's share of the cycle; its trouble never holds up the other jobs."""
        try:
            tracker = self.trackers.get(job.job_id) or await self._discover(job, ledger)
            if tracker is not None and not tracker.closed:
                await self._update(tracker, job, now)
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND and job.job_id in self.trackers:
                # its workflow has closed (stopped, failed, or terminated by an operator): nothing to tell it
                self.trackers[job.job_id].closed = True
                logger.info(f"job {job.job_id}: its workflow has closed; no longer watching it")
            else:
                logger.warning(f"job {job.job_id}: Temporal call failed ({exc.message}); retrying next cycle")
        except LazarusError as exc:
            logger.warning(f"job {job.job_id}: {exc}; retrying next cycle")

    async def _discover(self, job: JobSnapshot, ledger: str) -> JobTracker | None:
        """Start (or attach to) the job's workflow; the tracker exists only once that worked."""
        tracker = JobTracker(job_id=job.job_id, layout_nodes=job.nodes, tasks_per_node=job.tasks_per_node)
        inp = JobRecoveryInput(
            cluster=self.settings.cluster, job_id=job.job_id, user=job.user, partition=job.partition,
            job_name=job.name, cluster_mode=self.settings.mode, scheduler_queue=self.settings.task_queues.scheduler,
            telemetry_queue=self.settings.task_queues.telemetry, ledger_workflow_id=ledger,
        )
        override = await self._cluster_mode(ledger)
        inp.cluster_mode = override or self.settings.mode
        try:
            opt_in = parse_opt_in(job.comment, self.settings.policies, inp.cluster_mode)
            # the kill switch (cluster-wide monitor) wins over a policy's or a job's mode; act does not
            # override a job's own request for monitor mode
            inp.policy_name, inp.policy, inp.opt_in_notes = opt_in.policy_name, opt_in.policy, list(opt_in.notes)
            inp.job_mode = None if override == Mode.MONITOR else opt_in.policy.mode
            tracker.policy = opt_in.policy
        except JobCommentError as exc:
            logger.warning(f"job {job.job_id}: {exc}; Lazarus leaves it alone")
            inp.opt_in_error = str(exc)
            inp.policy_name = requested_policy(job.comment) or "?"  # as asked for, though unknown or unusable
            tracker.closed = True
        try:
            await self.client.start_workflow(
                JobRecoveryWorkflow.run, inp, id=workflow_id(self.settings.cluster, job.job_id),
                task_queue=self.settings.task_queues.control,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                static_summary=f"Slurm job {job.job_id} ({job.name}) of {job.user}",
                memo=JobMemo(policy=inp.policy_name, ignored_reason=inp.opt_in_error).as_memo(),
            )
            if inp.opt_in_error is None:
                logger.info(f"watching job {job.job_id} ({job.name}) with policy {inp.policy_name}")
        except WorkflowAlreadyStartedError:
            tracker.closed = True  # its workflow already finished: nothing more to watch
        self.trackers[job.job_id] = tracker
        return tracker

    async def _update(self, tracker: JobTracker, job: JobSnapshot, now: datetime) -> None:
        if tracker.attempt is not None and job.restarts > tracker.attempt.index:
            # attempt boundary: the old attempt's last lines belong to its analyzer, not the new one's
            self._tail(tracker, now)
        events = tracker.observe(job, now)
        if not tracker.log_paths and (events or job.state == JobState.RUNNING):
            # asked again every cycle until known: without its logs a running job would look hung
            tracker.log_paths = await self._log_paths(job)
            if tracker.log_paths and job.restarts > 0:
                self._skip_earlier_attempts(tracker)
        self._tail(tracker, now)
        events += tracker.anomaly_events(now)
        events += tracker.digest_events(now, tracker.digest_interval())
        if job.state.finished:
            failed = await self._failed_nodes(job) if job.state.failed and not tracker.attempt.ended_reported else []
            events += tracker.finish(job, now, failed)
        if events:
            await self._signal(job.job_id, [await self._enrich(e, tracker) for e in events])

    async def _enrich(self, event, tracker: JobTracker):
        """Node health and the external provider refine a log diagnosis before it reaches the workflow."""
        if not isinstance(event, AnomalyDetected):
            return event
        a = event.anomaly
        diagnosis = await self.enricher.attribute(a.diagnosis, tracker.job_id, a.attempt, tracker.layout_nodes)
        # whatever named them (the job's output, node health, a provider), only the allocation's nodes count
        diagnosis = diagnosis.bound_to_allocation(tracker.layout_nodes)
        return AnomalyDetected(anomaly=a.model_copy(update={"diagnosis": diagnosis}))

    async def _check_stragglers(self, now: datetime, snapshot: dict[int, JobSnapshot]) -> None:
        """One Prometheus query per interval for all running watched jobs; a finding is reported once per attempt.
        A job's metrics count only inside the allocation this cycle's scheduler snapshot shows for it."""
        if self.enricher.prom is None or (self._next_straggler_check and now < self._next_straggler_check):
            return
        self._next_straggler_check = now + self.settings.prometheus.straggler_interval
        running = {t.job_id: t for t in self.trackers.values()
                   if not t.closed and t.attempt and t.attempt.started_reported and not t.attempt.ended_reported
                   and t.job_id in snapshot}
        jobs = {job_id: snapshot[job_id] for job_id in running}
        for finding in await self.enricher.stragglers(jobs):
            tracker = running.get(int(finding.job_id))
            if tracker is None or finding.node in tracker.attempt.stragglers_reported:
                continue
            tracker.attempt.stragglers_reported.add(finding.node)
            diagnosis = finding.to_diagnosis().bound_to_allocation(jobs[tracker.job_id].nodes, "the job's metrics")
            anomaly = Anomaly(attempt=tracker.attempt.index, kind=FailureKind.STRAGGLER,
                              diagnosis=diagnosis, source="straggler", observed_at=now)
            await self._signal(tracker.job_id, [AnomalyDetected(anomaly=anomaly)])

    async def _log_paths(self, job: JobSnapshot) -> list[str]:
        try:
            full = await self.slurm.job(job.job_id)
        except LazarusError as exc:
            logger.warning(f"job {job.job_id}: cannot read its output paths: {exc}")
            return []
        return sorted({p for p in (full.stdout_path, full.stderr_path) if p})

    def _forget_gone(self, present: set[int]) -> None:
        """Jobs Slurm no longer lists (past MinJobAge) need no tracker and no offsets."""
        for job_id in [j for j in self.trackers if j not in present]:
            self.offsets.forget(self.trackers.pop(job_id).log_paths)

    def _skip_earlier_attempts(self, tracker: JobTracker) -> None:
        """First sight of a requeued job with no saved offsets (a new or restarted telemetry worker):
        earlier attempts' failure lines must not be charged to this attempt. A failure before this
        point still shows in the scheduler's view when the attempt ends."""
        self.offsets.skip_to_end(tracker.log_paths, f"job {tracker.job_id} first seen at attempt "
                                                    f"{tracker.attempt.index}")

    def _tail(self, tracker: JobTracker, now: datetime) -> None:
        for path in tracker.log_paths:
            lines, notes = self.offsets.read(path, self.settings.discovery.log_tail_max_bytes)
            for note in notes:
                logger.debug(f"job {tracker.job_id}: {note}")
            for line_no, text in lines:
                tracker.feed(path, line_no, text, now)

    async def _failed_nodes(self, job: JobSnapshot) -> list[str]:
        """The job's nodes that the scheduler itself shows unhealthy (attribution from scheduler state)."""
        try:
            nodes = await self.slurm.nodes()
        except LazarusError:
            return []
        # DOWN / not responding, or drained with a reason (Slurm drains on "Kill task failed", health checks)
        return [n.name for n in nodes if n.name in job.nodes
                and (n.down or "NOT_RESPONDING" in n.state.upper() or (n.drained and n.reason))]

    async def _signal(self, job_id: int, events: list) -> None:
        handle = self.client.get_workflow_handle(workflow_id(self.settings.cluster, job_id))
        for event in events:
            await handle.signal(JobRecoveryWorkflow.job_event, JobEventEnvelope(event=event))
