"""Scheduler activities: the scheduler worker's face of :class:`lazarus.slurm.client.SlurmClient`.

Activity names are stable strings (workflows call them by name, and changing
one would break running workflow histories). Each activity takes one pydantic
model or primitive so fields can be added later with defaults. Only what a
workflow calls is an activity (tests/workers hold the two name sets equal).

Errors are translated here, once: a typed :class:`SlurmError` becomes an
``ApplicationError`` whose ``type`` is the error's name without the ``Error``
suffix (``UnknownJob``, ``ControllerUnreachable``, ...) and whose
``non_retryable`` flag is the error's own, so Temporal stops at once on a
permanent failure and keeps retrying a transient one (slurmctld restarting).
The names are listed in :mod:`workflows.options` for retry policies.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from lazarus.models.slurm import (
    CancelRequest,
    CancelResult,
    JobActionResult,
    LiftRequest,
    LiftResult,
    NodeAction,
    NodeActionResult,
    NodeCensus,
    NodeCensusRequest,
    NodeState,
    ReleaseRequest,
    RestartRequest,
    RestartResult,
)
from lazarus.models.spares import RefillRequest, RefillResult
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import SlurmError

P = ParamSpec("P")
R = TypeVar("R")


def error_type(exc: SlurmError) -> str:
    """The ``ApplicationError.type`` for a Slurm error: ``UnknownJobError`` → ``UnknownJob``."""
    name = type(exc).__name__
    return name.removesuffix("Error") or name


def _translated(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Raise typed Slurm errors as ApplicationErrors with the right retryability."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except SlurmError as exc:
            raise ApplicationError(str(exc), type=error_type(exc), non_retryable=not exc.retryable) from exc

    return wrapper


def _heartbeat(detail: str) -> None:
    activity.heartbeat(detail)


class SlurmActivities:
    """Activities bound to one client (one transport: local or SSH)."""

    def __init__(self, client: SlurmClient) -> None:
        self.client = client

    def all(self) -> list[Callable[..., Any]]:
        """Every scheduler activity, for ``Worker(activities=...)``."""
        return [
            self.list_nodes,
            self.node_census,
            self.restart_excluding,
            self.cancel_attempt,
            self.release_job,
            self.release_lazarus_hold,
            self.lift_expedite,
            self.drain_nodes,
            self.resume_nodes,
            self.refill_reservation,
        ]

    @activity.defn(name="slurm_list_nodes")
    @_translated
    async def list_nodes(self) -> list[NodeState]:
        return await self.client.nodes()

    @activity.defn(name="slurm_node_census")
    @_translated
    async def node_census(self, request: NodeCensusRequest) -> NodeCensus:
        """How many nodes, how many drained, and the states of the requested ones: the node ledger's read,
        sized by its records rather than by the cluster."""
        return NodeCensus.of(await self.client.nodes(), request.names)

    @activity.defn(name="slurm_restart_excluding")
    @_translated
    async def restart_excluding(self, request: RestartRequest) -> RestartResult:
        """Requeue-hold, exclude, release, verify; heartbeats while it waits for Slurm."""
        return await self.client.restart_excluding(request, heartbeat=_heartbeat)

    @activity.defn(name="slurm_cancel_attempt")
    @_translated
    async def cancel_attempt(self, request: CancelRequest) -> CancelResult:
        """Stop means stop: cancel the attempt a stop was decided for while it holds its allocation; verified."""
        return await self.client.cancel_attempt(request, heartbeat=_heartbeat)

    @activity.defn(name="slurm_release_job")
    @_translated
    async def release_job(self, job_id: int) -> JobActionResult:
        """Release any hold (workflows started before ``slurm_release_lazarus_hold`` existed still call it)."""
        return await self.client.release(job_id, heartbeat=_heartbeat)

    @activity.defn(name="slurm_release_lazarus_hold")
    @_translated
    async def release_lazarus_hold(self, request: ReleaseRequest) -> JobActionResult:
        """Fail-open: release only a hold Lazarus placed on the attempt it was restarting (never a user's)."""
        return await self.client.release_lazarus_hold(request, heartbeat=_heartbeat)

    @activity.defn(name="slurm_lift_expedite")
    @_translated
    async def lift_expedite(self, request: LiftRequest) -> LiftResult:
        """Set an expedited attempt's priority back once it runs; a job on another attempt or priority is left."""
        return await self.client.lift_expedite(request, heartbeat=_heartbeat)

    @activity.defn(name="slurm_drain_nodes")
    @_translated
    async def drain_nodes(self, action: NodeAction) -> NodeActionResult:
        return await self.client.drain(action, heartbeat=_heartbeat)

    @activity.defn(name="slurm_resume_nodes")
    @_translated
    async def resume_nodes(self, action: NodeAction) -> NodeActionResult:
        return await self.client.resume(action, heartbeat=_heartbeat)

    @activity.defn(name="slurm_refill_reservation")
    @_translated
    async def refill_reservation(self, request: RefillRequest) -> RefillResult:
        """A spare pool kept healthy: untrusted members of its reservation swapped for healthy idle nodes."""
        return await self.client.refill_reservation(request, heartbeat=_heartbeat)
