"""Fault → training progress restored on a full cluster: Lazarus with spares, without, and Slurm alone.

    .venv/bin/python benchmarks/restore.py --runs 5 --json /tmp/restore.json

Runs against its own embedded stack (cluster ``lzrestore`` under /var/tmp/lazarus-restore, ports 62601-62819; started
if needed, stopped at the end unless ``--keep-stack``): the comparison's stack (benchmarks/compare.py: Slurm with 4
nodes, RequeueExit=42, a Temporal dev server, one node agent per node, three Lazarus workers in act mode) with a
spare-pool policy and an expedite policy. Every run injects the comparison's crash (Xid 79 on rank 1's node of a
2-node training job, seen by the node's agent) with every node busy; the arms alternate run by run:

- **spares**: the job runs in a reservation of 3 nodes (2 + 1 spare) its policy names; the 4th node runs a filler
  job that ends 2 x ``--filler-every`` after the fault (when the pool can be refilled);
- **expedite**: no reservation; the 2 other nodes run fillers that end ``--filler-every`` and 2 x ``--filler-every``
  after the fault, ``--pending`` one-node jobs submitted before the fault wait; the policy expedites the restart;
- **plain**: the same cluster, expedite off: the restart waits its turn;
- **slurm**: the same cluster, no opt-in: the script exits with RequeueExit and Slurm requeues it.

Measures (benchmarks/restoration/measure.py), from the Xid line's timestamp: requeued, running, progress restored
(first progress line of the next attempt), completed; steps lost; whether the next attempt ran on the bad node;
for spares, the pool refilled. Lazarus arms from the workflow's milestones, Slurm alone from squeue and its output.
p50 / p95 / max per arm, as a table and as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from temporalio.client import Client  # noqa: E402

from benchmarks.compare import restore  # noqa: E402
from benchmarks.comparison.entry import report, run_benchmark, run_meta  # noqa: E402
from benchmarks.restoration.measure import Run, Runner  # noqa: E402
from benchmarks.restoration.report import as_json, summarize, table  # noqa: E402
from benchmarks.restoration.stack import RestoreStack  # noqa: E402
from benchmarks.restoration.workload import Arm, Load, Workload  # noqa: E402
from lazarus.slurm.transport import LocalTransport  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5, help="runs per arm")
    p.add_argument("--arms", default=",".join(Arm), help=f"comma-separated arms (default: all of {', '.join(Arm)})")
    p.add_argument(
        "--filler-every", type=float, default=15.0, help="seconds between filler jobs' ends, after the fault"
    )
    p.add_argument("--pending", type=int, default=2, help="one-node jobs waiting for nodes, submitted before the fault")
    p.add_argument("--pending-s", type=float, default=20.0, help="seconds each waiting job runs once started")
    p.add_argument("--window", type=float, default=150.0, help="seconds after the fault before a run counts as lost")
    p.add_argument("--json", type=Path, help="write every run and the summary here")
    p.add_argument("--keep-stack", action="store_true", help="leave the stack running at the end")
    return p.parse_args(argv)


def resume_in_ledger(stack: RestoreStack, node: str) -> None:
    """An operator's resume of the bad node: the ledger no longer distrusts it (nor fills a pool around it)."""
    env = dict(os.environ, LAZARUS_CONFIG=str(stack.config_path), SLURM_CONF=str(stack.slurm_conf))
    argv = [sys.executable, "-m", "lazarus.cli.main", "nodes", "resume", node, "--comment", "restore benchmark"]
    subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=90, check=False)


async def reset(stack: RestoreStack, workload: Workload, run: Run) -> None:
    """Every job of the run gone, the reservation deleted, every node idle and healthy, the ledger's slate clean."""
    await workload.cancel(run.jobs)
    await workload.unreserve()
    await asyncio.to_thread(restore, stack, run)  # type: ignore[arg-type]  # it reads fault and bad_node
    if run.bad_node:
        await asyncio.to_thread(resume_in_ledger, stack, run.bad_node)


async def bench(args: argparse.Namespace, say=print) -> dict:
    arms = [Arm(a) for a in args.arms.split(",") if a]
    stack = RestoreStack(run_id=datetime.now(UTC).strftime("%m%d%H%M%S"))
    say("starting the lzrestore stack ...")
    stack.up()
    stack.start_workers()
    runs: list[Run] = []
    try:
        stack.wait_workers_polling()
        client = await Client.connect(f"127.0.0.1:{stack.dev.temporal_port}")
        workload = Workload(
            stack, LocalTransport(stack.slurm_conf), Load(args.filler_every, args.pending, args.pending_s)
        )
        await workload.unreserve()  # one an interrupted run left
        runner = Runner(stack, client, workload, args.window)
        for i in range(args.runs):
            for arm in arms:
                run = await runner.run(arm)
                runs.append(run)
                say(
                    f"{i + 1}/{args.runs} {arm.value}: job {run.job_id} bad {run.bad_node} -> {run.next_nodes} "
                    f"requeued {run.requeued_s} running {run.running_s} progress {run.progress_restored_s} "
                    f"completed {run.completed_s} refilled {run.refilled_s} fillers {run.fillers_end_s} "
                    f"waiting started {run.pending_start_s} {'; '.join(run.notes)}"
                )
                await reset(stack, workload, run)
    finally:
        if not args.keep_stack:
            stack.down()
        else:
            stack.stop_workers()
    summary = summarize(runs)
    return report(
        say,
        table(summary),
        as_json(
            runs,
            summary,
            run_meta(
                "benchmarks/restore.py",
                load={"filler_every_s": args.filler_every, "pending": args.pending, "pending_s": args.pending_s},
            ),
        ),
        args.json,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_benchmark(lambda say: bench(args, say=say))


if __name__ == "__main__":
    sys.exit(main())
