"""The worker host process: which role serves which task queue with which workflows and activities.

Roles (each on its own task queue, see docs/architecture.md):
- ``control``: JobRecoveryWorkflow and NodeLedgerWorkflow (decisions and timers; no I/O of its own);
- ``scheduler``: the scheduler activities (runs where Slurm commands work: a login node, or SSH), the
  read of the cluster-wide mode that precedes every unapproved action, and the notify activity (posts
  notices to the configured webhooks);
- ``telemetry``: the discovery/telemetry loop and its activities (progress, node health), run by the one replica holding the
  cluster's telemetry lease (every replica serves the lease workflow; see workers/telemetry.py);
- ``all``: everything in one process (the embedded dev stack).

The roles start one after the other on one :class:`contextlib.AsyncExitStack`.
If a role fails to start, or its worker later stops with a fatal error (a
namespace that does not exist, say), the stack shuts down every role already
started and the process exits with one message naming the role.

Run: ``python -m workers.host --role all`` or ``lazarus worker --role all``.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from types import TracebackType
from typing import Any

from loguru import logger
from temporalio.client import Client
from temporalio.worker import Worker

from activities.health import HealthActivities
from activities.ledger import LedgerActivities
from activities.notify import NotifyActivities
from activities.scheduler import SlurmActivities
from activities.telemetry import TelemetryActivities
from lazarus import metrics
from lazarus.config import Settings, load_settings
from lazarus.errors import LazarusError
from lazarus.logging import setup_logging
from lazarus.slurm.client import SlurmClient
from lazarus.temporal_client import connect
from workers.queues import check_task_queues
from workers.telemetry import telemetry_role
from workflows.callers import CallerInterceptor
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow

ROLES = ("control", "scheduler", "telemetry")
# every activity a worker registers comes from these
ACTIVITY_CLASSES = (SlurmActivities, LedgerActivities, TelemetryActivities, HealthActivities, NotifyActivities)

RoleStart = Callable[[], AbstractAsyncContextManager[Any]]


class WorkerStartError(LazarusError):
    """A role's worker could not start, or stopped with a fatal error."""


async def run_workers(
    settings: Settings, roles: list[str], stop: asyncio.Event, slurm: SlurmClient | None = None
) -> None:
    """Start the workers of ``roles``, serve until ``stop`` is set, then shut every one of them down.

    ``slurm``: the Slurm client to use instead of the one the settings ask for (benchmarks hand in one over
    :class:`lazarus.slurm.simulated.SimulatedTransport`); the service never passes it.
    """
    client = await connect(settings, runtime=metrics.temporal_runtime(settings.metrics))
    await check_task_queues(client, settings)
    async with AsyncExitStack() as stack:
        endpoint = metrics.serve(settings, roles)
        if endpoint is not None:
            stack.callback(endpoint.close)
        slurm = slurm or SlurmClient.from_settings(settings.scheduler)
        stack.push_async_callback(slurm.close)
        starts = _role_starts(settings, client, slurm, stop)
        await start_roles(stack, {role: starts[role] for role in roles})
        logger.info(
            f"lazarus worker up: roles={','.join(roles)} cluster={settings.cluster} "
            f"temporal={settings.temporal.address} mode={settings.mode.value}"
        )
        await stop.wait()


async def start_roles(stack: AsyncExitStack, starts: Mapping[str, RoleStart]) -> None:
    """Start each role in order on ``stack``; a failure leaves the already started ones to the stack's unwinding."""
    for role, start in starts.items():
        await stack.enter_async_context(_Role(role, start))


class _Role:
    """One role's worker, with its failures (at start or a fatal one later) named after the role."""

    def __init__(self, role: str, start: RoleStart) -> None:
        self.role, self.start = role, start
        self.running: AbstractAsyncContextManager[Any] | None = None

    async def __aenter__(self) -> None:
        try:
            self.running = self.start()
            await self.running.__aenter__()
        except Exception as exc:
            raise WorkerStartError(f"the {self.role} worker failed to start: {exc}") from exc

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self.running is not None
        try:
            return await self.running.__aexit__(kind, exc, tb)
        except Exception as failure:
            if failure is exc:
                raise
            raise WorkerStartError(f"the {self.role} worker stopped: {failure}") from failure


def _role_starts(settings: Settings, client: Client, slurm: SlurmClient, stop: asyncio.Event) -> dict[str, RoleStart]:
    """How each role starts; nothing is built until its turn comes."""
    common: dict[str, Any] = {"graceful_shutdown_timeout": settings.worker.graceful_shutdown}
    queues = settings.task_queues
    return {
        "control": lambda: Worker(
            client,
            task_queue=queues.control,
            workflows=[JobRecoveryWorkflow, NodeLedgerWorkflow],
            interceptors=[CallerInterceptor()],  # the caller of each signal and update (authorization)
            **common,
        ),
        "scheduler": lambda: Worker(
            client,
            task_queue=queues.scheduler,
            activities=[
                *SlurmActivities(slurm).all(),
                *LedgerActivities(client).all(),
                *NotifyActivities(settings).all(),
            ],
            max_concurrent_activities=16,
            **common,
        ),
        "telemetry": lambda: telemetry_role(settings, client, slurm, stop, common),
    }


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
