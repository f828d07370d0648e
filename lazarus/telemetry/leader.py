"""Only the holder of the cluster's telemetry lease runs the telemetry loop: several replicas, one active.

Every telemetry replica runs :func:`lead_when_elected`. It asks the lease workflow
(``TelemetryLeaseWorkflow``, see workflows/telemetry_lease.py) for the lease every ``renew_interval``;
once granted a term, it runs the loop (``serve``) and renews the term every ``renew_interval``, sending
the log offsets the loop has delivered (:mod:`lazarus.telemetry.handover`). A standby is granted a term
only after the holder's has expired (``ttl`` after its last renewal), so failover takes at most
``ttl + renew_interval`` plus the new loop's first cycle.

No split brain: the holder keeps its own deadline, ``ttl - safety_margin`` after it *sent* the request
that was granted (the workflow's expiry is ``ttl`` after it *received* it, so later). Past that deadline
without a renewal it stops the loop, and :meth:`LeaderTerm.check`, called before every signal, refuses
to send one. A refused renewal (the term is over) stops it at once. On a clean stop it releases the
lease, so a standby takes over without waiting for the term to expire.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress

from loguru import logger
from temporalio.client import Client, RPCTimeoutOrCancelledError, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from lazarus.config import Settings, TelemetryLeaseSettings
from lazarus.errors import LazarusError
from lazarus.models import names
from lazarus.models.lease import LeaseGrant, LeaseRequest, LeaseState, LogOffset
from lazarus.telemetry.handover import Handover, progress_marks, restored_state
from lazarus.telemetry.offsets import OffsetStore
from lazarus.telemetry.tracker import JobTracker


class LeaseLostError(LazarusError):
    """This replica's term of the telemetry lease is over (or may be): it must not signal any workflow."""


def replica_name() -> str:
    """This replica's holder name: host, process and a nonce (a restarted process is another holder)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Lease:
    """This replica's side of the lease workflow: one update per call, and the term's deadline by its own clock."""

    def __init__(
        self, client: Client, settings: Settings, holder: str | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.client, self.clock = client, clock
        self.cluster, self.queue = settings.cluster, settings.task_queues.telemetry
        self.timings: TelemetryLeaseSettings = settings.discovery.lease
        self.holder = holder or replica_name()
        self.handle = client.get_workflow_handle(names.telemetry_lease_id(self.cluster))
        self.epoch: int | None = None
        self.deadline = float("-inf")
        self._started = False

    def held(self) -> bool:
        """Our term is on, by our own clock (with the safety margin)."""
        return self.epoch is not None and self.clock() < self.deadline

    def remaining(self) -> float:
        return self.deadline - self.clock() if self.epoch is not None else 0.0

    async def acquire(self) -> LeaseGrant | None:
        """A new term for us, or None (another replica's term lasts, or the lease workflow cannot be reached)."""
        await self._ensure_started()
        grant = await self._update(names.ACQUIRE_LEASE, LeaseRequest(holder=self.holder, ttl=self.timings.ttl))
        if grant is not None:
            self.epoch = grant.epoch
        return grant

    async def renew(self, offsets: Mapping[str, LogOffset], forget: list[str]) -> bool | None:
        """Extend our term: True if renewed, False if refused (the term is over), None if unanswered."""
        req = LeaseRequest(
            holder=self.holder, ttl=self.timings.ttl, epoch=self.epoch, offsets=dict(offsets), forget=forget
        )
        try:
            return await self._update(names.RENEW_LEASE, req) is not None
        except LeaseLostError as exc:
            logger.warning(f"telemetry lease: {exc}")
            self.epoch = None
            return False

    async def release(self, offsets: Mapping[str, LogOffset], forget: list[str]) -> None:
        """End our term now, saving the last offsets; a standby may take over at once."""
        req = LeaseRequest(
            holder=self.holder, ttl=self.timings.ttl, epoch=self.epoch, offsets=dict(offsets), forget=forget
        )
        try:
            with suppress(LeaseLostError):
                await self._update(names.RELEASE_LEASE, req, expect_result=False)
        finally:
            self.epoch = None  # whatever the answer: we stop here

    async def _ensure_started(self) -> None:
        if self._started:
            return
        try:
            await self.client.start_workflow(
                names.TELEMETRY_LEASE_WORKFLOW,
                LeaseState(cluster=self.cluster),
                id=self.handle.id,
                task_queue=self.queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                static_summary=f"telemetry lease of cluster {self.cluster}",
            )
            self._started = True
        except RPCError as exc:
            logger.warning(f"telemetry lease: cannot start {self.handle.id}: {exc.message}")

    async def _update(self, update: str, req: LeaseRequest, expect_result: bool = True) -> LeaseGrant | None:
        """Send one update; on success move our deadline to ``ttl - margin`` after we sent it. Raises
        :class:`LeaseLostError` when the workflow refused it; None when it went unanswered in time."""
        sent = self.clock()
        # a standby may wait a whole term for an answer (the lease's worker may have died with the holder);
        # a holder no longer than its term lasts
        answer_within = self.timings.ttl.total_seconds()
        if self.epoch is not None:
            answer_within = max(0.1, min(answer_within, self.remaining()))
        try:
            grant: LeaseGrant | None = await asyncio.wait_for(
                self.handle.execute_update(update, req, result_type=LeaseGrant if expect_result else None),
                timeout=answer_within,
            )
        except WorkflowUpdateFailedError as exc:
            if update == names.ACQUIRE_LEASE:
                logger.debug(f"telemetry lease: standing by ({exc.cause})")
                return None
            raise LeaseLostError(str(exc.cause)) from None
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                self._started = False  # terminated by someone: started again at the next acquire
                if update != names.ACQUIRE_LEASE:  # with it went our term: a standby may start a new one now
                    raise LeaseLostError(f"{self.handle.id} is gone ({exc.message})") from None
            logger.warning(f"telemetry lease: {update} failed: {exc.message}")
            return None
        except (TimeoutError, RPCTimeoutOrCancelledError):
            logger.warning(f"telemetry lease: {update} got no answer within {answer_within:.1f} s")
            return None
        if expect_result:
            self.deadline = sent + (self.timings.ttl - self.timings.safety_margin).total_seconds()
        return grant


class LeaderTerm:
    """One term of this replica's lease, as the telemetry loop sees it (see TelemetryLoop's ``term``)."""

    def __init__(self, lease: Lease, grant: LeaseGrant) -> None:
        self.lease, self.epoch = lease, grant.epoch
        self.handover = Handover(grant.offsets)
        self.granted = restored_state(grant.offsets)
        self.marks = progress_marks(grant.offsets)  # each job's last progress as the term before read it
        self.first_cycle = asyncio.Event()
        self.over = False

    def check(self) -> None:
        """Raise :class:`LeaseLostError` unless the term still lasts by our own clock (before every signal).
        Once refused, the term is over for good, even if a late renewal answer arrives: the loop may have
        dropped events, so its offsets must not be saved; the next term reads those lines again."""
        if self.over or not self.lease.held() or self.lease.epoch != self.epoch:
            self.over = True
            raise LeaseLostError(f"term {self.epoch} of the telemetry lease is over: no signal sent")

    def cycle_ended(self, trackers: Mapping[int, JobTracker], offsets: OffsetStore) -> None:
        """After each cycle: keep the positions whose lines have all reached the workflows."""
        gone = self.handover.cycle_ended(trackers, offsets.state)
        if gone:
            offsets.forget(gone)
        self.first_cycle.set()

    async def renew(self) -> bool | None:
        if self.over:
            return False
        offsets, forget = self.handover.pending()
        renewed = await self.lease.renew(offsets, forget)
        if renewed:
            self.handover.acknowledged(offsets, forget)
        return renewed

    async def release(self) -> None:
        await self.lease.release(*(({}, []) if self.over else self.handover.pending()))


async def lead_when_elected(lease: Lease, serve: Callable[[LeaderTerm], Awaitable[None]], stop: asyncio.Event) -> None:
    """Stand by until the lease is ours, then ``serve`` the term while renewing it; again after losing it,
    until ``stop``. ``serve`` runs until cancelled; if it fails, the lease is released and the error raised."""
    interval = lease.timings.renew_interval.total_seconds()
    while not stop.is_set():
        try:
            grant = await lease.acquire()
        except Exception:
            logger.exception("telemetry lease: asking for the lease failed; asking again")
            grant = None
        if grant is None:
            await _until(stop, None, interval)
            continue
        logger.info(
            f"telemetry lease: term {grant.epoch} is ours ({lease.holder}); running the telemetry loop "
            f"from {len(grant.offsets)} saved log offsets"
        )
        await _hold(LeaderTerm(lease, grant), serve, stop)


async def _hold(term: LeaderTerm, serve: Callable[[LeaderTerm], Awaitable[None]], stop: asyncio.Event) -> None:
    interval = term.lease.timings.renew_interval.total_seconds()
    work: asyncio.Task[None] = asyncio.ensure_future(serve(term))
    try:
        while True:
            await _until(stop, work, min(interval, term.lease.remaining()))
            if stop.is_set() or work.done():
                break
            if not term.lease.held():
                logger.warning(f"telemetry lease: term {term.epoch} not renewed in time; stopping the loop")
                break
            if await term.renew() is False:
                logger.warning(f"telemetry lease: term {term.epoch} is over; stopping the loop")
                break
    finally:
        work.cancel()
        failure: BaseException | None = None
        try:
            await work
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            failure = exc
        if term.lease.held():
            await term.release()
            logger.info(f"telemetry lease: term {term.epoch} released")
        if failure is not None:
            raise failure


async def _until(stop: asyncio.Event, work: asyncio.Task[None] | None, timeout: float) -> None:
    """Wait up to ``timeout`` seconds, less if ``stop`` is set or ``work`` ends first."""
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait(
            [t for t in (stopping, work) if t is not None],
            timeout=max(0.0, timeout),
            return_when=asyncio.FIRST_COMPLETED,
        )
    finally:
        stopping.cancel()
