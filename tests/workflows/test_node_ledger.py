"""The node ledger: one drain per node however many jobs blame it, lemon nodes, the drain budget, resume;
it stays true to Slurm (reconciliation), takes a new policy while running, and stays small."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from temporalio import activity
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from lazarus.cli.common import failure_message
from lazarus.models.ledger import DrainRequest, Implication, LedgerInput, LedgerPolicy, PolicyChange, ResumeRequest
from lazarus.models.notify import Notice, NotifyResult
from lazarus.models.policy import Mode
from lazarus.models.slurm import NodeAction, NodeActionResult, NodeState
from tests.workflows.harness import Running, ended, job_input, send, started, xid79_on
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


class FakeNodes:
    def __init__(self, count: int = 8) -> None:
        self.nodes = {f"node{i}": NodeState(name=f"node{i}", state="IDLE") for i in range(1, count + 1)}
        self.drain_calls: list[list[str]] = []
        self.notices: list[Notice] = []

    def activities(self):
        @activity.defn(name="slurm_list_nodes")
        async def list_nodes() -> list[NodeState]:
            return list(self.nodes.values())

        @activity.defn(name="slurm_drain_nodes")
        async def drain(req: NodeAction) -> NodeActionResult:
            self._known(req.nodes)
            self.drain_calls.append(req.nodes)
            for n in req.nodes:
                self.nodes[n] = NodeState(name=n, state="IDLE+DRAIN", reason=req.reason)
            return NodeActionResult(changed=req.nodes)

        @activity.defn(name="slurm_resume_nodes")
        async def resume(req: NodeAction) -> NodeActionResult:
            self._known(req.nodes)
            for n in req.nodes:
                self.nodes[n] = NodeState(name=n, state="IDLE")
            return NodeActionResult(changed=req.nodes)

        @activity.defn(name="notify")
        async def notify(notice: Notice) -> NotifyResult:
            self.notices.append(notice)
            return NotifyResult(delivered=[0])

        return [list_nodes, drain, resume, notify]

    def _known(self, names: list[str]) -> None:
        """What the real activity raises for a name Slurm does not know (activities/scheduler.py, node_actions)."""
        unknown = [n for n in names if n not in self.nodes]
        if unknown:
            raise ApplicationError(
                f"{', '.join(unknown)}: not a node of this cluster", type="UnknownNode", non_retryable=True
            )

    def admin(self, node: str, state: str, reason: str = "") -> None:
        """An administrator changes a node with scontrol, outside Lazarus."""
        self.nodes[node] = NodeState(name=node, state=state, reason=reason)


async def start_ledger(env, fake: FakeNodes, **policy):
    sched = "ledger-sched-" + uuid.uuid4().hex[:6]
    tq = "ledger-" + uuid.uuid4().hex[:6]
    workers = [
        Worker(env.client, task_queue=tq, workflows=[NodeLedgerWorkflow]),
        Worker(env.client, task_queue=sched, activities=fake.activities()),
    ]
    for w in workers:
        await w.__aenter__()
    handle = await env.client.start_workflow(
        NodeLedgerWorkflow.run,
        LedgerInput(cluster="t", policy=LedgerPolicy(**policy), scheduler_queue=sched),
        id="ledger-" + uuid.uuid4().hex[:6],
        task_queue=tq,
    )
    return handle, workers


async def stop(workers, handle) -> None:
    """End the test's ledger too: its reconciliation timer would otherwise hold the time-skipping server's clock
    (a timer firing for a workflow nobody serves leaves a task outstanding for the rest of the session)."""
    await handle.terminate("test done")
    for w in workers:
        await w.__aexit__(None, None, None)


async def settle(env, handle, predicate) -> None:
    for _ in range(100):
        view = await handle.query(NodeLedgerWorkflow.view)
        if predicate(view):
            return
        await env.sleep(timedelta(seconds=1))
    raise AssertionError("ledger never reached the expected state")


def imp(node: str, job: int, drain: bool = True, **kw) -> Implication:
    return Implication(
        node=node,
        job_id=job,
        attempt=0,
        signature="nvrm_xid_79",
        category="hardware",
        at=kw.get("at"),
        drain_requested=drain,
    )


async def test_two_jobs_implicating_one_node_produce_one_drain(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake)
    now = await ts_env.get_current_time()
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 1, at=now))
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 2, at=now))
    await settle(ts_env, handle, lambda v: len(v.nodes[0].implications) == 2)
    await stop(workers, handle)
    assert fake.drain_calls == [["node2"]]


async def test_node_blamed_by_three_jobs_is_drained_as_a_lemon(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake, lemon_job_count=3)
    now = await ts_env.get_current_time()
    for job in (11, 12, 13):
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node5", job, drain=False, at=now))
    await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained_by_lazarus)
    view = await handle.query(NodeLedgerWorkflow.view)
    await stop(workers, handle)
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
    await stop(workers, handle)
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
    await stop(workers, handle)
    assert view.nodes[0].resumed_by == "carol" and not view.nodes[0].drained
    assert not fake.nodes["node4"].drained


async def test_job_workflow_reports_its_implicated_node_to_the_ledger(ts_env):
    fake = FakeNodes()
    ledger, workers = await start_ledger(ts_env, fake)
    inp = job_input(Mode.ACT).model_copy(update={"ledger_workflow_id": ledger.id})
    async with Running(ts_env.client, inp) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await settle(ts_env, ledger, lambda v: v.nodes and v.nodes[0].drained_by_lazarus)
        await run.handle.terminate("test done")
    await stop(workers, ledger)
    assert fake.drain_calls == [["node2"]]
    assert run.fake.drains == []  # the ledger drained it, not the job workflow
    assert run.fake.restarts[0].exclude_nodes == ["node2"]


async def test_operator_drain_is_recorded_with_who_and_why(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake)
    await handle.execute_update(
        NodeLedgerWorkflow.drain_node, DrainRequest(node="node6", operator="dave", reason="fan noise")
    )
    view = await handle.query(NodeLedgerWorkflow.view)
    await stop(workers, handle)
    assert fake.nodes["node6"].drained and "fan noise (by dave via lazarus)" in fake.nodes["node6"].reason
    assert view.nodes[0].drained_by == "dave"


async def test_an_operator_drain_then_resume_leaves_the_node_in_service(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake)
    await handle.execute_update(
        NodeLedgerWorkflow.drain_node, DrainRequest(node="node3", operator="dave", reason="fan noise")
    )
    await handle.execute_update(NodeLedgerWorkflow.resume_node, ResumeRequest(node="node3", operator="dave"))
    [record] = (await handle.query(NodeLedgerWorkflow.view)).nodes
    await stop(workers, handle)
    assert not record.drained and record.drained_by is None and record.resumed_by == "dave"


async def test_a_node_resumed_outside_lazarus_is_noticed_at_the_next_reconciliation(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake, reconcile_interval=timedelta(minutes=5))
    now = await ts_env.get_current_time()
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 7, at=now))
    await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained)
    fake.admin("node4", "IDLE")  # scontrol update nodename=node4 state=resume
    await ts_env.sleep(timedelta(minutes=6))
    await settle(ts_env, handle, lambda v: not v.nodes[0].drained)
    [record] = (await handle.query(NodeLedgerWorkflow.view)).nodes
    await stop(workers, handle)
    assert record.resumed_by == "outside Lazarus" and record.resumed_at is not None
    assert record.slurm_state == "IDLE"
    assert "resumed outside Lazarus, seen at" in record.history[-1]


async def test_a_node_resumed_outside_lazarus_is_drained_again_for_a_new_fault(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake, reconcile_interval=timedelta(days=1))
    now = await ts_env.get_current_time()
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 7, at=now))
    await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained)
    fake.admin("node4", "IDLE")  # the timer has not fired: only the check before a drain can notice
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 8, at=now))
    await settle(ts_env, handle, lambda v: len(v.nodes[0].implications) == 2 and fake.nodes["node4"].drained)
    [record] = (await handle.query(NodeLedgerWorkflow.view)).nodes
    await stop(workers, handle)
    assert fake.drain_calls == [["node4"], ["node4"]]
    assert record.drained_by_lazarus and "job 8" in record.drain_reason


async def test_a_node_drained_by_someone_else_is_recorded_as_such(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake, reconcile_interval=timedelta(minutes=5))
    now = await ts_env.get_current_time()
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 7, drain=False, at=now))
    await settle(ts_env, handle, lambda v: v.nodes)
    fake.admin("node2", "IDLE+DRAIN", reason="bad DIMM")
    await ts_env.sleep(timedelta(minutes=6))
    await settle(ts_env, handle, lambda v: v.nodes[0].drained)
    [record] = (await handle.query(NodeLedgerWorkflow.view)).nodes
    await stop(workers, handle)
    assert record.drained_by == "outside Lazarus" and record.drain_reason == "bad DIMM"
    assert not record.drained_by_lazarus and fake.drain_calls == []


async def test_the_policy_can_be_changed_without_restarting_the_ledger(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake, lemon_job_count=3)
    await handle.signal(
        NodeLedgerWorkflow.set_policy, PolicyChange(policy=LedgerPolicy(lemon_job_count=2), by="config at worker start")
    )
    now = await ts_env.get_current_time()
    for job in (21, 22):
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node5", job, drain=False, at=now))
    await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained)
    view = await handle.query(NodeLedgerWorkflow.view)
    await stop(workers, handle)
    assert view.policy.lemon_job_count == 2 and view.policy_set_by == "config at worker start"
    assert "lemon node: implicated by 2 jobs" in view.nodes[0].drain_reason


async def test_records_of_nodes_slurm_does_not_know_are_pruned(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake, reconcile_interval=timedelta(minutes=5))
    now = await ts_env.get_current_time()
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node99", 7, drain=False, at=now))
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node1", 7, drain=False, at=now))
    await settle(ts_env, handle, lambda v: len(v.nodes) == 2)
    await ts_env.sleep(timedelta(minutes=6))
    await settle(ts_env, handle, lambda v: [r.node for r in v.nodes] == ["node1"])
    await stop(workers, handle)


async def test_records_whose_drain_was_refused_are_pruned_once_their_implications_expire(ts_env):
    fake = FakeNodes(count=4)
    handle, workers = await start_ledger(
        ts_env, fake, max_drain_fraction=0.25, lemon_window=timedelta(hours=1), reconcile_interval=timedelta(minutes=30)
    )
    now = await ts_env.get_current_time()
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node1", 1, at=now))
    await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 2, at=now))
    await settle(ts_env, handle, lambda v: len(v.nodes) == 2 and v.nodes[1].refused)
    await ts_env.sleep(timedelta(hours=2, minutes=31))
    await settle(ts_env, handle, lambda v: [r.node for r in v.nodes] == ["node1"])
    await stop(workers, handle)


async def test_the_ledger_keeps_only_the_newest_implications_up_to_its_cap(ts_env):
    fake = FakeNodes(count=14)
    handle, workers = await start_ledger(ts_env, fake, max_implications=10)
    start = await ts_env.get_current_time()
    for job in range(1, 15):
        await handle.signal(
            NodeLedgerWorkflow.record_implication,
            imp(f"node{job}", job, drain=False, at=start + timedelta(seconds=job)),
        )
    await settle(ts_env, handle, lambda v: any(i.job_id == 14 for r in v.nodes for i in r.implications))
    view = await handle.query(NodeLedgerWorkflow.view)
    await stop(workers, handle)
    kept = sorted(i.job_id for r in view.nodes for i in r.implications)
    assert kept == list(range(5, 15)) and {r.node for r in view.nodes} == {f"node{j}" for j in range(5, 15)}


async def test_a_refused_operator_drain_carries_slurms_reason_to_the_caller(ts_env):
    fake = FakeNodes()
    handle, workers = await start_ledger(ts_env, fake)
    with pytest.raises(WorkflowUpdateFailedError) as caught:
        await handle.execute_update(
            NodeLedgerWorkflow.drain_node, DrainRequest(node="node9", operator="dave", reason="fan noise")
        )
    view = await handle.query(NodeLedgerWorkflow.view)
    await stop(workers, handle)
    assert failure_message(caught.value) == "node9: not a node of this cluster"
    assert isinstance(caught.value.cause, ApplicationError) and caught.value.cause.type == "UnknownNode"
    assert view.nodes == []  # nothing recorded for a node that does not exist
