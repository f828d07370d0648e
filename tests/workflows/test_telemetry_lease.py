"""The telemetry lease: one holder at a time, until its term expires by workflow time; a standby takes over
after that (or at once after a release) with the offsets the holder saved; a holder whose term is over can
neither renew nor release it; refused requests leave no history; the state survives continue-as-new."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.worker import Worker

from lazarus.models import names
from lazarus.models.lease import LeaseGrant, LeaseRequest, LeaseState, LeaseView, LogOffset
from workflows.telemetry_lease import TelemetryLeaseWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

TTL = timedelta(seconds=15)


def ask(holder: str, epoch: int | None = None, **offsets: int) -> LeaseRequest:
    return LeaseRequest(
        holder=holder,
        ttl=TTL,
        epoch=epoch,
        offsets={f"/logs/{name}.out": LogOffset(inode=7, offset=o) for name, o in offsets.items()},
    )


@pytest_asyncio.fixture(loop_scope="session")
async def lease(ts_env) -> AsyncIterator[WorkflowHandle]:
    tq = "lease-" + uuid.uuid4().hex[:6]
    async with Worker(ts_env.client, task_queue=tq, workflows=[TelemetryLeaseWorkflow]):
        handle = await ts_env.client.start_workflow(
            TelemetryLeaseWorkflow.run,
            LeaseState(cluster="t", history_limit=60),
            id=names.telemetry_lease_id(f"t{uuid.uuid4().hex[:6]}"),
            task_queue=tq,
        )
        yield handle
        await handle.terminate()


async def acquire(handle: WorkflowHandle, req: LeaseRequest) -> LeaseGrant:
    return await handle.execute_update(names.ACQUIRE_LEASE, req, result_type=LeaseGrant)


async def renew(handle: WorkflowHandle, req: LeaseRequest) -> LeaseGrant:
    return await handle.execute_update(names.RENEW_LEASE, req, result_type=LeaseGrant)


async def view(handle: WorkflowHandle) -> LeaseView:
    return await handle.query(names.LEASE_VIEW, result_type=LeaseView)


async def test_only_one_replica_holds_the_lease_while_its_term_lasts(lease, ts_env):
    a = await acquire(lease, ask("a"))
    assert (a.holder, a.epoch) == ("a", 1)
    await ts_env.sleep(10)
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await acquire(lease, ask("b"))
    assert "held by a" in str(refused.value.cause)
    assert (await view(lease)).holder == "a"


async def test_a_standby_takes_over_when_the_term_expires_with_the_holders_saved_offsets(lease, ts_env):
    a = await acquire(lease, ask("a"))
    await renew(lease, ask("a", a.epoch, job1=120, job2=40))
    await ts_env.sleep(TTL.total_seconds() + 1)
    b = await acquire(lease, ask("b"))
    assert (b.holder, b.epoch) == ("b", 2)
    assert {p: o.offset for p, o in b.offsets.items()} == {"/logs/job1.out": 120, "/logs/job2.out": 40}
    assert (await view(lease)).handovers[-1].previous == "a"  # a's term lapsed: it was not released


async def test_renewals_keep_the_term_and_standbys_are_refused_throughout(lease, ts_env):
    a = await acquire(lease, ask("a"))
    for _ in range(12):  # one minute of renewals every 5 s, a standby asking in between
        await ts_env.sleep(5)
        assert (await renew(lease, ask("a", a.epoch))).epoch == a.epoch
        with pytest.raises(WorkflowUpdateFailedError):
            await acquire(lease, ask("b"))
    assert (await view(lease)).epoch == 1


async def test_a_holder_whose_term_is_over_can_neither_renew_nor_release_it(lease, ts_env):
    a = await acquire(lease, ask("a"))
    await ts_env.sleep(TTL.total_seconds() + 1)
    with pytest.raises(WorkflowUpdateFailedError) as lapsed:
        await renew(lease, ask("a", a.epoch))  # lapsed, though nobody took over: it must acquire a new term
    assert "expired" in str(lapsed.value.cause)
    b = await acquire(lease, ask("b"))
    for update in (names.RENEW_LEASE, names.RELEASE_LEASE):
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await lease.execute_update(update, ask("a", a.epoch, job1=999))
        assert "is over" in str(refused.value.cause)
    assert (await view(lease)).holder == "b"
    assert (await renew(lease, ask("b", b.epoch))).holder == "b"


async def test_a_released_lease_is_taken_at_once_with_the_offsets_saved_on_release(lease):
    a = await acquire(lease, ask("a"))
    await lease.execute_update(names.RELEASE_LEASE, ask("a", a.epoch, job1=300))
    b = await acquire(lease, ask("b"))  # no wait for the term to expire
    assert b.epoch == 2 and b.offsets["/logs/job1.out"].offset == 300
    assert (await view(lease)).handovers[-1].previous is None


async def test_files_forgotten_by_the_holder_are_no_longer_handed_over(lease):
    a = await acquire(lease, ask("a"))
    await renew(lease, ask("a", a.epoch, job1=10, job2=20))
    await renew(lease, LeaseRequest(holder="a", ttl=TTL, epoch=a.epoch, forget=["/logs/job1.out"]))
    await lease.execute_update(names.RELEASE_LEASE, ask("a", a.epoch))
    assert set((await acquire(lease, ask("b"))).offsets) == {"/logs/job2.out"}


async def test_refused_requests_leave_no_history(lease):
    a = await acquire(lease, ask("a"))
    before = len((await lease.fetch_history()).events)
    for _ in range(5):
        with pytest.raises(WorkflowUpdateFailedError):
            await acquire(lease, ask("b"))
    await renew(lease, ask("a", a.epoch))
    events = (await lease.fetch_history()).events[before:]
    accepted = [e for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED]
    assert len(accepted) == 1  # the renewal only


async def test_the_lease_continues_as_new_with_its_holder_term_and_offsets(lease, ts_env):
    a = await acquire(lease, ask("a"))
    first_run = (await lease.describe()).run_id
    for step in range(20):  # history_limit is 60 events: this continues as new at least once
        await ts_env.sleep(1)
        await renew(lease, ask("a", a.epoch, job1=step))
    assert (await lease.describe()).run_id != first_run
    state = await view(lease)
    assert (state.holder, state.epoch) == ("a", 1)
    assert (await renew(lease, ask("a", a.epoch))).epoch == 1
    await ts_env.sleep(TTL.total_seconds() + 1)
    assert (await acquire(lease, ask("b"))).offsets["/logs/job1.out"].offset == 19
