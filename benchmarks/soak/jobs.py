"""The soak's job mix: real 2-node Slurm jobs running the demo trainer, each healthy, noisy, crashing, hanging or
hostile, in act or monitor mode (monitor through the job's own comment).

A hostile job is excluded from one real node and, in its first attempt, prints lies about it while training
normally: a GPU Xid naming that node, ``Node failure on x[1-99999]``, terminal escape sequences around an Xid, and a
node name with shell metacharacters. Whatever Lazarus does to the hostile job itself, the node it lied about must
never be excluded or drained because of it.
"""

from __future__ import annotations

import json
import random
import shlex
import sys
from dataclasses import dataclass
from datetime import UTC, datetime

from benchmarks.soak.models import JobKind, JobPlan
from benchmarks.soak.stack import REPO, SOAK_POLICY, ChaosStack
from lazarus.slurm.transport import LocalTransport

KIND_WEIGHTS = {JobKind.HEALTHY: 2, JobKind.NOISY: 2, JobKind.CRASH: 3, JobKind.HANG: 2, JobKind.HOSTILE: 1}
CRASH_FAULTS = {"xid79": 5, "nccl-timeout": 2, "ecc": 2, "app-error": 1}
STEPS, STEP_TIME_S, CKPT_EVERY, FAULT_STEP = 30, 0.5, 5, 10
JOB_TIME_LIMIT_MIN = 4
SBATCH_TIMEOUT_S = 20.0


def hostile_lines(outside: str) -> list[str]:
    """What a hostile job prints (each a line of its output)."""
    esc = "\x1b"
    return [
        f"May  1 12:00:03 {outside} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.",
        "srun: error: Node failure on x[1-99999]",
        f"{esc}]0;owned\x07{esc}[2J{esc}[31m{outside} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, "
        f"GPU has fallen off the bus.{esc}[0m",
        f"{outside};touch /tmp/lz-chaos-pwned$(id) kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=7, "
        "An uncorrectable double bit error (DBE) has been detected on GPU",
    ]


def job_script(kind: JobKind, fault: str, ckpt_dir: str, outside: str | None, gpu_dir: str) -> str:
    """The sbatch script: one trainer rank per node (labelled output), hostile lies printed in the background; it
    exits with srun's status, so a crashing job fails in Slurm's eyes. A hardware fault (Xid 79, uncorrectable
    ECC) reaches the failing node's fake GPU under ``gpu_dir`` first, so its node agent reports it; a hostile
    job's lies reach no GPU."""
    train_fault = "none" if kind in (JobKind.HEALTHY, JobKind.HOSTILE) else fault
    lines = ["#!/bin/bash", f"cd {shlex.quote(str(REPO))}"]
    if kind == JobKind.HOSTILE and outside is not None:
        prints = "\n".join(f"    printf '%s\\n' {shlex.quote(line)}" for line in hostile_lines(outside))
        lines.append(f'if [ "${{SLURM_RESTART_COUNT:-0}}" = 0 ]; then\n  ( sleep 6\n{prints}\n  ) &\nfi')
    lines.append(
        f"srun --label --kill-on-bad-exit=1 {shlex.quote(sys.executable)} -m lazarus.demo.train "
        f"--ckpt-dir {shlex.quote(ckpt_dir)} --steps {STEPS} --step-time {STEP_TIME_S} --ckpt-every {CKPT_EVERY} "
        f"--fault {train_fault} --fault-rank 1 --fault-step {FAULT_STEP} --fault-attempts 0 "
        f"--fake-gpu-dir {shlex.quote(gpu_dir)}"
    )
    lines += ["status=$?", "wait", 'exit "$status"']  # the job ends as its trainer did (the lies only add lines)
    return "\n".join(lines) + "\n"


def comment(mode: str) -> str:
    section: dict[str, str] = {"policy": SOAK_POLICY}
    if mode == "monitor":
        section["mode"] = "monitor"
    return json.dumps({"lazarus": section})


@dataclass
class JobFactory:
    """Draws jobs from the seeded RNG and submits them to the soak's cluster."""

    stack: ChaosStack
    rng: random.Random
    seq: int = 0

    def __post_init__(self) -> None:
        self.transport = LocalTransport(self.stack.slurm_conf)
        self.unconfirmed: dict[str, JobPlan] = {}  # job name -> plan (job_id 0) of an sbatch that did not answer

    def draw(self) -> tuple[JobKind, str, str, str | None]:
        """kind, mode, trainer fault, and the node a hostile job lies about."""
        kind = self.rng.choices(list(KIND_WEIGHTS), weights=list(KIND_WEIGHTS.values()))[0]
        mode = self.rng.choice(["act", "monitor"])
        fault = {
            JobKind.HEALTHY: "none",
            JobKind.NOISY: "noisy",
            JobKind.HANG: "hang",
            JobKind.HOSTILE: "hostile",
            JobKind.CRASH: self.rng.choices(list(CRASH_FAULTS), weights=list(CRASH_FAULTS.values()))[0],
        }[kind]
        outside = self.rng.choice(self.stack.nodes()) if kind == JobKind.HOSTILE else None
        return kind, mode, fault, outside

    async def submit(self) -> JobPlan | None:
        """Submit the next job; None when sbatch failed or did not answer (the controller down or frozen). A job
        whose sbatch did not answer may still have been submitted: :meth:`confirm` finds it later by name."""
        kind, mode, fault, outside = self.draw()
        self.seq += 1
        name = f"{self.stack.job_prefix}{self.seq:04d}-{kind.value}"
        script = self.stack.job_dir / f"job-{self.seq:04d}.sh"
        script.write_text(
            job_script(kind, fault, str(self.stack.job_dir / f"ckpt-{self.seq:04d}"), outside, str(self.stack.gpu_dir))
        )
        argv = [
            "sbatch",
            "--parsable",
            f"--job-name={name}",
            "--nodes=2",
            "--ntasks-per-node=1",
            "--gres=gpu:1",
            f"--time={JOB_TIME_LIMIT_MIN}",
            "--open-mode=append",
            f"--output={self.stack.job_dir}/%j.out",
            f"--comment={comment(mode)}",
        ]
        if outside is not None:
            argv.append(f"--exclude={outside}")
        plan = JobPlan(
            job_id=0, kind=kind, mode=mode, fault=fault, outside_node=outside, submitted_at=datetime.now(UTC)
        )
        try:
            result = await self.transport.run([*argv, str(script)], SBATCH_TIMEOUT_S)
        except Exception:
            self.unconfirmed[name] = plan
            return None
        if result.returncode != 0 or not result.stdout.strip():
            self.unconfirmed[name] = plan  # sbatch may give up waiting for an answer after submitting
            return None
        return plan.model_copy(update={"job_id": int(result.stdout.strip().split(";")[0])})

    async def confirm(self) -> list[JobPlan]:
        """Jobs whose sbatch did not answer but which Slurm holds after all (found by their unique name)."""
        found = []
        for name, plan in list(self.unconfirmed.items()):
            try:
                result = await self.transport.run(["squeue", "-h", "-n", name, "-o", "%i"], SBATCH_TIMEOUT_S)
            except Exception:
                continue
            ids = [int(x) for x in result.stdout.split() if x.isdigit()] if result.returncode == 0 else []
            if ids:
                found.append(plan.model_copy(update={"job_id": ids[0]}))
                del self.unconfirmed[name]
        return found
