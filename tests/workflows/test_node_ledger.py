"""The node ledger: one drain per node however many jobs blame it, lemon nodes, the drain budget, resume."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from temporalio import activity
from temporalio.worker import Worker

from lazarus.models.ledger import Implication, LedgerInput, LedgerPolicy, ResumeRequest
from lazarus.models.policy import Mode
from lazarus.models.slurm import NodeAction, NodeActionResult, NodeState
from tests.workflows.harness import Running, ended, job_input, send, started, xid79_on
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


class FakeNodes:
    def __init__(self, count: int = 8) -> None:
        self.nodes = {f"node{i}": NodeState(name=f"node{i}", state="IDLE") for i in range(1, count + 1)}
        self.drain_calls: list[list[str]] = []

    def activities(self):
        @activity.defn(name="slurm_list_nodes")
        async def list_nodes() -> list[NodeState]:
            return list(self.nodes.values())

        @activity.defn(name="slurm_drain_nodes")
        async def drain(req: NodeAction) -> NodeActionResult:
            self.drain_calls.append(req.nodes)
            for n in req.nodes:
                self.nodes[n] = NodeState(name=n, state="IDLE+DRAIN", reason=req.reason)
            return NodeActionResult(changed=req.nodes)

        @activity.defn(name="slurm_resume_nodes")
        async def resume(req: NodeAction) -> NodeActionResult:
            for n in req.nodes:
                self.nodes[n] = NodeState(name=n, state="IDLE")
            return NodeActionResult(changed=req.nodes)

        return [list_nodes, drain, resume]


async def start_ledger(env, fake: FakeNodes, **policy):
    sched = "ledger-sched-" + uuid.uuid4().hex[:6]
    tq = "ledger-" + uuid.uuid4().hex[:6]
    workers = [Worker(env.client, task_queue=tq, workflows=[NodeLedgerWorkflow]),
               Worker(env.client, task_queue=sched, activities=fake.activities())]
    for w in workers:
        await w.__aenter__()
    handle = await env.client.start_workflow(
        NodeLedgerWorkflow.run, LedgerInput(cluster="t", policy=LedgerPolicy(**policy), scheduler_queue=sched),
        id="ledger-" + uuid.uuid4().hex[:6], task_queue=tq)
    return handle, workers


async def settle(env, handle, predicate) -> None:
    for _ in range(100):
        view = await handle.query(NodeLedgerWorkflow.view)
        if predicate(view):
            return
        await env.sleep(timedelta(seconds=1))
    raise AssertionError("ledger never reached the expected state")


def imp(node: str, job: int, drain: bool = True, **kw) -> Implication:
    return Implication(node=node, job_id=job, attempt=0, signature="nvrm_xid_79", category="hardware",
                       at=kw.get("at"), drain_requested=drain)


async def test_two_jobs_implicating_one_node_produce_one_drain(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake)
    now = await ts_env.get_current_time()
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 1, at=now))
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 2, at=now))
    await settle(ts_env, handle, lambda v: len(v.nodes[0].implications) == 2)
    for w in workers:
        await w.__aexit__(None, None, None)
    assert fake.drain_calls == [["node2"]]


async def test_node_blamed_by_three_jobs_is_drained_as_a_lemon(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake, lemon_job_count=3)
    now = await ts_env.get_current_time()
    for job in (11, 12, 13):
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node5", job, drain=False, at=now))
    await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained_by_lazarus)
    view = await handle.query(NodeLedgerWorkflow.view)
    for w in workers:
        await w.__aexit__(None, None, None)
    assert "lemon node: implicated by 3 jobs (11,12,13)" in view.nodes[0].drain_reason
    assert fake.nodes["node5"].drained


async def test_drains_stop_at_the_budget(ts_env):
    fake = FakeNodes(count=8)
    handle, workers = await start_ledger(ts_env, fake, max_drain_fraction=0.25)
    now = await ts_env.get_current_time()
    for i, node in enumerate(("node1", "node2", "node3"), start=1):
        await handle.signal(NodeLedgerWorkflow.record_implication, imp(node, 100 + i, at=now))
    await settle(ts_env, handle, lambda v: len(v.nodes) == 3 and v.nodes[2].refused)
    view = await handle.query(NodeLedgerWorkflow.view)
    for w in workers:
        await w.__aexit__(None, None, None)
    assert fake.drain_calls == [["node1"], ["node2"]]
    assert "budget 25%" in view.nodes[2].refused[0]


async def test_resume_returns_the_node_and_records_who(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake)
    now = await ts_env.get_current_time()
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 7, at=now))
    await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained_by_lazarus)
    await handle.execute_update(NodeLedgerWorkflow.resume_node, ResumeRequest(node="node4", operator="carol"))
    view = await handle.query(NodeLedgerWorkflow.view)
    for w in workers:
        await w.__aexit__(None, None, None)
    assert view.nodes[0].resumed_by == "carol" and not view.nodes[0].drained_by_lazarus
    assert not fake.nodes["node4"].drained


async def test_job_workflow_reports_its_implicated_node_to_the_ledger(ts_env):
    fake = FakeNodes()
    ledger, workers = await start_ledger(ts_env, fake)
    inp = job_input(Mode.ACT).model_copy(update={"ledger_workflow_id": ledger.id})
    async with Running(ts_env.client, inp) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await settle(ts_env, ledger, lambda v: v.nodes and v.nodes[0].drained_by_lazarus)
        await run.handle.terminate("test done")
    for w in workers:
        await w.__aexit__(None, None, None)
    assert fake.drain_calls == [["node2"]]
    assert run.fake.drains == []  # the ledger drained it, not the job workflow
    assert run.fake.restarts[0].exclude_nodes == ["node2"]



async def test_operator_drain_is_recorded_with_who_and_why(ts_env):
    from lazarus.models.ledger import DrainRequest

    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake)
    await handle.execute_update(NodeLedgerWorkflow.drain_node, DrainRequest(node="node6", operator="dave",
                                                                            reason="fan noise"))
    view = await handle.query(NodeLedgerWorkflow.view)
    for w in workers:
        await w.__aexit__(None, None, None)
    assert fake.nodes["node6"].drained and "fan noise (by dave via lazarus)" in fake.nodes["node6"].reason
    assert view.nodes[0].drained_by == "dave"
