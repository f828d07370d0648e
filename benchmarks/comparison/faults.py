"""The comparison's jobs and faults, the same for both arms.

Each run is one 2-node job (one rank per node, one GPU each) running the demo trainer, submitted with
``--requeue``. The Lazarus arm's job opts in (its comment); the Slurm-alone arm's does not, and its batch script
turns a failed step into ``RequeueExit`` (42), as a Slurm-only user would to get failed jobs requeued. Faults, always
on rank 1's node (never the batch host, whose death would take the job script with it):

- ``crash``: the GPU raises Xid 79 (the node agent sees it), the rank prints it and the job dies;
- ``node-fail``: the node's slurmd, node agent and the job's processes on it killed with -9; rank 0 blocks like a
  collective waiting on a dead peer (the trainer's ``node-fail`` fault);
- ``hang``: every rank stops progressing, alive;
- ``straggler``: the node's rank computes 2x slower from the fault step, and the synchronous job runs 2x slower
  with it. The straggler job is longer (fault at step 40, 10 s in; 80 steps): the detector needs a baseline of three
  windows before the fault and three slow windows after it.

Every rank publishes its compute-only throughput for the stack's Prometheus (the trainer's ``--metrics-sd-dir``), in
both arms: the jobs are the same, only Lazarus reads it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
import time
from enum import StrEnum
from pathlib import Path

from benchmarks.comparison.stack import BENCH_POLICY, BenchStack
from benchmarks.soak.stack import REPO

STEPS, STEP_TIME_S, CKPT_EVERY, FAULT_STEP = 24, 0.25, 5, 8
STRAGGLER_STEPS, STRAGGLER_FAULT_STEP = 80, 40
GPUS = 2  # one per node, two nodes
TIME_LIMIT_MIN = 4
REQUEUE_EXIT = 42  # RequeueExit in the dev stack's slurm.conf


class Fault(StrEnum):
    CRASH = "crash"
    NODE_FAIL = "node-fail"
    HANG = "hang"
    STRAGGLER = "straggler"


class Arm(StrEnum):
    LAZARUS = "lazarus"
    SLURM = "slurm"


TRAINER_FAULT = {Fault.CRASH: "xid79", Fault.NODE_FAIL: "node-fail", Fault.HANG: "hang", Fault.STRAGGLER: "straggler"}


def job_script(stack: BenchStack, arm: Arm, fault: Fault, ckpt_dir: Path) -> str:
    steps, fault_step = (STRAGGLER_STEPS, STRAGGLER_FAULT_STEP) if fault == Fault.STRAGGLER else (STEPS, FAULT_STEP)
    train = (
        f"srun --label --kill-on-bad-exit=1 {shlex.quote(sys.executable)} -m lazarus.demo.train "
        f"--ckpt-dir {shlex.quote(str(ckpt_dir))} --steps {steps} --step-time {STEP_TIME_S} "
        f"--ckpt-every {CKPT_EVERY} --fault {TRAINER_FAULT[fault]} --fault-rank 1 --fault-step {fault_step} "
        f"--fault-attempts 0 --fake-gpu-dir {shlex.quote(str(stack.layout.root / 'nvml'))} "
        f"--metrics-sd-dir {shlex.quote(str(stack.metrics_sd_dir))}"
    )
    lines = ["#!/bin/bash", f"cd {shlex.quote(str(REPO))}", train]
    if arm == Arm.SLURM:
        lines.append(f'rc=$?; [ "$rc" -ne 0 ] && exit {REQUEUE_EXIT}; exit 0')
    return "\n".join(lines) + "\n"


def sbatch_argv(stack: BenchStack, arm: Arm, name: str, out: Path) -> list[str]:
    argv = [
        "sbatch",
        "--parsable",
        "--requeue",
        f"--job-name={name}",
        "--nodes=2",
        "--ntasks-per-node=1",
        "--gres=gpu:1",
        f"--time={TIME_LIMIT_MIN}",
        "--open-mode=append",
        f"--output={out}",
    ]
    if arm == Arm.LAZARUS:
        argv.append(f"--comment={json.dumps({'lazarus': {'policy': BENCH_POLICY}})}")
    return argv


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    return dict(kv.split("=", 1) for kv in raw.decode(errors="replace").split("\0") if "=" in kv)


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def job_processes_on(job_id: int, node: str) -> set[int]:
    """The job's processes on ``node`` (its environment says so) and their slurmstepd parents."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        env = _environ(int(entry.name))
        if env.get("SLURM_JOB_ID") == str(job_id) and env.get("SLURMD_NODENAME") == node:
            found.add(int(entry.name))
    for pid in list(found):
        parent = _ppid(pid)
        if parent and parent > 1 and b"slurmstepd" in Path(f"/proc/{parent}/cmdline").read_bytes()[:64]:
            found.add(parent)
    return found


def kill_node(stack: BenchStack, job_id: int, node: str) -> float:
    """kill -9 the node's slurmd, its node agent and the job's processes on it; return the time of the kill."""
    victims = job_processes_on(job_id, node)
    for name in (f"slurmd-{node}", f"node-agent-{node}"):
        comp = stack.agent(node) if name.startswith("node-agent") else stack.component(name)
        pid = comp.pid(stack.layout)
        if pid is not None:
            victims.add(pid)
    at = time.time()
    for pid in sorted(victims):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return at


def unregister_ranks(stack: BenchStack, job_id: int) -> None:
    """Remove the job's rank targets that its ranks could not (killed -9, or cancelled by ``scancel``)."""
    for target in stack.metrics_sd_dir.glob(f"{job_id}-*.json"):
        target.unlink(missing_ok=True)


def restore_node(stack: BenchStack, node: str) -> None:
    """The node back: its slurmd and agent started, its fake GPUs healthy, and Slurm told it may be used."""
    stack.component(f"slurmd-{node}").ensure(stack.layout)
    agent = stack.agent(node)
    agent.ensure(stack.layout)
