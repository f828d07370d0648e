"""The restore benchmark's arms and its full cluster: the training job, the filler work, the jobs that wait.

Every run is the comparison's crash (benchmarks/comparison/faults.py): one 2-node training job (whole nodes,
``--requeue``), Xid 79 on rank 1's node at step 8, seen by that node's agent. The arms differ only in how the job
asks for recovery and in the cluster around it:

- ``spares``: the job runs in the reservation :data:`RESERVATION` of three nodes (two for it, one spare) and opts in
  with the spare-pool policy; the fourth node runs one filler job that ends ``2 x filler_every`` after the fault;
- ``expedite`` / ``plain``: no reservation; the job opts in with expedite on / off; the two other nodes run filler
  jobs that end ``filler_every`` and ``2 x filler_every`` after the fault, and ``pending`` one-node jobs, submitted
  before the fault, wait for nodes (each runs ``pending_s`` once started);
- ``slurm``: the cluster of ``plain``; the job does not opt in, and its script exits with RequeueExit when its step
  failed (Slurm requeues it, onto whatever nodes it gives it).

Fillers and waiting jobs are plain ``sleep`` jobs (``--exclusive``, time limits of minutes, as Slurm's backfill
plans with them); they are not named with the run's prefix, so Lazarus never watches them.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from benchmarks.comparison.faults import Arm as CompareArm
from benchmarks.comparison.faults import Fault, job_script, sbatch_argv
from benchmarks.restoration.stack import EXPEDITE_POLICY, PLAIN_POLICY, RESERVATION, SPARES_POLICY, RestoreStack
from lazarus.slurm.transport import LocalTransport

FAULT_LEAD_S = 3.0  # the job seen running -> its Xid line (measured): the fillers end near their marks
FILLER_TIME_MIN, PENDING_TIME_MIN = 3, 5  # Slurm time limits: what backfill plans with
SBATCH_TIMEOUT_S = 20.0
UNRESERVE_TRIES = 60


class Arm(StrEnum):
    SPARES = "spares"
    EXPEDITE = "expedite"
    PLAIN = "plain"
    SLURM = "slurm"


TITLES = {
    Arm.SPARES: "Lazarus + spares",
    Arm.EXPEDITE: "Lazarus, no spares, expedite",
    Arm.PLAIN: "Lazarus, no spares, no expedite",
    Arm.SLURM: "Slurm alone",
}
POLICY = {Arm.SPARES: SPARES_POLICY, Arm.EXPEDITE: EXPEDITE_POLICY, Arm.PLAIN: PLAIN_POLICY}


@dataclass(frozen=True)
class Load:
    """The filler work around the training job."""

    filler_every_s: float = 15.0  # fillers end this long apart, the first this long after the fault
    pending: int = 2  # one-node jobs waiting for nodes, submitted before the fault
    pending_s: float = 20.0  # how long each runs once started


class Workload:
    """Submits and cleans up one run's jobs and the spare pool's reservation."""

    def __init__(self, stack: RestoreStack, transport: LocalTransport, load: Load) -> None:
        self.stack, self.transport, self.load = stack, transport, load
        self.seq = 0

    async def sbatch(self, argv: list[str], script: Path) -> int:
        result = await self.transport.run(["sbatch", "--parsable", *argv, str(script)], SBATCH_TIMEOUT_S)
        if result.returncode != 0:
            raise RuntimeError(f"sbatch failed: {result.stderr.strip()}")
        return int(result.stdout.strip().split(";")[0])

    async def training(self, arm: Arm) -> tuple[int, Path]:
        """The 2-node training job of ``arm``; returns its id and its output file (both attempts, appended)."""
        self.seq += 1
        base = self.stack.job_dir / f"train-{self.seq:03d}"
        script, out = base.with_suffix(".sh"), base.with_suffix(".out")
        compare_arm = CompareArm.SLURM if arm == Arm.SLURM else CompareArm.LAZARUS
        script.write_text(job_script(self.stack, compare_arm, Fault.CRASH, base.with_suffix(".ckpt")))
        name = f"{self.stack.job_prefix}{self.seq:03d}-{arm.value}"
        argv = [a for a in sbatch_argv(self.stack, CompareArm.SLURM, name, out) if a not in ("sbatch", "--parsable")]
        argv.append("--exclusive")
        if arm in POLICY:
            argv.append(f"--comment={json.dumps({'lazarus': {'policy': POLICY[arm]}})}")
        if arm == Arm.SPARES:
            argv.append(f"--reservation={RESERVATION}")
        return await self.sbatch(argv, script), out

    async def sleeper(self, kind: str, seconds: float, minutes: int) -> int:
        """A whole-node ``sleep`` job (a filler or a waiting job), not watched by Lazarus."""
        self.seq += 1
        script = self.stack.job_dir / f"{kind}-{self.seq:03d}.sh"
        script.write_text(f"#!/bin/bash\nsleep {seconds:.1f}\n")
        argv = [f"--job-name=restore-{kind}", "--nodes=1", "--exclusive", f"--time={minutes}", "--output=/dev/null"]
        return await self.sbatch(argv, script)

    async def fill(self, arm: Arm, free_nodes: int) -> tuple[list[int], list[int]]:
        """Once the training job runs: a filler on each free node, ending ``filler_every`` apart after the fault,
        then the waiting jobs (none in the spares arm, whose general pool is its one busy node)."""
        every = self.load.filler_every_s
        fillers = []
        for k in range(free_nodes):
            ends = FAULT_LEAD_S + (2 if arm == Arm.SPARES else k + 1) * every
            fillers.append(await self.sleeper("filler", ends, FILLER_TIME_MIN))
        pending = [] if arm == Arm.SPARES else [
            await self.sleeper("waiting", self.load.pending_s, PENDING_TIME_MIN) for _ in range(self.load.pending)
        ]  # fmt: skip
        return fillers, pending

    async def reserve(self, nodes: list[str]) -> None:
        """The spare pool's reservation of ``nodes``, made afresh (a run before may have refilled it)."""
        await self.unreserve()
        argv = ["scontrol", "create", "reservation", f"ReservationName={RESERVATION}", f"Nodes={','.join(nodes)}"]
        argv += ["StartTime=now", "Duration=120", "Users=root", "Flags=IGNORE_JOBS"]
        result = await self.transport.run(argv, SBATCH_TIMEOUT_S)
        if result.returncode != 0:
            raise RuntimeError(f"reservation not created: {result.stderr.strip()}")

    async def unreserve(self) -> None:
        """Delete the reservation, waiting for its cancelled jobs to end (a reservation in use cannot be deleted)."""
        for _ in range(UNRESERVE_TRIES):
            await self.transport.run(["scontrol", "delete", f"ReservationName={RESERVATION}"], SBATCH_TIMEOUT_S)
            shown = await self.transport.run(["scontrol", "show", "reservation", RESERVATION], SBATCH_TIMEOUT_S)
            if shown.returncode != 0 or RESERVATION not in shown.stdout:
                return
            await asyncio.sleep(1.0)
        raise RuntimeError(f"the reservation {RESERVATION} could not be deleted")

    async def reservation_nodes(self) -> list[str]:
        shown = await self.transport.run(["scontrol", "show", "reservation", RESERVATION], SBATCH_TIMEOUT_S)
        words = [w.split("=", 1)[1] for w in shown.stdout.split() if w.startswith("Nodes=")]
        if shown.returncode != 0 or not words:
            return []
        names = await self.transport.run(["scontrol", "show", "hostnames", words[0]], SBATCH_TIMEOUT_S)
        return names.stdout.split()

    async def cancel(self, jobs: list[int]) -> None:
        if jobs:
            await self.transport.run(["scancel", *map(str, jobs)], SBATCH_TIMEOUT_S)
