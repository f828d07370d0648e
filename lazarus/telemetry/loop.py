"""The telemetry loop: one scheduler query per cycle for the whole cluster.

Each cycle: ``squeue --json`` once → for every opted-in job, make sure its
workflow exists (idempotent start, ``lazarus-<cluster>-<jobid>``), turn state
changes into events, tail its output files from the last offset, and signal
the workflow only when something changed (attempt started/ended, anomaly,
checkpoint, coarse progress). Never one signal per training step. When an
attempt ends, its logs are first read to their end (bounded), so that its end
is reported with the last step, checkpoint and failure lines it printed.

The loop keeps no state that matters for correctness: workflows deduplicate
events, and the log offsets it has delivered are saved in the cluster's
telemetry lease (``term``, see :mod:`lazarus.telemetry.leader`) so that the
replica that takes over reads on from there: it neither loses an event nor
charges an earlier attempt's failure lines to the current one. Only the lease
holder runs the loop; it signals no workflow once its term is over.

Events are delivered at least once (:mod:`lazarus.telemetry.outbox`): each
waits in its job's outbox until its signal succeeded. Telemetry knows when it
last *saw* each job and says when it is blind to one (the scheduler slow or
unreachable, a log unreadable), so the hang watchdog never takes missing data
for a hang; while ``squeue`` is slow or failing the known jobs' logs are still
read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from loguru import logger
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from lazarus import metrics
from lazarus.config import Settings
from lazarus.detection.safe_open import LogAccess
from lazarus.detection.tail import FileTail
from lazarus.errors import JobCommentError, LazarusError
from lazarus.ledger_mode import UNREADABLE, read_cluster_mode
from lazarus.models import names
from lazarus.models.diagnosis import FailureKind
from lazarus.models.ledger import LedgerInput, PolicyChange
from lazarus.models.policy import Mode
from lazarus.models.recovery import (
    Anomaly,
    AnomalyDetected,
    JobEvent,
    JobMemo,
    JobRecoveryInput,
    ProgressQuery,
    ProgressView,
    TelemetryNote,
    event_signal,
)
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.slurm.client import SlurmClient
from lazarus.telemetry.enrich import Enricher
from lazarus.telemetry.liveness import AgentSightings, lost_nodes, node_failure, probe
from lazarus.telemetry.logreads import BoundedReads, LogReadStalledError
from lazarus.telemetry.metadata import job_details, job_summary
from lazarus.telemetry.offsets import LogRead, OffsetStore, end_tails, read_if_grown, read_log
from lazarus.telemetry.optin import mentions_lazarus, parse_opt_in, requested_policy
from lazarus.telemetry.tracker import JobTracker

# How long discovery waits for the ledger's answer about the cluster-wide mode before acting as monitor.
LEDGER_QUERY_TIMEOUT = timedelta(seconds=5)
# Jobs handled at once within a cycle: a thousand new jobs (first start, a lease failover) cost a few rounds of
# Temporal calls, not a thousand one after the other, during which every job would go unseen.
JOBS_AT_ONCE = 32
# An ending attempt's logs are read to their end before its end is reported (its last progress, checkpoint
# and failure lines), in at most this many reads of ``discovery.log_tail_max_bytes`` each (64 MiB by default).
FINAL_READS = 16

if TYPE_CHECKING:
    from lazarus.telemetry.leader import LeaderTerm

# What one read of one file gave (None: the file had not grown), and the position it was read from.
EarlyRead = tuple[FileTail, tuple[LogRead, FileTail | None] | None]


def utcnow() -> datetime:
    return datetime.now(UTC)


class TelemetryLoop:
    def __init__(self, settings: Settings, slurm: SlurmClient, client: Client, term: LeaderTerm | None = None) -> None:
        self.settings, self.slurm, self.client = settings, slurm, client
        self.trackers: dict[int, JobTracker] = {}
        self.term = term  # this replica's term of the telemetry lease (None: no lease, e.g. in tests)
        self.offsets = OffsetStore(term.granted if term else None)
        self.reads = BoundedReads(settings.discovery.log_read_timeout_s)
        self._ledger_started = False
        self._prefix = settings.discovery.job_name_prefix or ""
        self.enricher = Enricher(settings)
        self._next_straggler_check: datetime | None = None
        self._next_liveness_check: datetime | None = None
        self.sightings = AgentSightings()
        self.blind_after: timedelta = settings.discovery.blind_after
        self._scheduler_seen_at: datetime | None = None  # the last squeue that answered
        self._delivery_paused = False  # a signal failed this cycle: the rest wait for the next one
        self._mode_read: asyncio.Future[Mode | None] | None = None  # this cycle's read of the cluster mode
        self._early: dict[str, EarlyRead] = {}  # this cycle's reads of every known file, in one thread hop

    # ---- the cycle ----------------------------------------------------------------------------

    async def run_forever(self, stop: asyncio.Event | None = None) -> None:
        interval = self.settings.discovery.interval.total_seconds()
        logger.info(f"telemetry loop for cluster {self.settings.cluster}: one scheduler query every {interval:g} s")
        while not (stop and stop.is_set()):
            started = asyncio.get_running_loop().time()
            try:
                with metrics.TELEMETRY.cycle():
                    await self.cycle()
            except LazarusError as exc:  # e.g. slurmctld unreachable: say so, keep going
                logger.warning(f"telemetry cycle failed: {exc}")
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("telemetry cycle failed unexpectedly; continuing with the next cycle")
            elapsed = asyncio.get_running_loop().time() - started
            await asyncio.sleep(max(0.05, interval - elapsed))

    async def ensure_ledger(self) -> str:
        """Start the cluster's node ledger if it is not running (idempotent), and send it the configured
        ledger policy, so a configuration change reaches a ledger that is already running."""
        wid = names.ledger_id(self.settings.cluster)
        if not self._ledger_started:
            await self.client.start_workflow(
                names.LEDGER_WORKFLOW,
                LedgerInput(
                    cluster=self.settings.cluster,
                    policy=self.settings.ledger,
                    scheduler_queue=self.settings.task_queues.scheduler,
                    telemetry_queue=self.settings.task_queues.telemetry,
                    operators=self.settings.authorization.operators,
                    spare_pools=self.settings.spare_pools(),
                ),
                id=wid,
                task_queue=self.settings.task_queues.control,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                static_summary=f"node ledger of cluster {self.settings.cluster}",
                start_signal=names.SET_LEDGER_POLICY,
                start_signal_args=[
                    PolicyChange(
                        policy=self.settings.ledger,
                        by="configuration at worker start",
                        telemetry_queue=self.settings.task_queues.telemetry,
                        operators=self.settings.authorization.operators,
                        spare_pools=self.settings.spare_pools(),
                    )
                ],
            )
            self._ledger_started = True
        return wid

    async def _cycle_mode(self, ledger: str) -> Mode | None:
        """The cluster mode for the jobs this cycle discovers: read once per cycle, shared by all of them."""
        if self._mode_read is None:
            self._mode_read = asyncio.ensure_future(self._cluster_mode(ledger))
        return await asyncio.shield(self._mode_read)

    async def _cluster_mode(self, ledger: str) -> Mode | None:
        """The operator's cluster-wide mode from the ledger (kill switch), if one is set.

        Fails closed: when the ledger cannot be read, nobody can say the kill switch is off, so the job
        starts in monitor mode (its advice waits for a person).
        """
        try:
            read = await read_cluster_mode(self.client, ledger, LEDGER_QUERY_TIMEOUT)
        except UNREADABLE as exc:
            logger.warning(
                f"cannot read the cluster mode from {ledger} ({exc}); the kill switch may be thrown, "
                "so the job starts in monitor mode"
            )
            self._ledger_started = False  # start it again next cycle if it is gone
            return Mode.MONITOR
        return read.mode

    async def cycle(self) -> None:
        self._delivery_paused, self._mode_read, self._early = False, None, {}
        try:
            ledger = await self.ensure_ledger()
            jobs = await self._jobs_while_tailing()
            now = self._scheduler_seen_at = utcnow()
            self._forget_gone({j.job_id for j in jobs})
            watched = [j for j in jobs if mentions_lazarus(j.comment) and j.name.startswith(self._prefix)]
            self._early = await self._read_grown(watched)
            await self._each_job(watched, ledger, now)
            await self._deliver_waiting()
            await self._check_stragglers(now, {j.job_id: j for j in jobs})
            await self._check_liveness({j.job_id: j for j in jobs})
        finally:
            self._early = {}
            if self.term:
                self.term.cycle_ended(self.trackers, self.offsets)

    async def _each_job(self, jobs: list[JobSnapshot], ledger: str, now: datetime) -> None:
        """Every watched job's share of the cycle, :data:`JOBS_AT_ONCE` at a time (one job's own steps stay in
        order; jobs share nothing but the offsets, each file its own entry). :data:`JOBS_AT_ONCE` handlers take
        the jobs in turn: 10,000 jobs are not 10,000 tasks queued on one semaphore (whose wake-ups cost a scan
        of its waiters each)."""
        pending = iter(jobs)
        errors: list[Exception] = []

        async def handler() -> None:
            for job in pending:
                try:
                    await self._one_job(job, ledger, now)
                except Exception as exc:  # raised below, once every job's share has ended
                    errors.append(exc)

        await asyncio.gather(*(handler() for _ in range(min(JOBS_AT_ONCE, len(jobs)))))
        # every job's share has ended before an unexpected error ends the cycle (none runs on into the next)
        if errors:
            raise errors[0]

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
            cluster=self.settings.cluster,
            job_id=job.job_id,
            user=job.user,
            partition=job.partition,
            job_name=job.name,
            cluster_mode=self.settings.mode,
            scheduler_queue=self.settings.task_queues.scheduler,
            telemetry_queue=self.settings.task_queues.telemetry,
            ledger_workflow_id=ledger,
            operators=self.settings.authorization.operators,
        )
        override = await self._cycle_mode(ledger)
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
                names.JOB_WORKFLOW,
                inp,
                id=names.workflow_id(self.settings.cluster, job.job_id),
                task_queue=self.settings.task_queues.control,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                static_summary=job_summary(job),
                static_details=job_details(job, inp),
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
            await self._read_to_the_end(tracker, now)
        events = tracker.observe(job, now)
        if not tracker.log_paths and (events or job.state == JobState.RUNNING):
            # asked again every cycle until known: without its logs a running job would look hung
            tracker.log_paths = await self._log_paths(job, tracker)
            if tracker.log_paths and job.restarts > 0:
                await self._skip_earlier_attempts(tracker)
        assert tracker.attempt is not None  # observe() always leaves the tracker an attempt
        self._resume_hang_clock(tracker)
        ending = job.state.finished and not tracker.attempt.ended_reported
        unread = await (self._read_to_the_end(tracker, now) if ending else self._tail(tracker, now))
        self._sight(tracker, job, now, unread)
        events += tracker.anomaly_events(now)
        events += tracker.digest_events(now, tracker.digest_interval())
        if job.state.finished:
            assert tracker.attempt is not None  # observe() always leaves the tracker an attempt
            failed = await self._failed_nodes(job) if job.state.failed and not tracker.attempt.ended_reported else []
            events += tracker.finish(job, now, failed)
        if events:
            assert tracker.attempt is not None  # observe() always leaves the tracker an attempt
            tracker.outbox.put([await self._enrich(e, tracker) for e in events], tracker.attempt.index)
        await self._deliver(tracker)

    async def _enrich(self, event: JobEvent, tracker: JobTracker) -> JobEvent:
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
        running = {
            t.job_id: t
            for t in self.trackers.values()
            if not t.closed
            and t.attempt
            and t.attempt.started_reported
            and not t.attempt.ended_reported
            and t.job_id in snapshot
        }
        jobs = {job_id: snapshot[job_id] for job_id in running}
        for finding in await self.enricher.stragglers(jobs):
            tracker = running.get(int(finding.job_id))
            attempt = tracker.attempt if tracker is not None else None
            if tracker is None or attempt is None or finding.node in attempt.stragglers_reported:
                continue
            attempt.stragglers_reported.add(finding.node)
            diagnosis = finding.to_diagnosis().bound_to_allocation(jobs[tracker.job_id].nodes, "the job's metrics")
            anomaly = Anomaly(
                attempt=attempt.index,
                kind=FailureKind.STRAGGLER,
                diagnosis=diagnosis,
                source="straggler",
                observed_at=now,
            )
            tracker.outbox.put([AnomalyDetected(anomaly=anomaly)], attempt.index)
            await self._deliver(tracker)

    async def _check_liveness(self, snapshot: dict[int, JobSnapshot]) -> None:
        """Ask the node agents whether they answer (every ``node_agents.liveness_interval``); a running watched job
        on a lost node whose progress stopped gets a node-failure anomaly (lazarus/telemetry/liveness.py)."""
        agents = self.settings.node_agents
        now = utcnow()
        if not (agents.liveness and agents.configured) or (
            self._next_liveness_check and now < self._next_liveness_check
        ):
            return
        self._next_liveness_check = now + agents.liveness_interval
        running = [
            t
            for t in self.trackers.values()
            if not t.closed and t.attempt and t.attempt.started_reported and not t.attempt.ended_reported
            and t.job_id in snapshot and snapshot[t.job_id].state == JobState.RUNNING
        ]  # fmt: skip
        nodes = set(agents.urls) | {n for t in running for n in snapshot[t.job_id].nodes}
        await probe(agents, nodes, self.sightings, now)
        lost = lost_nodes(self.sightings, now, agents.liveness_silence)
        for tracker in running if lost else []:
            attempt = tracker.attempt
            assert attempt is not None  # running trackers have one
            if attempt.anomaly_reported:
                continue
            diagnosis = node_failure(
                snapshot[tracker.job_id].nodes, lost, self.sightings, attempt.last_progress_at,
                attempt.max_step_interval, now,
            )  # fmt: skip
            if diagnosis is None:
                continue
            attempt.anomaly_reported = True
            logger.warning(f"job {tracker.job_id}: node failure of {', '.join(diagnosis.implicated_nodes)}")
            anomaly = Anomaly(
                attempt=attempt.index, kind=FailureKind.CRASH, diagnosis=diagnosis, source="liveness", observed_at=now
            )
            tracker.outbox.put([AnomalyDetected(anomaly=anomaly)], attempt.index)
            await self._deliver(tracker)

    async def _log_paths(self, job: JobSnapshot, tracker: JobTracker) -> list[str]:
        try:
            full = await self.slurm.job(job.job_id)
        except LazarusError as exc:
            logger.warning(f"job {job.job_id}: cannot read its output paths: {exc}")
            return []
        tracker.user_id = full.user_id if full.user_id is not None else job.user_id
        return sorted({p for p in (full.stdout_path, full.stderr_path) if p})

    def _access(self, tracker: JobTracker) -> LogAccess:
        """Where the job's logs may be and whose they must be."""
        return LogAccess(roots=tuple(self.settings.discovery.log_roots), owner_uid=tracker.user_id)

    def _forget_gone(self, present: set[int]) -> None:
        """Jobs Slurm no longer lists (past MinJobAge) need no tracker and no offsets, once their workflow has
        every event they had for it."""
        for job_id in [j for j, t in self.trackers.items() if j not in present and (t.closed or not t.outbox.pending)]:
            self.offsets.forget(self.trackers.pop(job_id).log_paths)

    def _resume_hang_clock(self, tracker: JobTracker) -> None:
        """The term before this one saw progress in the attempt: the hang clock runs on from there (a hang that
        began before a telemetry restart is still rung one budget after its last progress)."""
        marks = self.term.marks if self.term is not None else {}
        if tracker.attempt is None or not marks:
            return
        seen = [m for p in tracker.log_paths if (m := marks.pop(p, None)) and m.attempt == tracker.attempt.index]
        latest = max(seen, key=lambda m: m.last_progress_at or datetime.min.replace(tzinfo=UTC), default=None)
        if latest is not None and latest.last_progress_at is not None:
            tracker.resume_progress(tracker.attempt.index, latest.last_progress_at, latest.step)

    async def _skip_earlier_attempts(self, tracker: JobTracker) -> None:
        """First sight of a requeued job with no saved offsets (a new or restarted telemetry worker):
        earlier attempts' failure lines must not be charged to this attempt. A failure before this
        point still shows in the scheduler's view when the attempt ends."""
        paths = [p for p in tracker.log_paths if p not in self.offsets.state.files]
        if tracker.user_id is None:
            return  # none of them will be read (see _tail)
        try:
            tails = await self.reads.run(f"job {tracker.job_id} ends", end_tails, paths, self._access(tracker))
        except LogReadStalledError as exc:
            await self._note(tracker, str(exc))
            return
        assert tracker.attempt is not None  # called after observe(), which always leaves the tracker an attempt
        self.offsets.start_at(tails, f"job {tracker.job_id} first seen at attempt {tracker.attempt.index}")

    async def _read_grown(self, jobs: list[JobSnapshot]) -> dict[str, EarlyRead]:
        """This cycle's read of every file the loop already reads on from a kept position, in one thread hop
        (:meth:`BoundedReads.run_each`): a ``stat`` for a file that did not grow, a read for one that did.
        :meth:`_tail` takes these results; a file left out (no position yet, or not reached in time) it reads
        on its own."""
        access_of: dict[int, LogAccess] = {}
        reads: dict[str, Callable[[], tuple[LogRead, FileTail | None] | None]] = {}
        prevs: dict[str, FileTail] = {}
        max_bytes, files = self.settings.discovery.log_tail_max_bytes, self.offsets.state.files
        for job in jobs:
            tracker = self.trackers.get(job.job_id)
            if tracker is None or tracker.closed or tracker.user_id is None:
                continue
            access = access_of.setdefault(tracker.user_id, self._access(tracker))
            for path in tracker.log_paths:
                if (prev := files.get(path)) is not None:
                    prevs[path] = prev
                    reads[path] = lambda p=path, f=prev, a=access: read_if_grown(p, f, max_bytes, a)  # type: ignore[misc]
        done = await self.reads.run_each(reads) if reads else {}
        return {path: (prevs[path], result) for path, result in done.items()}

    async def _tail(self, tracker: JobTracker, now: datetime) -> str | None:
        """New lines of the job's files, each read in a thread for a bounded time (see
        :mod:`lazarus.telemetry.logreads`); a refused or stalled file becomes a note on the job, sent once.
        Returns why a file could not be read (None: every file was)."""
        access, max_bytes = self._access(tracker), self.settings.discovery.log_tail_max_bytes
        if tracker.log_paths and tracker.user_id is None:
            refused = (
                "logs not read: Slurm did not give the job's user id, so no file can be shown to be the job user's own"
            )
            await self._note(tracker, refused)
            return refused
        unread: str | None = None
        for path in tracker.log_paths:
            prev = self.offsets.state.files.get(path)
            early = self._early.pop(path, None)
            if early is not None and early[0] is prev:  # read this cycle from the position still kept
                if early[1] is None:
                    continue  # it has not grown
                result, tail = early[1]
            else:
                try:
                    result, tail = await self.reads.run(path, read_log, path, prev, max_bytes, access)
                except LogReadStalledError as exc:
                    await self._note(tracker, str(exc))
                    unread = str(exc)
                    continue
            self.offsets.commit(path, tail)
            if tail is None:  # not opened: refused, missing, or an error
                unread = result.refused or (result.notes[0] if result.notes else f"{path} could not be read")
            if result.refused:
                await self._note(tracker, f"log not read: {result.refused}")
            for note in result.notes:
                logger.debug(f"job {tracker.job_id}: {note}")
            for line_no, text in result.lines:
                tracker.feed(path, line_no, text, now)
        return unread

    async def _read_to_the_end(self, tracker: JobTracker, now: datetime) -> str | None:
        """The attempt is ending: read its logs to their end (at most :data:`FINAL_READS` reads), so that its final
        digest and failure report hold the last lines it printed, not what one cycle's read reached. Returns why a
        file could not be read, like :meth:`_tail`."""
        unread: str | None = None
        for _ in range(FINAL_READS):
            before = self._positions(tracker)
            unread = await self._tail(tracker, now)
            if unread is not None or self._positions(tracker) == before:
                break
        return unread

    def _positions(self, tracker: JobTracker) -> list[int]:
        """How far each of the job's logs has been read."""
        files = self.offsets.state.files
        return [tail.offset if (tail := files.get(path)) else -1 for path in tracker.log_paths]

    async def _note(self, tracker: JobTracker, text: str) -> None:
        """Tell the job's workflow (and the log) once about something telemetry would not or could not do:
        queued in its outbox, which delivers it (at least once) with the job's other events."""
        if text in tracker.notes_sent:
            return
        logger.warning(f"job {tracker.job_id}: {text}")
        tracker.outbox.put([TelemetryNote(text=text[:500])], tracker.attempt.index if tracker.attempt else None)
        tracker.notes_sent.add(text)

    async def _failed_nodes(self, job: JobSnapshot) -> list[str]:
        """The job's nodes that the scheduler itself shows unhealthy (attribution from scheduler state)."""
        try:
            nodes = await self.slurm.nodes()
        except LazarusError:
            return []
        # DOWN / not responding, or drained with a reason (Slurm drains on "Kill task failed", health checks)
        return [
            n.name
            for n in nodes
            if n.name in job.nodes and (n.down or "NOT_RESPONDING" in n.state.upper() or (n.drained and n.reason))
        ]

    async def _signal(self, job_id: int, events: list[JobEvent]) -> None:
        handle = self.client.get_workflow_handle(names.workflow_id(self.settings.cluster, job_id))
        for event in events:
            if self.term:
                self.term.check()  # only while our term of the lease lasts
            await handle.signal(event_signal(event), event)

    # ---- delivery and sight: at-least-once events, blind spells --------------------------------

    async def _deliver(self, tracker: JobTracker) -> None:
        """Signal the job's waiting events in order; each counts as reported only once its signal succeeded.
        After a failure the rest of this cycle's deliveries wait too (Temporal unreachable: one timeout per
        cycle, not one per job); a workflow that has closed gets nothing more."""
        if self._delivery_paused or tracker.closed or not tracker.outbox.pending:
            return
        handle = self.client.get_workflow_handle(names.workflow_id(self.settings.cluster, tracker.job_id))
        try:
            await tracker.outbox.deliver(lambda event: handle.signal(event_signal(event), event))
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                tracker.closed = True
                tracker.outbox.clear()
                logger.info(f"job {tracker.job_id}: its workflow has closed; no longer watching it")
                return
            self._delivery_paused = True
            logger.warning(
                f"job {tracker.job_id}: {len(tracker.outbox.pending)} event(s) not delivered "
                f"({exc.message}); sending them again next cycle"
            )

    async def _deliver_waiting(self) -> None:
        """Deliver what failed earlier to jobs this cycle did not reach (e.g. gone from the scheduler's list)."""
        for tracker in list(self.trackers.values()):
            await self._deliver(tracker)

    def _sight(self, tracker: JobTracker, job: JobSnapshot, now: datetime, unread: str | None) -> None:
        """This cycle saw the job (a fresh row, and while it runs every output file read), or says why not."""
        if job.state == JobState.RUNNING and not tracker.log_paths:
            unread = "its output files are not known (scontrol show job did not answer)"
        if job.state == JobState.RUNNING and unread:
            tracker.missed(f"log unreadable: {unread}")
        else:
            tracker.saw(now, self.blind_after)

    async def _jobs_while_tailing(self) -> list[JobSnapshot]:
        """This cycle's ``squeue``. While it is slow the known jobs' logs are still read every interval, so
        their progress keeps counting; when it fails they are read once more and what waits for their workflows
        is delivered. Neither counts as seeing a job (no fresh scheduler row): the view says telemetry is blind."""
        interval = self.settings.discovery.interval.total_seconds()
        query = asyncio.ensure_future(self.slurm.jobs())
        waited = 0.0
        try:
            while not (await asyncio.wait({query}, timeout=interval))[0]:
                waited += interval
                await self._tail_known(f"the scheduler has not answered for {waited:g} s")
            return query.result()
        except LazarusError as exc:
            await self._tail_known(f"the scheduler could not be queried ({exc})")
            await self._deliver_waiting()
            raise
        finally:
            if not query.done():
                query.cancel()

    async def _tail_known(self, reason: str) -> None:
        """Read the running attempts' logs without a scheduler row; every job counts as not seen, for ``reason``."""
        for tracker in list(self.trackers.values()):
            tracker.missed(reason)
            cur = tracker.attempt
            if not tracker.closed and cur and cur.started_reported and not cur.ended_reported:
                await self._tail(tracker, utcnow())
                # the hang clock runs on: a budget without sight is told (the workflow records a blind spell)
                tracker.outbox.put(tracker.digest_events(utcnow(), tracker.digest_interval()), cur.index)
                await self._deliver(tracker)

    def progress_view(self, query: ProgressQuery) -> ProgressView:
        """Telemetry's view of one attempt for the hang watchdog, saying whether telemetry can vouch for it."""
        now = utcnow()
        tracker = self.trackers.get(query.job_id)
        if tracker is not None:
            return tracker.progress_view(query.attempt, now, self.blind_after)
        seen = self._scheduler_seen_at  # the job is not tracked: what the scheduler's list shows is all there is
        if seen is not None and now - seen <= self.blind_after:
            return ProgressView(known=False, observed_at=seen)
        since = f"since {seen:%H:%M:%S}" if seen else "yet"
        return ProgressView(known=False, observed_at=seen, blind=f"telemetry has not queried the scheduler {since}")
