"""What watching 1,000 or 10,000 jobs costs, and how fast a crash is still seen under that load (issue 11, item 2).

    .venv/bin/python benchmarks/scale.py --jobs 1000 --steady 600 --crashes 20 --json /tmp/scale-1k.json

The stack (:mod:`benchmarks.scale.harness`): the embedded Temporal server on ports of its own, Lazarus in act mode
(real telemetry loop, detection, job workflows, ledger, Slurm adapter) over the simulated controller: the telemetry
and scheduler roles in this process, the control role in its own (``lazarus worker --role control``, as production
runs roles; ``--one-process``: every role here), and a writer process printing every job's log: a progress line and an INFO line every
``--progress-every`` seconds (10 s), a checkpoint every ``--checkpoint-every`` (30 min, random phase). Jobs run on 2
nodes each, under the default policy (hang budget 30 min, learned from step times, at least 2 min).

Phases: all jobs start at once; the ramp lasts until every job's workflow exists; ``--warmup`` seconds let the
first digests pass; then a steady window of ``--steady`` seconds is measured, during which ``--crashes`` jobs,
evenly spread over its first two thirds, print an Xid 79 and fail. Reported: workflow tasks, history events and
bytes per job (from ``--sample`` quiet jobs' histories inside the window), where continue-as-new triggers, worker
CPU and RSS (this process, less the simulated controller's own CPU, and the control process) and server CPU and RSS, telemetry cycle time, and crash
detection (failing line written -> anomaly recorded in the workflow), each crashed job's recovery checked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from temporalio.service import RPCError

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.scale.harness import CLUSTER, Ports, Stack, worker_pid  # noqa: E402
from benchmarks.scale.measure import (  # noqa: E402
    CAN_BYTES,
    CAN_EVENTS,
    HistoryWindow,
    cycle_p95_bound,
    cycles,
    history_window,
    percentile,
    proc_sample,
)

NODES_PER_JOB = 2


async def detection(stack: Stack, job_id: int, timeout: float) -> dict[str, object]:
    """Wait for the crashed job's anomaly and its next attempt running; the detection latency."""
    deadline = time.monotonic() + timeout
    seen: dict[str, object] = {"job": job_id}
    while time.monotonic() < deadline:
        try:
            status = await stack.status(job_id)
        except RPCError:  # an overloaded server refuses a query now and then: ask again
            await asyncio.sleep(2)
            continue
        first = status.attempts[0] if status.attempts else None
        crashed_at = stack.crashes.get(job_id)
        if first and first.anomaly and first.anomaly.recorded_at and crashed_at:
            seen["detection_s"] = first.anomaly.recorded_at.timestamp() - crashed_at
            if len(status.attempts) > 1 and len(stack.starts.get(job_id, [])) > 1:
                return {**seen, "running_again_s": stack.starts[job_id][1] - crashed_at}
            advice = status.advice
            seen["advice"] = f"{advice.status.value}: {advice.comment or advice.reason}"[:300] if advice else None
        await asyncio.sleep(1)
    return {
        **seen,
        "error": "detected but not running again within the timeout" if "detection_s" in seen else "not detected",
    }


async def sampled_window(stack: Stack, job_id: int, t0: datetime, t1: datetime) -> HistoryWindow | None:
    """One sampled job's history inside the window; None when the server would not give it (twice)."""
    assert stack.client is not None
    for _ in range(2):
        try:
            return await history_window(stack.client, CLUSTER, job_id, t0, t1)
        except RPCError:
            await asyncio.sleep(2)
    return None


async def run(args: argparse.Namespace) -> dict[str, object]:
    rng = random.Random(args.seed)
    ports = Ports(args.port_base, args.port_base + 1, args.port_base + 2)
    stack = Stack(
        name=f"scale-{args.jobs}",
        nodes=args.jobs * NODES_PER_JOB + 64,
        ports=ports,
        progress_every_s=args.progress_every,
        checkpoint_every_s=args.checkpoint_every,
        control_process=not args.one_process,
    )
    async with stack:
        jobs = stack.submit(args.jobs, NODES_PER_JOB)
        ramp_s = await stack.wait_watched(args.jobs, args.ramp_timeout)
        print(f"{args.jobs} workflows after {ramp_s:.0f} s; warming up {args.warmup:g} s", flush=True)
        await asyncio.sleep(args.warmup)
        victims = rng.sample(jobs, min(args.crashes, len(jobs)))
        quiet = [j for j in jobs if j not in victims]
        sample = rng.sample(quiet, min(args.sample, len(quiet)))
        t0, mono0 = datetime.now(UTC), time.monotonic()
        w0, s0, c0, busy0 = proc_sample(worker_pid()), proc_sample(stack.server_pid), cycles(), stack.cluster.busy_s
        wr0 = proc_sample(stack.writer_pid)
        ctl0 = proc_sample(stack.control_pid) if stack.control_pid else None
        gap = args.steady * 2 / 3 / max(1, len(victims))
        waits = []
        for victim in victims:
            await asyncio.sleep(gap)
            stack.crash(victim, victim.nodes[0])
            waits.append(asyncio.create_task(detection(stack, victim.job_id, args.steady + 90)))
        await asyncio.sleep(max(0.0, args.steady - (time.monotonic() - mono0)))
        t1, window_s = datetime.now(UTC), time.monotonic() - mono0
        w1, s1, c1, busy1 = proc_sample(worker_pid()), proc_sample(stack.server_pid), cycles(), stack.cluster.busy_s
        wr1 = proc_sample(stack.writer_pid)
        ctl1 = proc_sample(stack.control_pid) if stack.control_pid else None
        crashes = list(await asyncio.gather(*waits))
        windows = [w for j in sample if (w := await sampled_window(stack, j.job_id, t0, t1)) is not None]
    hours = window_s / 3600
    n = max(1, len(windows))
    tasks_h = sum(w.workflow_tasks for w in windows) / n / hours
    events_h = sum(w.events for w in windows) / n / hours
    bytes_h = sum(w.bytes for w in windows) / n / hours
    detected = [float(c["detection_s"]) for c in crashes if "detection_s" in c]  # type: ignore[arg-type]
    again = [float(c["running_again_s"]) for c in crashes if "running_again_s" in c]  # type: ignore[arg-type]
    worker_cpu = (w1.cpu_s - w0.cpu_s) - (busy1 - busy0)
    control_cpu = ctl1.cpu_s - ctl0.cpu_s if ctl0 and ctl1 else 0.0
    cycle_n = c1.count - c0.count
    return {
        "jobs": args.jobs,
        "date": t0.isoformat(timespec="seconds"),
        "ramp_s": round(ramp_s, 1),
        "window_s": round(window_s, 1),
        "sampled_jobs": len(windows),
        "workflow_tasks_per_job_hour": round(tasks_h, 2),
        "workflow_tasks_per_job_10min": round(tasks_h / 6, 3),
        "history_events_per_job_hour": round(events_h, 2),
        "history_bytes_per_job_day": round(bytes_h * 24),
        "continue_as_new_after_hours": round(min(CAN_EVENTS / events_h, CAN_BYTES / bytes_h), 1) if events_h else None,
        "server_workflow_tasks_per_s": round(tasks_h * args.jobs / 3600, 1),
        "worker_cpu_cores": round((worker_cpu + control_cpu) / window_s, 3),
        "telemetry_worker_cpu_cores": round(worker_cpu / window_s, 3),
        "control_worker_cpu_cores": round(control_cpu / window_s, 3) if ctl1 else None,
        "simulated_slurm_cpu_cores": round((busy1 - busy0) / window_s, 3),
        "writer_cpu_cores": round((wr1.cpu_s - wr0.cpu_s) / window_s, 3),
        "server_cpu_cores": round((s1.cpu_s - s0.cpu_s) / window_s, 3),
        "worker_rss_mib": round(w1.rss_mib),
        "worker_peak_rss_mib": round(w1.peak_rss_mib),
        "control_rss_mib": round(ctl1.rss_mib) if ctl1 else None,
        "control_peak_rss_mib": round(ctl1.peak_rss_mib) if ctl1 else None,
        "server_rss_mib": round(s1.rss_mib),
        "server_peak_rss_mib": round(s1.peak_rss_mib),
        "telemetry_cycles": int(cycle_n),
        "telemetry_cycle_mean_s": round((c1.seconds - c0.seconds) / cycle_n, 3) if cycle_n else None,
        "telemetry_cycle_p95_at_most_s": cycle_p95_bound(c0, c1) if cycle_n else None,
        "crashes": crashes,
        "crash_detection_p50_s": round(percentile(detected, 50), 2),
        "crash_detection_p95_s": round(percentile(detected, 95), 2),
        "crash_detection_max_s": round(max(detected), 2) if detected else None,
        "crash_running_again_p95_s": round(percentile(again, 95), 2),
        "crashes_detected": f"{len(detected)}/{len(crashes)}",
        "crashes_recovered": f"{len(again)}/{len(crashes)}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--steady", type=float, default=600.0, help="seconds of the measured steady window")
    parser.add_argument("--warmup", type=float, default=120.0, help="seconds between the ramp and the window")
    parser.add_argument("--crashes", type=int, default=20, help="jobs failing (Xid 79) during the window")
    parser.add_argument("--sample", type=int, default=100, help="quiet jobs whose histories are counted")
    parser.add_argument("--progress-every", type=float, default=10.0)
    parser.add_argument("--checkpoint-every", type=float, default=1800.0)
    parser.add_argument("--ramp-timeout", type=float, default=3600.0)
    parser.add_argument("--port-base", type=int, default=62501)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--one-process", action="store_true", help="every Lazarus role in this process (the control role too)"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = asyncio.run(run(args))
    summary = {k: v for k, v in result.items() if k != "crashes"}
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    failed = [c for c in result["crashes"] if "detection_s" not in c]  # type: ignore[union-attr]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
