"""Discovery at scale (issue 11): a telemetry holder that meets many jobs at once (first start, a lease failover)
must not take one serial round of Temporal calls per job, or every job goes unseen for the whole cycle.

- The cluster-wide mode (the operator's kill switch, a query of the node ledger) is read once per cycle, not once
  per newly discovered job; a cycle that cannot read it still starts every new job in monitor mode.
- Jobs are handled concurrently within a cycle (bounded), so a slow Temporal call for one job does not add up
  over a thousand.

The scheduler is the simulated controller (real adapter and parsers); Temporal is a fake that counts and delays.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from temporalio.service import RPCError, RPCStatusCode

from lazarus.config import Settings
from lazarus.models.policy import Mode
from lazarus.models.recovery import JobRecoveryInput
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.simulated import SimulatedCluster, SimulatedTransport, current_user
from lazarus.telemetry.loop import JOBS_AT_ONCE, TelemetryLoop

pytestmark = pytest.mark.asyncio

CALL_S = 0.02  # one Temporal round trip


class FakeTemporal:
    """Counts workflow starts, reads of the ledger's mode and signals; each takes :data:`CALL_S`."""

    def __init__(self, ledger_answers: bool = True) -> None:
        self.starts: list[Any] = []
        self.queries = 0
        self.ledger_answers = ledger_answers
        self.in_flight = 0
        self.most_in_flight = 0

    async def _call(self) -> None:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(CALL_S)
        finally:
            self.in_flight -= 1

    async def start_workflow(self, name: str, arg: Any, **kwargs: Any) -> None:
        await self._call()
        if isinstance(arg, JobRecoveryInput):
            self.starts.append(arg)

    def get_workflow_handle(self, workflow_id: str) -> FakeTemporal:
        return self

    async def describe(self, *args: Any, **kwargs: Any) -> FakeTemporal:
        """The ledger's description, whose memo holds the cluster mode (lazarus.ledger_mode)."""
        self.queries += 1
        await asyncio.sleep(CALL_S)
        if not self.ledger_answers:
            raise RPCError("describe timed out", RPCStatusCode.DEADLINE_EXCEEDED, b"")
        return self

    async def memo(self) -> dict[str, Any]:
        return {"cluster_mode": {"mode": None, "set_by": None}}

    async def signal(self, *args: Any, **kwargs: Any) -> None:
        await self._call()


def loop_over(tmp_path: Path, jobs: int, temporal: FakeTemporal) -> TelemetryLoop:
    cluster = SimulatedCluster([f"sim{i:04d}" for i in range(1, 2 * jobs + 1)])
    user, uid = current_user()
    names = sorted(cluster.nodes)
    for i in range(jobs):
        log = tmp_path / f"job-{i}.out"
        log.write_text("LAZARUS step=1 loss=1.0\n")
        job = cluster.submit(f"train-{i}", str(log), 2, user=user, user_id=uid, comment=json.dumps({"lazarus": {}}))
        cluster.start(job, names[2 * i : 2 * i + 2])
    settings = Settings(mode=Mode.ACT, discovery={"log_roots": [str(tmp_path)]})  # type: ignore[arg-type]
    return TelemetryLoop(settings, SlurmClient(SimulatedTransport(cluster)), temporal)  # type: ignore[arg-type]


async def test_the_cluster_mode_is_read_once_per_cycle_however_many_jobs_are_new(tmp_path: Path) -> None:
    temporal = FakeTemporal()
    loop = loop_over(tmp_path, 40, temporal)
    await loop.cycle()
    assert len(temporal.starts) == 40
    assert temporal.queries == 1


async def test_a_cycle_that_cannot_read_the_cluster_mode_starts_every_new_job_in_monitor_mode(tmp_path: Path) -> None:
    temporal = FakeTemporal(ledger_answers=False)
    loop = loop_over(tmp_path, 10, temporal)
    await loop.cycle()
    assert [inp.cluster_mode for inp in temporal.starts] == [Mode.MONITOR] * 10
    assert all(inp.job_mode is None or inp.job_mode == Mode.MONITOR for inp in temporal.starts)


async def test_slow_temporal_calls_for_many_new_jobs_overlap_within_a_cycle_at_most_jobs_at_once(
    tmp_path: Path,
) -> None:
    temporal = FakeTemporal()
    loop = loop_over(tmp_path, 100, temporal)
    await loop.cycle()
    assert len(temporal.starts) == 100
    # the new jobs' Temporal calls overlap (not one job after the other), and never more than the bound at once
    assert JOBS_AT_ONCE // 2 <= temporal.most_in_flight <= JOBS_AT_ONCE
