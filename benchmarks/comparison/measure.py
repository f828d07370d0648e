"""One run of one fault in one arm, measured from Slurm's view (polled every 0.2 s) and Lazarus's workflow.

Measures (seconds, from the fault):

- ``anomaly``: fault -> the anomaly recorded (Lazarus: in the workflow; Slurm alone: the attempt seen leaving
  RUNNING, which is when Slurm acts on it);
- ``decision``: anomaly -> decision (Lazarus: the advice; Slurm alone: its requeue is its decision, 0);
- ``requeue``: decision -> requeue verified (Lazarus: held, excluded, released and verified; Slurm alone: the job
  seen with a new restart count);
- ``running_elsewhere``: fault -> the next attempt RUNNING on nodes without the bad one (``running_again``: on any);
- ``on_bad_node``: time the job spent RUNNING on the bad node after the fault (its own attempt and any later one);
- ``gpu_s_lost``: GPUs x (fault -> running elsewhere, plus the work since the last checkpoint that is redone);
  a straggler loses half its GPUs' throughput from the fault to the end; a run not recovered within the window is
  charged its whole window;
- ``advice``: what Lazarus's first decision was (``none`` for advice only: a straggler under a policy without
  ``act_on_stragglers``), and ``digest_interval_s``: the job's telemetry digest interval (¾ of its learned hang
  budget, 2 s at least), the unit of the straggler target (advice within 3 digest intervals).
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from temporalio.client import Client

from benchmarks.comparison.faults import (
    CKPT_EVERY,
    FAULT_STEP,
    GPUS,
    STEP_TIME_S,
    Arm,
    Fault,
    job_script,
    kill_node,
    sbatch_argv,
    unregister_ranks,
)
from benchmarks.comparison.stack import BenchStack
from lazarus.models import names
from lazarus.models.recovery import JobStatus
from lazarus.models.slurm import JobState
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.transport import LocalTransport

POLL_S = 0.2
ENDED = frozenset({JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED, JobState.TIMEOUT})
XID_TS = re.compile(r"\[(\d+\.\d+)\] \S+ kernel: NVRM: Xid")
MARK_TS = re.compile(r"\[(\d+\.\d+)\] lazarus-demo: (\S+) (?:ready to fail|is a straggler|stops progressing)")
REDONE_S = ((FAULT_STEP - 1) % CKPT_EVERY + 1) * STEP_TIME_S  # steps since the last checkpoint, redone
MIN_DIGEST_S, MAX_DIGEST_S = 2.0, 1800.0  # lazarus/telemetry/tracker.py


@dataclass
class Run:
    arm: Arm
    fault: Fault
    job_id: int = 0
    bad_node: str = ""
    fault_at: float | None = None
    anomaly_s: float | None = None
    decision_s: float | None = None
    requeue_s: float | None = None
    running_elsewhere_s: float | None = None
    running_again_s: float | None = None  # fault -> the next attempt RUNNING, on any nodes
    on_bad_node_s: float = 0.0
    gpu_s_lost: float | None = None
    node_down_s: float | None = None  # node-fail: fault -> Slurm shows the node DOWN
    advice: str | None = None  # Lazarus's first decision: restart, stop, or none (advice only)
    digest_interval_s: float | None = None  # the job's telemetry digest interval (¾ of its hang budget)
    recovered: bool = False
    notes: list[str] = field(default_factory=list)


class Runner:
    def __init__(self, stack: BenchStack, client: Client, window_s: float) -> None:
        self.stack, self.client, self.window_s = stack, client, window_s
        self.transport = LocalTransport(stack.slurm_conf)
        self.reader = SlurmReader(self.transport, command_timeout=10.0)
        self.seq = 0

    async def submit(self, arm: Arm, fault: Fault) -> tuple[int, Path]:
        self.seq += 1
        name = f"{self.stack.job_prefix}{self.seq:03d}-{arm.value}-{fault.value}"
        script = self.stack.job_dir / f"job-{self.seq:03d}.sh"
        out = self.stack.job_dir / f"job-{self.seq:03d}.out"
        script.write_text(job_script(self.stack, arm, fault, self.stack.job_dir / f"ckpt-{self.seq:03d}"))
        result = await self.transport.run([*sbatch_argv(self.stack, arm, name, out), str(script)], 20.0)
        if result.returncode != 0:
            raise RuntimeError(f"sbatch failed: {result.stderr.strip()}")
        return int(result.stdout.strip().split(";")[0]), out

    async def run(self, arm: Arm, fault: Fault) -> Run:
        job_id, out = await self.submit(arm, fault)
        run = Run(arm=arm, fault=fault, job_id=job_id)
        first_nodes: list[str] = []
        running_since: float | None = None
        deadline = time.time() + self.window_s + 60
        while time.time() < deadline:
            job = next((j for j in await self.reader.jobs() if j.job_id == job_id), None)
            now = time.time()
            if job is not None and job.state == JobState.RUNNING and not first_nodes:
                first_nodes = list(job.nodes)
                run.bad_node = first_nodes[-1] if fault != Fault.HANG else ""  # rank 1's node; a hang has none
            text = out.read_text(errors="replace") if out.exists() else ""
            if run.fault_at is None and first_nodes:
                run.fault_at = await self._fault(run, text)
                if run.fault_at is not None:
                    deadline = run.fault_at + self.window_s
            if run.fault_at is None or job is None:
                if job is not None and job.state.finished and first_nodes:
                    run.notes.append(f"ended {job.state.value} before the fault")
                    break
                await asyncio.sleep(POLL_S)
                continue
            on_bad = job.state == JobState.RUNNING and run.bad_node in job.nodes and fault != Fault.STRAGGLER
            if on_bad and running_since is not None:
                run.on_bad_node_s += now - running_since
            running_since = now if on_bad else None
            left = job.restarts > 0 or job.state not in (JobState.RUNNING, JobState.COMPLETED)
            if run.anomaly_s is None and arm == Arm.SLURM and fault != Fault.STRAGGLER and left:
                run.anomaly_s = run.decision_s = now - run.fault_at
                run.decision_s = 0.0
            if run.requeue_s is None and arm == Arm.SLURM and job.restarts > 0 and run.anomaly_s is not None:
                run.requeue_s = now - run.fault_at - run.anomaly_s
            if fault == Fault.NODE_FAIL and run.node_down_s is None and await self._node_down(run.bad_node):
                run.node_down_s = now - run.fault_at
            if job.restarts > 0 and job.state == JobState.RUNNING and run.running_again_s is None:
                run.running_again_s = now - run.fault_at
            if run.running_again_s is not None and job.state in ENDED:
                run.notes.append(f"the next attempt ended {job.state.value} on the bad node")
                break
            if (
                job.restarts > 0
                and job.state == JobState.RUNNING
                and (not run.bad_node or run.bad_node not in job.nodes)
            ):
                run.running_elsewhere_s = now - run.fault_at
                run.recovered = True
                break
            if job.state.finished and job.restarts == 0 and fault == Fault.STRAGGLER:
                run.gpu_s_lost = 0.5 * GPUS * (now - run.fault_at)
                run.notes.append("finished without a restart")
                break
            await asyncio.sleep(POLL_S)
        if arm == Arm.LAZARUS:
            await self._lazarus_times(run)
        if run.gpu_s_lost is None:
            lost = run.running_elsewhere_s if run.recovered else self.window_s
            run.gpu_s_lost = GPUS * ((lost or 0.0) + REDONE_S)
            if not run.recovered:
                run.notes.append(f"not running elsewhere within the {self.window_s:.0f} s window")
        await self.transport.run(["scancel", str(job_id)], 20.0)
        unregister_ranks(self.stack, job_id)
        return run

    async def _fault(self, run: Run, text: str) -> float | None:
        """When the fault happened, from the job's own output (the node-fail fault is injected here)."""
        if run.fault == Fault.CRASH:
            m = XID_TS.search(text)
            return float(m.group(1)) if m else None
        m = MARK_TS.search(text)
        if m is None:
            return None
        if run.fault == Fault.NODE_FAIL:
            return await asyncio.to_thread(kill_node, self.stack, run.job_id, m.group(2))
        return float(m.group(1))

    async def _node_down(self, node: str) -> bool:
        try:
            states = await self.reader.nodes()
        except Exception:
            return False
        return any(n.name == node and "DOWN" in n.state.upper() for n in states)

    async def _lazarus_times(self, run: Run) -> None:
        try:
            handle = self.client.get_workflow_handle(names.workflow_id(self.stack.cluster, run.job_id))
            status: JobStatus = await handle.query(names.JOB_STATUS, result_type=JobStatus)
        except Exception as exc:
            run.notes.append(f"workflow status unreadable: {type(exc).__name__}")
            return
        first = status.attempts[0] if status.attempts else None
        if first is None or first.anomaly is None or first.anomaly.recorded_at is None or run.fault_at is None:
            run.notes.append(f"no anomaly recorded ({status.state.value})")
            return
        fault_at = datetime.fromtimestamp(run.fault_at, tz=UTC)
        run.anomaly_s = (first.anomaly.recorded_at - fault_at).total_seconds()
        budget = first.hang_budget or (status.hang_budget.budget if status.hang_budget else None)
        if budget is not None:
            run.digest_interval_s = min(max(0.75 * budget.total_seconds(), MIN_DIGEST_S), MAX_DIGEST_S)
        advice = next((a for a in status.advice_history if a.decided_at is not None), None)
        if advice is not None:
            run.advice = advice.action.value
            run.notes.append(f"advice {advice.action.value}: {advice.reason}")
        if advice is not None and advice.decided_at is not None:
            run.decision_s = (advice.decided_at - first.anomaly.recorded_at).total_seconds()
            if first.requeued_at is not None:
                run.requeue_s = (first.requeued_at - advice.decided_at).total_seconds()
        run.notes.append(f"anomaly {first.anomaly.diagnosis.signature} ({first.anomaly.source})")
