"""Several telemetry replicas, one active: only the lease holder serves; a holder that cannot renew stops (and
signals nothing) before a standby is granted the lease; a clean stop or a failing loop hands it on at once.

Real Temporal (a dev server) and the real lease workflow; the replicas are drivers in this process with
short timings (ttl 2 s, renew every 0.5 s, margin 0.5 s)."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from lazarus.config import Settings
from lazarus.models.lease import LeaseGrant
from lazarus.telemetry.leader import LeaderTerm, Lease, LeaseLostError, lead_when_elected
from workflows.telemetry_lease import TelemetryLeaseWorkflow

pytestmark = [pytest.mark.temporal, pytest.mark.asyncio(loop_scope="module")]
TTL, RENEW, MARGIN = 2.0, 0.5, 0.5


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def temporal() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(
        data_converter=pydantic_data_converter, dev_server_existing_path=str(Path(sys.executable).parent / "temporal")
    )
    yield env
    await env.shutdown()


@dataclass
class Replica:
    """One telemetry replica: its driver, and when it served and when it could still signal (check passed)."""

    lease: Lease
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    served: list[tuple[float, float]] = field(default_factory=list)
    signalled: list[float] = field(default_factory=list)
    fail: bool = False
    task: asyncio.Task | None = None

    async def serve(self, term: LeaderTerm) -> None:
        start = time.monotonic()
        try:
            while True:
                if self.fail:
                    raise RuntimeError("the loop's worker died")
                with suppress(LeaseLostError):
                    term.check()
                    self.signalled.append(time.monotonic())
                await asyncio.sleep(0.02)
        finally:
            self.served.append((start, time.monotonic()))

    def start(self) -> None:
        self.task = asyncio.create_task(lead_when_elected(self.lease, self.serve, self.stop))

    @property
    def serving(self) -> bool:
        return bool(self.signalled) and self.signalled[-1] > time.monotonic() - 0.2


@pytest_asyncio.fixture(loop_scope="module")
async def replicas(temporal) -> AsyncIterator[tuple[Replica, Replica]]:
    cluster = f"c{uuid.uuid4().hex[:6]}"
    settings = Settings(
        cluster=cluster,
        task_queues={"telemetry": f"tel-{cluster}"},
        discovery={"lease": {"ttl": TTL, "renew_interval": RENEW, "safety_margin": MARGIN}},
    )
    a, b = Replica(Lease(temporal.client, settings, "a")), Replica(Lease(temporal.client, settings, "b"))
    async with Worker(temporal.client, task_queue=f"tel-{cluster}", workflows=[TelemetryLeaseWorkflow]):
        a.start()
        await until(lambda: a.serving)
        b.start()
        yield a, b
        for r in (a, b):
            r.stop.set()
        await asyncio.gather(*(r.task for r in (a, b)), return_exceptions=True)


async def until(condition, timeout: float = 15) -> float:
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < timeout, "timed out"
        await asyncio.sleep(0.02)
    return time.monotonic() - start


async def test_only_the_holder_serves_while_it_renews(replicas):
    a, b = replicas
    await asyncio.sleep(3 * TTL)  # several terms' worth of renewals
    assert a.serving and not b.signalled and len(a.served) == 0


async def test_a_holder_that_cannot_renew_stops_signalling_before_a_standby_takes_over(replicas):
    a, b = replicas

    async def unanswered(*_args, **_kwargs) -> None:  # a cut off from Temporal: no update answered
        await asyncio.sleep(RENEW)

    a.lease._update = unanswered
    cut = time.monotonic()
    took = await until(lambda: b.serving)
    assert max(a.signalled) < min(b.signalled), "both replicas could signal at the same time"
    assert max(a.signalled) - cut <= TTL - MARGIN + 0.2  # a stopped by its own clock
    assert took <= TTL + RENEW + 1.0  # failover: the term's expiry plus one standby poll


async def test_a_clean_stop_hands_the_lease_over_at_once(replicas):
    a, b = replicas
    a.stop.set()
    await a.task
    took = await until(lambda: b.serving)
    assert took < RENEW + 0.5 < TTL  # released: b did not wait for the term to expire
    assert max(a.signalled) < min(b.signalled)


async def test_a_failing_loop_hands_the_lease_over_and_raises(replicas):
    a, b = replicas
    a.fail = True
    with pytest.raises(RuntimeError, match="worker died"):
        await a.task
    assert await until(lambda: b.serving) < RENEW + 0.5


async def test_a_signal_refused_past_the_deadline_ends_the_term_even_if_a_late_renewal_arrives(temporal):
    """The loop may have dropped the refused signal's events: the term's offsets must never be saved."""
    now = [100.0]
    settings = Settings(
        cluster="late", discovery={"lease": {"ttl": TTL, "renew_interval": RENEW, "safety_margin": MARGIN}}
    )
    lease = Lease(temporal.client, settings, "a", clock=lambda: now[0])
    sent: list[str] = []

    async def answered(update: str, req, expect_result: bool = True):
        sent.append(update)
        lease.deadline = now[0] + TTL - MARGIN  # granted, but too late for the signal refused below
        return LeaseGrant(holder="a", epoch=1, expires_at=datetime.now(UTC))

    lease._update = answered
    term = LeaderTerm(lease, await lease.acquire())
    term.check()
    now[0] += TTL  # no renewal answered in time: past our deadline
    with pytest.raises(LeaseLostError):
        term.check()
    lease.deadline = now[0] + TTL  # a late answer to a renewal in flight
    with pytest.raises(LeaseLostError):
        term.check()
    assert await term.renew() is False and sent == ["acquire"]
