"""The telemetry role: every replica serves the telemetry lease; only the lease holder runs the loop.

Each telemetry replica polls its task queue for the ``TelemetryLeaseWorkflow`` (so the lease works as long
as one replica runs, whatever the other roles do) and stands by for the lease
(:func:`lazarus.telemetry.leader.lead_when_elected`). For each term it holds, it builds a fresh
:class:`~lazarus.telemetry.loop.TelemetryLoop` from the offsets it was handed and, once the loop's first
cycle has read the jobs, serves ``telemetry_job_progress`` from it: a standby answers no progress query,
so a workflow's question always reaches the loop that reads the job. When the term ends, the loop stops
first, then its activity worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from datetime import timedelta
from typing import Any

from loguru import logger
from temporalio.client import Client
from temporalio.worker import Worker

from activities.health import HealthActivities
from activities.telemetry import TelemetryActivities
from lazarus import metrics
from lazarus.config import Settings
from lazarus.slurm.client import SlurmClient
from lazarus.telemetry.leader import LeaderTerm, Lease, lead_when_elected
from lazarus.telemetry.loop import TelemetryLoop
from workflows.telemetry_lease import TelemetryLeaseWorkflow

# On a clean stop the holder releases the lease (a standby takes over at once); it gets this long for it.
RELEASE_WITHIN_S = 10.0
# The replica that last ran the lease workflow is usually the holder: when it dies, the next update waits
# this long on its sticky queue before another replica's worker picks it up (Temporal's default is 10 s).
LEASE_STICKY_TIMEOUT = timedelta(seconds=2)


@asynccontextmanager
async def telemetry_role(
    settings: Settings, client: Client, slurm: SlurmClient, stop: asyncio.Event, common: dict[str, Any]
) -> AsyncIterator[None]:
    """The lease worker and the stand-by/lead task; on exit the term (if any) is released."""
    lease = Lease(client, settings)

    async def serve(term: LeaderTerm) -> None:
        loop = TelemetryLoop(settings, slurm, client, term=term)
        cycles = asyncio.create_task(loop.run_forever(), name=f"telemetry-loop-{term.epoch}")
        view = None
        if settings.metrics.port:  # the cluster-wide gauges are read only by the holder, where the trackers live
            cluster_view = metrics.ClusterView(settings, client, slurm.nodes, loop.trackers)
            view = asyncio.create_task(cluster_view.run(stop), name=f"metrics-cluster-view-{term.epoch}")
        try:
            await term.first_cycle.wait()
            logger.info(f"telemetry lease: term {term.epoch}: first cycle done; serving progress queries")
            async with Worker(
                client,
                task_queue=settings.task_queues.telemetry,
                activities=[*TelemetryActivities(loop).all(), *HealthActivities(settings).all()],
                **common,
            ):
                await cycles
        finally:
            for task in (cycles, view):
                if task is not None:
                    task.cancel()
                    with suppress(asyncio.CancelledError):
                        await task

    async with Worker(
        client,
        task_queue=settings.task_queues.telemetry,
        workflows=[TelemetryLeaseWorkflow],
        sticky_queue_schedule_to_start_timeout=LEASE_STICKY_TIMEOUT,
        **common,
    ):
        logger.info(f"telemetry replica {lease.holder}: standing by for the lease of cluster {settings.cluster}")
        leading = asyncio.create_task(lead_when_elected(lease, serve, stop), name="telemetry-lease")
        leading.add_done_callback(lambda task: None if task.cancelled() or task.exception() is None else stop.set())
        try:
            yield
        finally:
            stop.set()
            done, _ = await asyncio.wait([leading], timeout=RELEASE_WITHIN_S)
            if not done:
                leading.cancel()
                with suppress(asyncio.CancelledError):
                    await leading
            elif (failure := leading.exception()) is not None:
                raise failure
