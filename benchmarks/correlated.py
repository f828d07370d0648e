"""A correlated failure: 200 watched jobs fail at once on the same 2 nodes, as when their leaf switch dies (issue 11,
item 3).

    .venv/bin/python benchmarks/correlated.py --jobs 200 --json /tmp/correlated.json

The stack is the scale benchmark's (:mod:`benchmarks.scale.harness`: embedded Temporal of its own, every Lazarus
role in act mode, the real ledger and Slurm adapter over the simulated controller). Why simulated: the local test
cluster has 4 nodes and Slurm 22.05 there would need ``OverSubscribe=FORCE:200`` on two of them plus 200 real
trainer processes on 2 cores, which measures the machine, not Lazarus; the simulated controller answers the same
commands in the same formats and records every write Lazarus sends, which is what the invariants read.

``--jobs`` jobs (8 users) run on the switch's two nodes (oversubscribed); ``--spare`` other nodes are healthy. At
once, every job prints an Xid 79 naming both nodes and fails a second later. Slurm lets a requeued job start
``--requeue-delay`` seconds after its requeue (BeginTime, as 22.05 with cred_expire=5). Checked: every job
recovered (its next attempt runs on neither node); no job requeued twice; no node drained twice; drains within the
ledger's budget, and how many drain commands carried them; the time from the failure until the last job runs
again, and that time less the scheduler's delay (target: within 60 s of the scheduler allowing it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.scale.harness import Ports, Stack  # noqa: E402
from benchmarks.scale.measure import percentile  # noqa: E402
from lazarus import hostlists  # noqa: E402
from lazarus.models.ledger import LedgerPolicy  # noqa: E402
from lazarus.models.slurm import JobState  # noqa: E402


def recovered(stack: Stack, bad: set[str]) -> list[int]:
    """Jobs whose next attempt runs on none of the bad nodes."""
    return [
        j.job_id
        for j in stack.cluster.jobs.values()
        if j.restarts >= 1 and j.state is JobState.RUNNING and not set(j.nodes) & bad
    ]


def audit(stack: Stack, bad: set[str], budget: int) -> dict[str, object]:
    """The writes Lazarus sent, against the invariants."""
    commands = stack.cluster.commands
    requeues = Counter(int(c[2]) for c in commands if c[:2] == ["scontrol", "requeuehold"])
    drains = [c for c in commands if c[:2] == ["scontrol", "update"] and "State=DRAIN" in c]
    drained = Counter(name for c in drains for name in hostlists.expand(c[2].removeprefix("NodeName=")))
    now_drained = sorted(n.name for n in stack.cluster.nodes.values() if n.drain)
    return {
        "requeue_commands": sum(requeues.values()),
        "jobs_requeued_twice": sorted(j for j, n in requeues.items() if n > 1),
        "restarts_above_one": sorted(j.job_id for j in stack.cluster.jobs.values() if j.restarts > 1),
        "drain_commands": len(drains),
        "nodes_drained_twice": sorted(n for n, k in drained.items() if k > 1),
        "drained_nodes": now_drained,
        "drain_budget_nodes": budget,
        "drain_budget_respected": len(now_drained) <= budget,
        "drained_outside_the_bad_nodes": sorted(set(now_drained) - bad),
    }


async def run(args: argparse.Namespace) -> dict[str, object]:
    ports = Ports(args.port_base, args.port_base + 1, args.port_base + 2)
    ledger = {"max_drain_fraction": args.max_drain_fraction, "reconcile_interval": 60}
    stack = Stack(
        name=f"correlated-{args.jobs}",
        nodes=2 + args.spare,
        ports=ports,
        requeue_delay_s=args.requeue_delay,
        progress_every_s=args.progress_every,
        ledger=ledger,
    )
    budget = LedgerPolicy(max_drain_fraction=args.max_drain_fraction).max_drained(2 + args.spare)
    async with stack:
        bad_nodes = sorted(stack.cluster.nodes)[:2]
        bad = set(bad_nodes)
        jobs = stack.submit(args.jobs, 2, placement=[bad_nodes] * args.jobs)
        ramp_s = await stack.wait_watched(args.jobs, args.timeout)
        print(f"{args.jobs} workflows after {ramp_s:.0f} s", flush=True)
        await asyncio.sleep(args.warmup)
        failed_at = time.time()
        for job in jobs:
            stack.crash(job, ",".join(bad_nodes))
        deadline = time.monotonic() + args.timeout
        while time.monotonic() < deadline:
            if len(recovered(stack, bad)) == args.jobs:
                break
            await asyncio.sleep(0.5)
        last_running = max((stack.starts[j.job_id][-1] for j in jobs if len(stack.starts[j.job_id]) > 1), default=None)
        await asyncio.sleep(args.settle)  # late duplicates, if any, would show now
        allowed = [j.begin_time.timestamp() for j in jobs if j.begin_time is not None]
        again = [stack.starts[j.job_id][1] - failed_at for j in jobs if len(stack.starts[j.job_id]) > 1]
        after_allowed = [
            stack.starts[j.job_id][1] - j.begin_time.timestamp()
            for j in jobs
            if j.begin_time is not None and len(stack.starts[j.job_id]) > 1
        ]
        statuses = [await stack.status(j.job_id) for j in jobs]
        result: dict[str, object] = {
            "jobs": args.jobs,
            "nodes": 2 + args.spare,
            "bad_nodes": bad_nodes,
            "requeue_delay_s": args.requeue_delay,
            "recovered": len(recovered(stack, bad)),
            "failure_to_last_running_s": round(last_running - failed_at, 2) if last_running else None,
            "failure_to_running_p50_s": round(percentile(again, 50), 2),
            "failure_to_running_p95_s": round(percentile(again, 95), 2),
            "scheduler_allowed_to_last_running_s": round(max(after_allowed), 2) if after_allowed else None,
            "failure_to_last_requeue_allowed_s": round(max(allowed) - failed_at, 2) if allowed else None,
            "advice_per_job": dict(Counter(len(s.advice_history) for s in statuses)),
            "ledger_notes": sorted({n for s in statuses for n in s.ledger_notes})[:5],
            **audit(stack, bad, budget),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--spare", type=int, default=62, help="healthy nodes besides the switch's two")
    parser.add_argument("--requeue-delay", type=float, default=5.0, help="Slurm's BeginTime delay after a requeue")
    parser.add_argument("--max-drain-fraction", type=float, default=0.25, help="the ledger's drain budget")
    parser.add_argument("--progress-every", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=30.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--port-base", type=int, default=62511)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = asyncio.run(run(args))
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    ok = (
        result["recovered"] == args.jobs
        and not result["jobs_requeued_twice"]
        and not result["restarts_above_one"]
        and not result["nodes_drained_twice"]
        and result["drain_budget_respected"]
        and not result["drained_outside_the_bad_nodes"]
    )
    print("VERDICT:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
