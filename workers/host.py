"""Worker process wiring: which role serves which task queue with which workflows and activities.

Roles (each on its own task queue, see docs/architecture.md):
- ``control``: JobRecoveryWorkflow (decisions and timers; no I/O of its own);
- ``scheduler``: Slurm activities (runs where Slurm commands work: a login node, or SSH);
- ``telemetry``: the discovery/telemetry loop and its activities;
- ``all``: everything in one process (the embedded dev stack).

Run: ``python -m workers.main --role all`` or ``lazarus worker --role all``.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from loguru import logger
from temporalio.worker import Worker

from lazarus.config import Settings, load_settings
from lazarus.errors import LazarusError
from lazarus.logging import setup_logging
from lazarus.slurm.client import SlurmClient
from lazarus.temporal_client import connect
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow

ROLES = ("control", "scheduler", "telemetry")


async def run_workers(settings: Settings, roles: list[str], stop: asyncio.Event) -> None:
    client = await connect(settings)
    workers: list[Worker] = []
    tasks: list[asyncio.Task] = []
    slurm = SlurmClient.from_settings(settings.scheduler)
    common = {"graceful_shutdown_timeout": settings.worker.graceful_shutdown}
    if "control" in roles:
        workers.append(Worker(client, task_queue=settings.task_queues.control, workflows=[JobRecoveryWorkflow, NodeLedgerWorkflow],
                              **common))
    if "scheduler" in roles:
        from activities.slurm import SlurmActivities

        acts = SlurmActivities(slurm)
        workers.append(Worker(client, task_queue=settings.task_queues.scheduler, activities=acts.all(),
                              max_concurrent_activities=16, **common))
    if "telemetry" in roles:
        from activities.telemetry import TelemetryActivities
        from lazarus.telemetry.loop import TelemetryLoop

        state_file = settings.discovery.offsets_file or (
            settings.dev.state_dir / "telemetry-offsets.json" if settings.dev.state_dir.exists() else None)
        loop = TelemetryLoop(settings, slurm, client, state_file=state_file)
        from activities.telemetry_prometheus import PrometheusActivities

        prom = PrometheusActivities.from_settings(settings.prometheus)
        workers.append(Worker(client, task_queue=settings.task_queues.telemetry,
                              activities=[TelemetryActivities(loop).job_progress, prom.find_stragglers,
                                          prom.node_health], **common))
        tasks.append(asyncio.create_task(loop.run_forever(stop), name="telemetry-loop"))
    logger.info(f"lazarus worker up: roles={','.join(roles)} cluster={settings.cluster} "
                f"temporal={settings.temporal.address} mode={settings.mode.value}")
    try:
        async with _all(workers):
            await stop.wait()
    finally:
        for task in tasks:
            task.cancel()
        await slurm.close()


class _all:
    """Enter several workers as one async context."""

    def __init__(self, workers: list[Worker]) -> None:
        self.workers = workers

    async def __aenter__(self) -> None:
        for w in self.workers:
            await w.__aenter__()

    async def __aexit__(self, *exc) -> None:
        for w in reversed(self.workers):
            await w.__aexit__(*exc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lazarus-worker")
    parser.add_argument("--role", default="all", choices=[*ROLES, "all"])
    parser.add_argument("--config", default=None)
    args = parser.parse_args(argv)
    try:
        settings = load_settings(args.config)
    except LazarusError as exc:
        print(f"lazarus worker: {exc}", file=sys.stderr)
        return 2
    setup_logging(settings.logging.level, settings.logging.json_output)
    roles = list(ROLES) if args.role == "all" else [args.role]
    return run(settings, roles)


def run(settings: Settings, roles: list[str]) -> int:
    async def _main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await run_workers(settings, roles, stop)

    try:
        asyncio.run(_main())
    except LazarusError as exc:
        print(f"lazarus worker: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
