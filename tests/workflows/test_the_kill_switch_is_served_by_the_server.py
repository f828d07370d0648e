"""The kill switch is readable however busy the control worker is.

Every action reads the cluster-wide mode right before it starts (activities/ledger.py). It used to be a query
on the node ledger, which only a control worker can answer: at 10,000 watched jobs the queries timed out, and
every action waited for a person. The ledger now publishes the mode in its memo, in the workflow task that
applies the operator's signal, and the Temporal server serves the memo itself (``describe``). A ledger started
before that publishes nothing and is still asked with its query.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from temporalio import workflow
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from activities.ledger import LedgerActivities
from lazarus.ledger_mode import read_cluster_mode
from lazarus.models import names
from lazarus.models.ledger import LedgerInput, LedgerPolicy, LedgerView
from lazarus.models.policy import Mode
from lazarus.models.recovery import ModeChange
from tests.workflows.harness import workflow_interceptors
from tests.workflows.ledger_harness import FakeNodes
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")
_SECONDS = timedelta(seconds=5)


async def test_the_thrown_switch_is_read_from_the_ledgers_memo_with_no_worker_left_to_answer(ts_env):
    tq, sched = "ledger-" + uuid.uuid4().hex[:6], "ledger-sched-" + uuid.uuid4().hex[:6]
    ledger_id = "ledger-" + uuid.uuid4().hex[:6]
    async with (
        Worker(ts_env.client, task_queue=tq, workflows=[NodeLedgerWorkflow], interceptors=workflow_interceptors()),
        Worker(ts_env.client, task_queue=sched, activities=FakeNodes().activities()),
    ):
        handle = await ts_env.client.start_workflow(
            NodeLedgerWorkflow.run,
            LedgerInput(cluster="t", policy=LedgerPolicy(), scheduler_queue=sched, telemetry_queue=sched),
            id=ledger_id,
            task_queue=tq,
        )
        assert (await read_cluster_mode(ts_env.client, ledger_id, _SECONDS)).mode is None  # published at start
        await handle.signal(
            NodeLedgerWorkflow.set_cluster_mode, ModeChange(mode=Mode.MONITOR, scope="cluster", operator="erin")
        )
        await handle.query(NodeLedgerWorkflow.view)  # the signal is applied (a query waits for it)
    try:
        # No worker polls the ledger's queue any more: a query would wait for one. The memo needs none.
        memo = await (await handle.describe()).memo()
        assert memo[names.CLUSTER_MODE_MEMO]["mode"] == "monitor"
        read = await LedgerActivities(ts_env.client).cluster_mode(ledger_id)
        assert read.mode == Mode.MONITOR and read.set_by is not None and "erin" in read.set_by
    finally:
        await handle.terminate("test done")


@workflow.defn(name="OldLedger")
class OldLedger:
    """A ledger started before it published its mode: the mode lives only in the state its query shows."""

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: False)

    @workflow.query(name=names.LEDGER_VIEW)
    def view(self) -> LedgerView:
        return LedgerView.model_validate(
            {"cluster": "t", "policy": {}, "nodes": [], "mode_override": "monitor", "mode_set_by": "frank"}
        )


async def test_a_ledger_that_publishes_no_mode_is_read_by_its_query(ts_env):
    tq = "old-ledger-" + uuid.uuid4().hex[:6]
    async with Worker(ts_env.client, task_queue=tq, workflows=[OldLedger], workflow_runner=UnsandboxedWorkflowRunner()):
        handle = await ts_env.client.start_workflow(OldLedger.run, id=tq, task_queue=tq)
        try:
            read = await read_cluster_mode(ts_env.client, tq, _SECONDS)
        finally:
            await handle.terminate("test done")
    assert read.mode == Mode.MONITOR and read.set_by == "frank"
