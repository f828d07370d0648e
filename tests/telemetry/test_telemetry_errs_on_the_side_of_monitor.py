"""Telemetry's share of acting on fresh state (no server, no cluster).

- A job Slurm shows SUSPENDED is reported once when suspended and once when resumed (the workflow pauses its
  hang watchdog in between), and the progress view says so.
- Discovery that cannot read the cluster-wide mode from the node ledger starts the job in monitor mode: the
  kill switch may be thrown.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from temporalio.service import RPCError, RPCStatusCode

from lazarus.config import Settings
from lazarus.models.policy import Mode
from lazarus.models.recovery import AttemptSuspension
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.telemetry.loop import TelemetryLoop
from lazarus.telemetry.tracker import JobTracker

T0 = datetime(2026, 11, 29, 12, tzinfo=UTC)


def snap(state: JobState) -> JobSnapshot:
    return JobSnapshot(job_id=7, state=state, nodes=["node1"], start_time=T0)


def test_a_suspension_and_its_resume_are_each_reported_once():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(JobState.RUNNING), T0)
    events = t.observe(snap(JobState.SUSPENDED), T0 + timedelta(seconds=5))
    assert events == [AttemptSuspension(attempt=0, suspended=True, at=T0 + timedelta(seconds=5))]
    assert t.observe(snap(JobState.SUSPENDED), T0 + timedelta(seconds=6)) == []
    assert t.progress_view(0, T0 + timedelta(minutes=6), timedelta(seconds=15)).suspended
    events = t.observe(snap(JobState.RUNNING), T0 + timedelta(minutes=5))
    assert events == [AttemptSuspension(attempt=0, suspended=False, at=T0 + timedelta(minutes=5))]
    assert not t.progress_view(0, T0 + timedelta(minutes=6), timedelta(seconds=15)).suspended


class _Unreachable:
    """A workflow handle whose queries fail like a ledger that is gone or has no worker to answer."""

    async def describe(self, *args, **kwargs):
        raise RPCError("describe timed out", RPCStatusCode.DEADLINE_EXCEEDED, b"")

    async def query(self, *args, **kwargs):
        raise RPCError("workflow query timed out", RPCStatusCode.DEADLINE_EXCEEDED, b"")


class _Client:
    def get_workflow_handle(self, workflow_id: str) -> _Unreachable:
        return _Unreachable()


@pytest.mark.asyncio
async def test_discovery_that_cannot_read_the_cluster_mode_starts_the_job_in_monitor_mode():
    loop = TelemetryLoop(Settings(mode=Mode.ACT), slurm=None, client=_Client())  # type: ignore[arg-type]
    assert await loop._cluster_mode("lazarus-ledger-local") == Mode.MONITOR
    assert not loop._ledger_started  # started again next cycle if it is gone
