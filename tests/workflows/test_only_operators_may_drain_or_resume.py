"""Only the configured operators may drain or resume a node, or throw the cluster-wide kill switch, through
the node ledger; who they are is the caller's identity (the ``lazarus-caller`` header), not the request's text.

A drain or resume (updates) from anyone else is refused with the reason; a cluster-mode signal from anyone
else is ignored and kept in the ledger's ``refused`` (shown by `lazarus nodes`). The list reaches a running
ledger with the workers' ``set_policy`` at their start.
"""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowUpdateFailedError

from lazarus.models.ledger import DrainRequest, LedgerPolicy, PolicyChange, ResumeRequest
from lazarus.models.policy import Mode
from lazarus.models.recovery import ModeChange
from tests.workflows.harness import as_caller
from tests.workflows.ledger_harness import FakeNodes, record, running_ledger, settle
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_an_operator_drains_and_resumes_and_the_record_names_the_caller(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, operators=("alice",)) as handle:
        alice = as_caller(ts_env.client, "alice").get_workflow_handle(handle.id)
        await alice.execute_update(
            NodeLedgerWorkflow.drain_node, DrainRequest(node="node3", operator="alice", reason="fan noise")
        )
        drained = await record(handle, "node3")
        await alice.execute_update(NodeLedgerWorkflow.resume_node, ResumeRequest(node="node3", operator="on-call"))
        resumed = await record(handle, "node3")
    assert drained.drained and "(by alice via lazarus)" in (drained.drain_reason or "")
    assert fake.nodes["node3"].state == "IDLE" and not resumed.drained
    assert resumed.resumed_by == "alice (note: on-call)"


async def test_a_drain_or_resume_from_a_caller_not_permitted_is_refused_with_the_reason(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, operators=("alice",)) as handle:
        mallory = as_caller(ts_env.client, "mallory").get_workflow_handle(handle.id)
        with pytest.raises(WorkflowUpdateFailedError) as drain:
            await mallory.execute_update(
                NodeLedgerWorkflow.drain_node, DrainRequest(node="node3", operator="alice", reason="mine now")
            )
        with pytest.raises(WorkflowUpdateFailedError) as resume:
            await mallory.execute_update(NodeLedgerWorkflow.resume_node, ResumeRequest(node="node3", operator="alice"))
    assert "mallory is not permitted to drain node node3" in str(drain.value.cause)
    assert "mallory is not permitted to resume node node3" in str(resume.value.cause)
    assert fake.drain_calls == [] and fake.nodes["node3"].state == "IDLE"


async def test_a_kill_switch_from_a_caller_not_permitted_is_ignored_and_recorded(ts_env):
    async with running_ledger(ts_env, FakeNodes(), operators=("alice",)) as handle:
        mallory = as_caller(ts_env.client, "mallory").get_workflow_handle(handle.id)
        await mallory.signal(NodeLedgerWorkflow.set_cluster_mode, ModeChange(mode=Mode.ACT, scope="cluster"))
        await settle(ts_env, handle, lambda v: v.refused)
        alice = as_caller(ts_env.client, "alice").get_workflow_handle(handle.id)
        await alice.signal(NodeLedgerWorkflow.set_cluster_mode, ModeChange(mode=Mode.MONITOR, scope="cluster"))
        await settle(ts_env, handle, lambda v: v.mode_override)
        view = await handle.query(NodeLedgerWorkflow.view)
    assert view.mode_override == "monitor" and view.mode_set_by == "alice (note: cli)"
    assert len(view.refused) == 1 and "refused mode signal from mallory (note: cli)" in view.refused[0]


async def test_the_workers_policy_brings_the_configured_operators_to_a_running_ledger(ts_env):
    async with running_ledger(ts_env, FakeNodes()) as handle:
        change = PolicyChange(policy=LedgerPolicy(), by="configuration at worker start", operators=["alice"])
        await handle.signal(NodeLedgerWorkflow.set_policy, change)
        await settle(ts_env, handle, lambda v: v.operators == ["alice"])
        with pytest.raises(WorkflowUpdateFailedError) as err:
            await (
                as_caller(ts_env.client, "bob")
                .get_workflow_handle(handle.id)
                .execute_update(NodeLedgerWorkflow.resume_node, ResumeRequest(node="node1", operator="bob"))
            )
    assert "bob is not permitted to resume node node1" in str(err.value.cause)
