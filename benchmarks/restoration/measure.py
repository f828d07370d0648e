"""One run of one arm: the fault injected, the job's milestones measured from the fault's own timestamp.

Milestones (seconds from the Xid line's timestamp, docs/milestones.md):

- ``requeued``: Lazarus arms: the requeue verified (the workflow's ``requeued_at``); Slurm alone: the job seen
  with a new restart count (squeue, polled every 0.2 s);
- ``running``: Lazarus arms: Slurm's start of the next attempt (whole seconds); Slurm alone: seen RUNNING again;
- ``progress restored``: Lazarus arms: telemetry's read of the next attempt's first progress line; Slurm alone:
  the poller's read of that line in the job's own output (every 0.2 s);
- ``completed``: the next attempt ended COMPLETED (Lazarus: Slurm's end time; Slurm alone: seen COMPLETED).

Both arms also get the log's view (``log_*``: the poller's reads of the output and squeue), as a cross-check;
``steps_lost`` is the last step seen before the fault minus the checkpoint the next attempt resumed from;
``on_bad_node`` says whether the next attempt ran on the node whose GPU fell off the bus (a real dead GPU would
fail it again). For the spares arm, ``refilled`` is when Slurm's reservation no longer held the bad node and was
back to three nodes.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from temporalio.client import Client

from benchmarks.comparison.faults import Fault
from benchmarks.restoration.stack import RestoreStack
from benchmarks.restoration.workload import Arm, Workload
from lazarus.models import names
from lazarus.models.recovery import JobStatus
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.slurm.reads import SlurmReader

POLL_S = 0.2
RESERVATION_POLL_S = 1.0
START_TIMEOUT_S = 120.0
XID = re.compile(r"\[(\d+\.\d+)\] (\S+) kernel: NVRM: Xid")
HEADER = re.compile(r"attempt (\d+), resuming from checkpoint (\d+)")
STEP = re.compile(r"LAZARUS step=(\d+)")
FAILED = frozenset({JobState.FAILED, JobState.CANCELLED, JobState.TIMEOUT})
MILESTONE_WAIT_S = 10.0
MILESTONES = ("requeued", "running", "progress_restored", "completed")


@dataclass
class Run:
    arm: Arm
    fault: Fault = Fault.CRASH  # benchmarks/compare.py's restore() reads these two
    bad_node: str = ""
    job_id: int = 0
    fault_at: float | None = None
    first_nodes: list[str] = field(default_factory=list)
    next_nodes: list[str] = field(default_factory=list)
    requeued_s: float | None = None
    running_s: float | None = None
    progress_restored_s: float | None = None
    completed_s: float | None = None
    log_requeued_s: float | None = None
    log_running_s: float | None = None
    log_progress_restored_s: float | None = None
    log_completed_s: float | None = None
    first_step: int | None = None
    resumed_from: int | None = None
    steps_lost: int | None = None
    on_bad_node: bool | None = None
    refilled_s: float | None = None
    fillers_end_s: list[float] = field(default_factory=list)
    pending_start_s: list[float] = field(default_factory=list)
    expedited: bool | None = None
    source: str = "log+squeue"
    jobs: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def restored_elsewhere(self) -> bool:
        return self.progress_restored_s is not None and self.on_bad_node is False


@dataclass
class _Log:
    """What the job's output says so far."""

    fault_at: float | None = None
    bad_node: str = ""
    last_step_before: int | None = None
    resumed_from: int | None = None
    first_step: int | None = None


def read_log(text: str) -> _Log:
    log, attempt = _Log(), 0
    for line in text.splitlines():
        if (m := XID.search(line)) and log.fault_at is None:
            log.fault_at, log.bad_node = float(m.group(1)), m.group(2)
        elif m := HEADER.search(line):
            attempt = int(m.group(1))
            if attempt == 1 and log.resumed_from is None:
                log.resumed_from = int(m.group(2))
        elif m := STEP.search(line):
            if attempt == 0:
                log.last_step_before = int(m.group(1))
            elif attempt == 1 and log.first_step is None:
                log.first_step = int(m.group(1))
    return log


def _text(path: Path) -> str:
    """The job's output so far (a small file, read whole at each poll)."""
    return path.read_text(errors="replace") if path.exists() else ""


class Runner:
    def __init__(self, stack: RestoreStack, client: Client, workload: Workload, window_s: float) -> None:
        self.stack, self.client, self.workload, self.window_s = stack, client, workload, window_s
        self.reader = SlurmReader(workload.transport, command_timeout=10.0)

    async def run(self, arm: Arm) -> Run:
        run = Run(arm=arm)
        if arm == Arm.SPARES:
            await self.workload.reserve(self.stack.nodes()[:3])
        run.job_id, out = await self.workload.training(arm)
        run.jobs.append(run.job_id)
        try:
            await self._started(run)
            free = 1 if arm == Arm.SPARES else len(self.stack.nodes()) - len(run.first_nodes)  # outside the pool
            fillers, pending = await self.workload.fill(arm, free)
            run.jobs += fillers + pending
            await self._watch(run, out, fillers, pending)
            if arm != Arm.SLURM:
                await self._milestones(run)
        finally:
            await self.workload.cancel(run.jobs)
        return run

    async def _job(self, job_id: int, jobs: list[JobSnapshot] | None = None) -> JobSnapshot | None:
        return next((j for j in (jobs if jobs is not None else await self.reader.jobs()) if j.job_id == job_id), None)

    async def _started(self, run: Run) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            job = await self._job(run.job_id)
            if job is not None and job.state == JobState.RUNNING and job.nodes:
                run.first_nodes = list(job.nodes)
                return
            await asyncio.sleep(POLL_S)
        raise RuntimeError(f"training job {run.job_id} did not start within {START_TIMEOUT_S:.0f} s")

    async def _watch(self, run: Run, out: Path, fillers: list[int], pending: list[int]) -> None:
        """Poll squeue and the job's output until the next attempt completed (and, with spares, the pool was
        refilled), or the window after the fault passed."""
        deadline = time.time() + START_TIMEOUT_S
        next_reservation_read = 0.0
        while time.time() < deadline:
            jobs = await self.reader.jobs()
            now = time.time()
            log = read_log(_text(out))
            if run.fault_at is None and log.fault_at is not None:
                run.fault_at, run.bad_node = log.fault_at, log.bad_node
                deadline = run.fault_at + self.window_s
            if run.fault_at is None:
                await asyncio.sleep(POLL_S)
                continue
            since = now - run.fault_at
            job = await self._job(run.job_id, jobs)
            if job is not None and job.restarts > 0:
                run.log_requeued_s = run.log_requeued_s if run.log_requeued_s is not None else since
                if job.state == JobState.RUNNING and run.log_running_s is None:
                    run.log_running_s, run.next_nodes = since, list(job.nodes)
                    run.on_bad_node = run.bad_node in job.nodes
                if job.state == JobState.COMPLETED and run.log_completed_s is None:
                    run.log_completed_s = since
            if log.first_step is not None and run.log_progress_restored_s is None:
                run.log_progress_restored_s = since
                run.first_step, run.resumed_from = log.first_step, log.resumed_from
                if log.last_step_before is not None and log.resumed_from is not None:
                    run.steps_lost = log.last_step_before - log.resumed_from
            self._others(run, jobs, fillers, pending, since)
            if run.arm == Arm.SPARES and run.refilled_s is None and now >= next_reservation_read:
                next_reservation_read = now + RESERVATION_POLL_S
                members = await self.workload.reservation_nodes()
                if len(members) == 3 and run.bad_node not in members:
                    run.refilled_s = time.time() - run.fault_at
            failed_again = job is not None and job.restarts > 0 and job.state in FAILED
            if failed_again or (run.log_completed_s is not None and (run.arm != Arm.SPARES or run.refilled_s)):
                break
            await asyncio.sleep(POLL_S)
        if run.fault_at is None:
            run.notes.append("no fault seen in the job's output")
        elif run.log_completed_s is None:
            run.notes.append(f"not completed within the {self.window_s:.0f} s window")
        run.requeued_s, run.running_s = run.log_requeued_s, run.log_running_s
        run.progress_restored_s, run.completed_s = run.log_progress_restored_s, run.log_completed_s

    @staticmethod
    def _others(run: Run, jobs: list[JobSnapshot], fillers: list[int], pending: list[int], since: float) -> None:
        """When each filler ended and each waiting job started, from the fault (order of the lists)."""
        states = {j.job_id: j.state for j in jobs}
        ended = [f for f in fillers if states.get(f) not in (JobState.PENDING, JobState.RUNNING)]
        run.fillers_end_s += [round(since, 1)] * (len(ended) - len(run.fillers_end_s))
        started = [p for p in pending if states.get(p) not in (JobState.PENDING, None)]
        run.pending_start_s += [round(since, 1)] * (len(started) - len(run.pending_start_s))

    async def _milestones(self, run: Run) -> None:
        """The Lazarus arms' milestones, as the workflow recorded them (docs/milestones.md)."""
        handle = self.client.get_workflow_handle(names.workflow_id(self.stack.cluster, run.job_id))
        deadline = time.monotonic() + MILESTONE_WAIT_S
        while True:  # the workflow hears of the completion a moment after Slurm shows it
            try:
                status: JobStatus = await handle.query(names.JOB_STATUS, result_type=JobStatus)
            except Exception as exc:
                run.notes.append(f"workflow status unreadable: {type(exc).__name__}")
                return
            row = next((r for r in status.milestones if r.attempt == 1), None)
            if (row is not None and row.completed_at is not None) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        if row is None or run.fault_at is None:
            run.notes.append(f"no milestones for attempt 1 ({status.state.value})")
            return
        fault = datetime.fromtimestamp(run.fault_at, tz=UTC)
        reached = (row.requeued_at, row.running_at, row.progress_restored_at, row.completed_at)
        for name, at in zip(MILESTONES, reached, strict=True):
            setattr(run, f"{name}_s", (at - fault).total_seconds() if at is not None else None)
        run.first_step, run.resumed_from, run.steps_lost = row.first_step, row.resumed_from, row.steps_lost
        run.source = "milestones"
        if status.advice_history:
            run.expedited = status.advice_history[0].expedited is not None
        if len(status.attempts) > 1:
            run.next_nodes = list(status.attempts[1].nodes)
            run.on_bad_node = run.bad_node in run.next_nodes
