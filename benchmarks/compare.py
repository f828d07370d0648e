"""Lazarus vs Slurm alone, on the same faults, in one run on the real local cluster.

    .venv/bin/python benchmarks/compare.py --crash 30 --node-fail 30 --hang 10 --straggler 10 --json /tmp/compare.json

Runs against its own embedded stack (cluster ``lzbench`` under /var/tmp/lazarus-bench, ports 63001-64233; started
if needed, stopped at the end unless ``--keep-stack``): Slurm with 4 nodes (SlurmdTimeout=20, RequeueExit=42), a
Temporal dev server, one node agent per node, a Prometheus (port 63090) scraping every rank's compute-only throughput
and the node agents, and three Lazarus workers in act mode reading it. Each run is one 2-node job with
``--requeue``; the arms alternate run by run:

- **lazarus**: the job opts in (act mode, policy ``bench``); Lazarus detects, decides, requeues excluding;
- **slurm**: the job does not opt in; its batch script exits with RequeueExit when its step failed, and Slurm
  requeues a job whose node it marks DOWN (node health by heartbeat: SlurmdTimeout).

Faults (benchmarks/comparison/faults.py): crash with hardware evidence, node failure (slurmd, agent and the job's
processes on the node killed -9, the surviving rank blocked), hang, straggler (one rank computes 2x slower).
Measures (measure.py) with p50 / p95 / max per fault and arm, as a table and as JSON; also what Slurm's production
SlurmdTimeout=300 implies for node failures (computed, not waited for).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from temporalio.client import Client  # noqa: E402

from benchmarks.comparison.entry import report, run_benchmark, run_meta  # noqa: E402
from benchmarks.comparison.faults import Arm, Fault, restore_node  # noqa: E402
from benchmarks.comparison.measure import Run, Runner  # noqa: E402
from benchmarks.comparison.report import as_json, summarize, table  # noqa: E402
from benchmarks.comparison.stack import BenchStack  # noqa: E402
from lazarus.devstack.node_agents import fake_gpus  # noqa: E402

SETTLE_S = 90.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--crash", type=int, default=30, help="crash runs per arm")
    p.add_argument("--node-fail", type=int, default=30, help="node-failure runs per arm")
    p.add_argument("--hang", type=int, default=10, help="hang runs per arm")
    p.add_argument("--straggler", type=int, default=10, help="straggler runs per arm")
    p.add_argument("--window", type=float, default=75.0, help="seconds after a fault before a run counts as lost")
    p.add_argument(
        "--act-on-stragglers",
        action="store_true",
        help="the bench policy restarts a job excluding its straggler node (default: advice only, as policies are)",
    )
    p.add_argument("--json", type=Path, help="write every run and the summary here")
    p.add_argument("--keep-stack", action="store_true", help="leave the stack running at the end")
    return p.parse_args(argv)


def restore(stack: BenchStack, run: Run) -> None:
    """Every node back in service, healthy, idle; the failed node's slurmd and agent started again."""
    for node in stack.nodes():
        restore_node(stack, node)
        if run.fault == Fault.CRASH and node == run.bad_node:  # the agent forgets the Xid only when restarted
            fake_gpus(stack.layout, node).repair(stack.dev.gpus_per_node)
            stack.agent(node).stop(stack.layout)
            stack.agent(node).ensure(stack.layout)
    deadline = time.monotonic() + SETTLE_S
    env = stack.slurm_env()
    while time.monotonic() < deadline:
        states = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%N %t"], env=env, capture_output=True, text=True, check=False
        ).stdout.split("\n")
        pairs = [s.split() for s in states if s.strip()]
        for node, state in pairs:
            if state.startswith(("drain", "drng", "down")):
                subprocess.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"], env=env, check=False)
        if pairs and all(state == "idle" for _, state in pairs):
            return
        time.sleep(1.0)
    raise RuntimeError(f"the nodes did not come back idle within {SETTLE_S:.0f} s: {pairs}")


async def compare(args: argparse.Namespace, say=print) -> dict:
    stack = BenchStack(run_id=datetime.now(UTC).strftime("%m%d%H%M%S"), act_on_stragglers=args.act_on_stragglers)
    say("starting the lzbench stack ...")
    stack.up()
    stack.start_workers()
    runs: list[Run] = []
    try:
        stack.wait_workers_polling()
        client = await Client.connect(f"127.0.0.1:{stack.dev.temporal_port}")
        runner = Runner(stack, client, args.window)
        plan = [(Fault.CRASH, args.crash), (Fault.NODE_FAIL, args.node_fail), (Fault.HANG, args.hang),
                (Fault.STRAGGLER, args.straggler)]  # fmt: skip
        for fault, count in plan:
            for i in range(count):
                for arm in (Arm.LAZARUS, Arm.SLURM):
                    run = await runner.run(arm, fault)
                    runs.append(run)
                    say(
                        f"{fault.value} {i + 1}/{count} {arm.value}: job {run.job_id} "
                        f"anomaly {run.anomaly_s} elsewhere {run.running_elsewhere_s} {'; '.join(run.notes)}"
                    )
                    await asyncio.to_thread(restore, stack, run)
    finally:
        if not args.keep_stack:
            stack.down()
        else:
            stack.stop_workers()
    summary = summarize(runs)
    return report(say, table(summary), as_json(runs, summary, run_meta("benchmarks/compare.py")), args.json)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_benchmark(lambda say: compare(args, say=say))


if __name__ == "__main__":
    sys.exit(main())
