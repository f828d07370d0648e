"""Telemetry is highly available: of two telemetry replicas exactly one watches the jobs; kill -9 of that one
mid-job hands the lease to the other within 30 s, which reads on from the saved log offsets: the job's
crash (printed while no replica was active) is still detected and recovered, its attempt end arrives,
and it is requeued exactly once."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from collections.abc import Iterator

import pytest
from temporalio.service import RPCError

from lazarus.models.recovery import RecoveryState
from tests.e2e.helpers import restarts, restore_nodes, wait_state
from tests.e2e.stack import E2EStack, submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

FAILOVER_LIMIT_S = 30


@pytest.fixture
def standby(e2e: E2EStack) -> Iterator[None]:
    """A second telemetry replica for the test; stopped (releasing the lease if it holds it) afterwards."""
    e2e.start_telemetry_replica()
    yield
    if e2e.worker is None or e2e.worker.poll() is not None:
        e2e.start_worker()
    e2e.stop_telemetry_replicas()


def holder_pid(holder: str | None) -> int | None:
    return int(holder.split(":")[1]) if holder else None


def logs_of(e2e: E2EStack) -> dict[int, str]:
    """Each live or dead replica's log, by its process id."""
    procs = [e2e.worker, *e2e.replicas]
    files = ["worker.log", *(f"telemetry-{i}.log" for i in range(1, len(e2e.replicas) + 1))]
    return {p.pid: (e2e.root / f).read_text(errors="replace") for p, f in zip(procs, files, strict=True) if p}


async def until(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if (found := await check()) is not None:
                return found
        except RPCError:  # not there yet, or its last worker was just killed (queries wait for the next one)
            pass
        await asyncio.sleep(0.2)
    raise AssertionError(f"{what} within {timeout} s")


async def test_kill_9_of_the_active_telemetry_replica_hands_over_within_30_s_losing_and_doubling_nothing(
    e2e, job_dir, standby
):
    job = submit_training(
        e2e.cluster,
        job_dir,
        steps=60,
        step_time=0.5,
        ckpt_every=5,
        fault="xid79",
        fault_rank=1,
        fault_step=30,
        fault_attempts="0",
    )

    async def watched_with_progress():
        status = await e2e.status(job)
        attempt = status.attempts[0] if status.attempts else None
        return status if attempt and attempt.last_step and attempt.last_step >= 8 else None

    await until(watched_with_progress, 90, "the job's progress did not reach its workflow")
    watching = [pid for pid, log in logs_of(e2e).items() if f"watching job {job} " in log]
    assert len(watching) == 1, f"replicas {watching} all watch job {job}"

    async def offsets_saved():
        view = await e2e.lease()
        return view if view.saved_offsets >= 1 else None

    lease = await until(offsets_saved, 15, "the holder saved no log offset in the lease")  # a renewal carried them
    active = holder_pid(lease.holder)
    assert watching == [active], f"replica {watching} watches job {job}; the lease holder is {active}"

    os.killpg(active, signal.SIGKILL)
    killed_at = time.monotonic()
    main_killed = e2e.worker is not None and e2e.worker.pid == active
    (e2e.worker if main_killed else e2e.replicas[0]).wait(timeout=30)

    async def new_holder():
        view = await e2e.lease()
        return view if view.epoch > lease.epoch and holder_pid(view.holder) != active else None

    takeover = await until(new_holder, FAILOVER_LIMIT_S, "no other replica took the telemetry lease")
    failover_s = time.monotonic() - killed_at
    if main_killed:  # the control and scheduler roles died with it: bring them back (it stands by now)
        e2e.start_worker()

    final = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=180
    )
    first = final.attempts[0]
    assert final.state == RecoveryState.COMPLETED, final.stop_reason
    assert first.anomaly is not None and first.anomaly.source == "log", first.anomaly  # the crash line, read on
    assert first.anomaly.diagnosis.implicated_nodes == [first.nodes[1]]
    assert first.end_state is not None and first.ended_at is not None  # the attempt end arrived
    assert restarts(e2e.cluster, job) == 1 and [a.index for a in final.attempts] == [0, 1]  # requeued once
    assert failover_s <= FAILOVER_LIMIT_S
    new_log = logs_of(e2e)[holder_pid(takeover.holder)]
    assert f"watching job {job} " in new_log
    assert re.search(rf"term {takeover.epoch} is ours .* from [1-9]\d* saved log offsets", new_log)  # read on
    restore_nodes(e2e.cluster)
