"""What one steady telemetry cycle costs at 1,000 to 10,000 watched jobs, without Temporal (issue 11, item 2).

    .venv/bin/python benchmarks/telemetry_cycle.py --jobs 1000 2000 5000 10000 [--profile 10000]

The real loop (:class:`lazarus.telemetry.loop.TelemetryLoop`: ``squeue --json`` parse, log reads, trackers,
digests) over the simulated controller, with a Temporal stand-in that answers at once, so only the loop's own cost
is measured. Each job has one log; after a first cycle (discovery) and a second, a tenth of the logs grow by a
progress line and an INFO line (as with a line every 10 s and a 1 s cycle) and the next cycles are timed. Reported
per size: the steady cycle's median seconds, and how much of it the simulated controller's own ``squeue`` took.
``--profile N``: a cProfile of one steady cycle at N jobs (the 30 costliest functions by own time).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lazarus.config import Settings  # noqa: E402
from lazarus.logging import setup_logging  # noqa: E402
from lazarus.models.policy import Mode  # noqa: E402
from lazarus.slurm.client import SlurmClient  # noqa: E402
from lazarus.slurm.simulated import SimulatedCluster, SimulatedTransport, current_user  # noqa: E402
from lazarus.telemetry.loop import TelemetryLoop  # noqa: E402

CYCLES = 5


class InstantTemporal:
    """Starts, signals and reads of the ledger's mode that succeed at once."""

    async def start_workflow(self, *args: Any, **kwargs: Any) -> None:
        return None

    def get_workflow_handle(self, workflow_id: str) -> InstantTemporal:
        return self

    async def describe(self, *args: Any, **kwargs: Any) -> InstantTemporal:
        return self

    async def memo(self) -> dict[str, Any]:
        return {"cluster_mode": {"mode": None, "set_by": None}}

    async def signal(self, *args: Any, **kwargs: Any) -> None:
        return None


def loop_over(root: Path, jobs: int) -> tuple[TelemetryLoop, SimulatedCluster, list[Path]]:
    cluster = SimulatedCluster([f"sim{i:05d}" for i in range(1, 2 * jobs + 1)])
    user, uid = current_user()
    nodes, logs = sorted(cluster.nodes), []
    for i in range(jobs):
        log = root / f"job-{i}.out"
        log.write_text("LAZARUS step=1 loss=1.0\n")
        job = cluster.submit(f"train-{i}", str(log), 2, user=user, user_id=uid, comment=json.dumps({"lazarus": {}}))
        cluster.start(job, nodes[2 * i : 2 * i + 2])
        logs.append(log)
    settings = Settings(mode=Mode.ACT, discovery={"log_roots": [str(root)]})  # type: ignore[arg-type]
    client = InstantTemporal()
    return TelemetryLoop(settings, SlurmClient(SimulatedTransport(cluster)), client), cluster, logs  # type: ignore[arg-type]


def grow(logs: list[Path], step: int, rng: random.Random) -> None:
    for log in rng.sample(logs, len(logs) // 10):
        with log.open("a") as out:
            out.write(f"LAZARUS step={step} loss=1.0\nINFO iteration {step} done\n")


async def measure(jobs: int, profile: bool) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="lazarus-cycle-"))
    try:
        loop, cluster, logs = loop_over(root, jobs)
        rng = random.Random(1)
        started = time.perf_counter()
        await loop.cycle()
        first = time.perf_counter() - started
        await loop.cycle()
        times, squeue = [], []
        for step in range(2, 2 + CYCLES):
            grow(logs, step, rng)
            busy, started = cluster.busy_s, time.perf_counter()
            profiler = cProfile.Profile() if profile and step == 2 else None
            if profiler:
                profiler.enable()
            await loop.cycle()
            if profiler:
                profiler.disable()
                pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
            times.append(time.perf_counter() - started)
            squeue.append(cluster.busy_s - busy)
        loop.reads.close()
        return {
            "jobs": jobs,
            "first_cycle_s": round(first, 2),
            "steady_cycle_s": round(statistics.median(times), 3),
            "of_which_simulated_squeue_s": round(statistics.median(squeue), 3),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--profile", type=int, default=None, help="profile one steady cycle at this many jobs")
    args = parser.parse_args(argv)
    setup_logging("WARNING")
    for jobs in args.jobs:
        print(json.dumps(asyncio.run(measure(jobs, jobs == args.profile))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
