"""What one quiet watched job costs the Temporal server, per hour, and what 10,000 would.

    .venv/bin/python benchmarks/quiet_job_cost.py --hours 6

A healthy job printing a progress line every 30 s is watched for ``--hours``
of virtual time (time-skipping test server). The real telemetry tracker reads
each line, keeps the hang clock and decides what to signal (the first progress,
a budget change, then a keep-alive every ``digest_interval``, whatever the
budget), and the workflow's hang watchdog (a backstop while telemetry keeps the
clock) runs throughout; the job must stay ``watching`` (no false hang). The workflow's history is then counted:
workflow tasks and events per job-hour, scaled to 10,000 jobs. The embedded
dev server sustains roughly 100 workflow tasks per second on 2 cores
(docs/design), which is the budget this must stay well under.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from temporalio.api.enums.v1 import EventType  # noqa: E402
from temporalio.contrib.pydantic import pydantic_data_converter  # noqa: E402
from temporalio.testing import WorkflowEnvironment  # noqa: E402

from lazarus.models.policy import Mode, Policy  # noqa: E402
from lazarus.models.slurm import JobSnapshot, JobState  # noqa: E402
from lazarus.telemetry.tracker import JobTracker  # noqa: E402
from tests.workflows.conftest import register_search_attributes  # noqa: E402
from tests.workflows.harness import Running, job_input, send  # noqa: E402

STEP = timedelta(seconds=30)  # a slow-ish training step; faster steps change nothing (telemetry keeps the clock)


async def measure(hours: float, budget: timedelta) -> dict:
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(Path(sys.executable).parent / "temporal-test-server"),
        data_converter=pydantic_data_converter,
    )
    await register_search_attributes(env.client)
    policy = Policy(hang_budget=budget, hang_budget_min=budget)
    tracker = JobTracker(job_id=1, layout_nodes=["node1"], policy=policy)
    now = await env.get_current_time()
    try:
        inp = job_input(Mode.ACT, hang_budget=budget, hang_budget_min=budget)
        async with Running(env.client, inp) as run:
            events = tracker.observe(
                JobSnapshot(job_id=1, state=JobState.RUNNING, nodes=["node1"], start_time=now), now
            )
            signals, step = 0, 0
            end = now + timedelta(hours=hours)
            while now < end:  # the job prints a progress line every STEP; telemetry decides what to send
                step += 1
                tracker.feed("train.out", step, f"LAZARUS step={step} loss=1.0", now)
                events += tracker.digest_events(now, tracker.digest_interval())
                if events:
                    await send(run.handle, *events)
                    signals, events = signals + len(events), []
                await env.sleep(STEP)
                now = await env.get_current_time()
            history = await run.handle.fetch_history()
            status = await run.handle.query("status")
            await run.handle.terminate("benchmark done")
    finally:
        await env.shutdown()
    assert status["state"] == "watching", f"a healthy job must stay watched, got {status['state']}"
    tasks = sum(1 for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    timers = sum(1 for e in history.events if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED)
    fired = sum(1 for e in history.events if e.event_type == EventType.EVENT_TYPE_TIMER_FIRED)
    return {
        "budget": budget,
        "keep_alive": tracker.digest_interval(),
        "hours": hours,
        "events": len(history.events),
        "workflow_tasks": tasks,
        "timers": timers,
        "timers_fired": fired,
        "signals": signals,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hours", type=float, default=6)
    args = parser.parse_args()
    print(
        f"{'hang budget':>12} {'keep-alive':>13} {'signals/job-h':>14} {'tasks/job-h':>12} "
        f"{'events/job-h':>13} {'timers fired':>13} {'10k jobs: tasks/s':>18}"
    )
    for budget in (timedelta(minutes=30), timedelta(minutes=10), timedelta(minutes=2)):
        r = await measure(args.hours, budget)
        per_hour = r["workflow_tasks"] / r["hours"]
        print(
            f"{r['budget']!s:>12} {r['keep_alive']!s:>13} {r['signals'] / r['hours']:14.1f} {per_hour:12.1f} "
            f"{r['events'] / r['hours']:13.1f} {r['timers_fired']:13d} {per_hour * 10_000 / 3600:18.1f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
