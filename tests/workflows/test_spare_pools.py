"""Spare pools kept by the node ledger: a member a job implicates is swapped for a healthy idle node of the
general pool and the reservation keeps its size; with no healthy node free the ledger records it, notifies once
and looks again until one is; a node it distrusts is never taken; a reservation no policy names is never
touched."""

from __future__ import annotations

from datetime import timedelta

import pytest

from lazarus.models.ledger import DrainRequest, LedgerPolicy, PolicyChange
from lazarus.models.notify import NoticeKind
from lazarus.models.slurm import NodeState
from lazarus.models.spares import SparePool
from tests.workflows.ledger_harness import FakeNodes, imp, running_ledger, settle
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

POOL = SparePool(reservation="big-run", count=1, retry_interval=timedelta(seconds=30))


def pool_of(view):
    return next((p for p in view.spares if p.reservation == POOL.reservation), None)


def four_nodes(busy: tuple[str, ...] = ()) -> FakeNodes:
    fake = FakeNodes(count=4)
    fake.reservations = {"big-run": ["node1", "node2", "node3"]}
    for node in busy:
        fake.admin(node, "ALLOCATED")
    return fake


async def test_a_member_a_job_implicates_is_replaced_by_an_idle_node_and_the_pool_keeps_its_size(ts_env):
    fake = four_nodes()
    async with running_ledger(ts_env, fake, spare_pools=(POOL,)) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node1", 7, at=now))
        await settle(ts_env, handle, lambda v: (p := pool_of(v)) is not None and p.refills == 1)
        view = await handle.query(NodeLedgerWorkflow.view)
    pool = pool_of(view)
    assert fake.reservations["big-run"] == ["node2", "node3", "node4"]
    assert (
        pool.members == ["node2", "node3", "node4"] and pool.short == [] and pool.swaps[0].startswith("node1 -> node4")
    )
    assert [a.action for a in view.actions if a.node == "node1"] == ["spare-refill"]
    assert fake.refill_calls[-1].distrusted == ["node1"]


async def test_with_no_healthy_node_free_the_ledger_records_notifies_once_and_refills_when_one_is(ts_env):
    fake = four_nodes(busy=("node4",))
    async with running_ledger(ts_env, fake, spare_pools=(POOL,)) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node1", 7, at=now))
        await settle(ts_env, handle, lambda v: (p := pool_of(v)) is not None and p.short == ["node1"])
        await ts_env.sleep(timedelta(seconds=65))  # two more looks, still nothing free
        short = pool_of(await handle.query(NodeLedgerWorkflow.view))
        assert short.short == ["node1"] and short.refills == 0 and len(fake.refill_calls) >= 3
        assert [n.kind for n in fake.notices] == [NoticeKind.SPARES_SHORT]  # told once, not at every look
        assert fake.notices[0].nodes == ["node1"] and fake.notices[0].job_id == 7

        fake.nodes["node4"] = NodeState(name="node4", state="IDLE")  # the other work ended
        await settle(ts_env, handle, lambda v: pool_of(v).refills == 1)
        refilled = pool_of(await handle.query(NodeLedgerWorkflow.view))
    assert fake.reservations["big-run"] == ["node2", "node3", "node4"]
    assert refilled.short == [] and refilled.short_since is None


async def test_a_node_the_ledger_distrusts_or_slurm_shows_drained_is_never_taken(ts_env):
    fake = four_nodes()
    fake.nodes["node5"] = NodeState(name="node5", state="IDLE+DRAIN")
    fake.nodes["node6"] = NodeState(name="node6", state="IDLE")
    async with running_ledger(ts_env, fake, spare_pools=(POOL,)) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 8, user="bob", at=now))
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node1", 7, at=now))
        await settle(ts_env, handle, lambda v: (p := pool_of(v)) is not None and p.refills == 1)
    assert fake.reservations["big-run"] == ["node2", "node3", "node6"]  # not node4 (implicated), not node5 (drained)


async def test_an_operators_drain_of_a_member_replaces_it(ts_env):
    fake = four_nodes()
    async with running_ledger(ts_env, fake, spare_pools=(POOL,)) as handle:
        await handle.execute_update(
            NodeLedgerWorkflow.drain_node, DrainRequest(node="node2", operator="alice", reason="fan failure")
        )
        await settle(ts_env, handle, lambda v: (p := pool_of(v)) is not None and p.refills == 1)
    assert fake.reservations["big-run"] == ["node1", "node3", "node4"]


async def test_a_reservation_no_policy_names_is_never_touched(ts_env):
    fake = four_nodes()
    fake.reservations["other"] = ["node4"]
    async with running_ledger(ts_env, fake) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node1", 7, at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].waiting)
        assert fake.refill_calls == []
        await handle.signal(
            NodeLedgerWorkflow.set_policy, PolicyChange(policy=LedgerPolicy(), by="config", spare_pools=[POOL])
        )
        await settle(ts_env, handle, lambda v: (p := pool_of(v)) is not None and p.short == ["node1"])
    assert {c.reservation for c in fake.refill_calls} == {"big-run"}
    assert fake.reservations == {"big-run": ["node1", "node2", "node3"], "other": ["node4"]}
