"""The node ledger: one drain per node however many jobs blame it, and only with corroboration from outside any
one job's own output (the node agent, Slurm's node state, jobs of several users); lemon nodes counted by users;
the drain budget; resume; it stays true to Slurm (reconciliation), takes a new policy while running, and stays
small."""

from __future__ import annotations

from datetime import timedelta

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from lazarus.cli.common import failure_message
from lazarus.models.diagnosis import EvidenceSource
from lazarus.models.ledger import DrainRequest, LedgerPolicy, PolicyChange, ResumeRequest
from lazarus.models.names import workflow_id
from lazarus.models.policy import Mode
from lazarus.models.slurm import NodeCensus, NodeState
from tests.workflows.harness import Running, ended, job_input, send, started, xid79_on
from tests.workflows.ledger_harness import FakeNodes, imp, record, running_ledger, settle
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="session")

WAITS = "drain waits for corroboration"


# ---- a drain needs more than one job's word ---------------------------------------------------------------


async def test_one_users_word_excludes_but_does_not_drain_and_the_record_says_the_drain_waits(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 7, at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].waiting)
        rec = await record(handle, "node2")
    assert fake.drain_calls == [] and not rec.drained
    assert rec.waiting.startswith(f"excluded from job 7 only; {WAITS}")
    assert fake.health_calls == [["node2"]]  # the node agent was asked, and found nothing wrong


async def test_more_jobs_of_the_same_user_neither_corroborate_nor_make_a_lemon(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, lemon_job_count=2) as handle:
        now = await ts_env.get_current_time()
        for job in (11, 12, 13):
            await handle.signal(NodeLedgerWorkflow.record_implication, imp("node5", job, user="mallory", at=now))
        await settle(ts_env, handle, lambda v: v.nodes and len(v.nodes[0].implications) == 3)
        rec = await record(handle, "node5")
    assert fake.drain_calls == [] and rec.waiting.startswith(f"excluded from job 13 only; {WAITS}")


async def test_a_second_users_job_corroborates_the_waiting_drain(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 7, user="alice", at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].waiting)
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 8, drain=False, user="bob", at=now))
        await settle(ts_env, handle, lambda v: v.nodes[0].drained)
        rec = await record(handle, "node2")
    assert fake.drain_calls == [["node2"]] and rec.drained_by_lazarus and rec.waiting is None
    assert rec.drain_reason.startswith("lazarus: nvrm_xid_79 in job 7 attempt 0; corroborated: jobs of 2 users")


async def test_the_node_agents_verdict_corroborates_at_once(ts_env):
    fake = FakeNodes(failed={"node3"})
    async with running_ledger(ts_env, fake) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node3", 7, at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained)
        rec = await record(handle, "node3")
    assert fake.drain_calls == [["node3"]]
    assert "corroborated: its node agent reports it failed (Xid 79)" in rec.drain_reason


async def test_a_verdict_that_comes_after_the_recheck_drains_the_waiting_node_at_the_next_reconciliation(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, reconcile_interval=timedelta(minutes=5)) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 7, at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].waiting)
        await ts_env.sleep(timedelta(minutes=1))  # the early re-check found nothing either
        assert fake.health_calls == [["node4"], ["node4"]] and fake.drain_calls == []
        fake.failed.add("node4")  # a fault the node's agent reports only minutes later
        await ts_env.sleep(timedelta(minutes=5))
        await settle(ts_env, handle, lambda v: v.nodes[0].drained)
    assert fake.drain_calls == [["node4"]] and len(fake.health_calls) == 3


async def test_a_verdict_one_agent_poll_behind_the_job_drains_the_node_at_the_early_recheck(ts_env):
    # the job printed the Xid before its node's agent polled the GPU: the drain waits, and is looked at again
    # ``waiting_recheck`` later rather than at the next reconciliation an hour away
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, reconcile_interval=timedelta(hours=1)) as handle:
        start = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 7, at=start))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].waiting)
        fake.failed.add("node4")
        await settle(ts_env, handle, lambda v: v.nodes[0].drained)
        drained_after = await ts_env.get_current_time() - start
    assert fake.drain_calls == [["node4"]] and fake.health_calls == [["node4"], ["node4"]]
    assert timedelta(seconds=30) <= drained_after < timedelta(minutes=2)


async def test_a_drain_nothing_corroborates_is_rechecked_once_not_polled(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, reconcile_interval=timedelta(hours=1)) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 7, at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].waiting)
        await ts_env.sleep(timedelta(minutes=5))
        rec = await record(handle, "node4")
    assert fake.health_calls == [["node4"], ["node4"]] and fake.drain_calls == []
    assert rec.waiting.startswith(f"excluded from job 7 only; {WAITS}")


async def test_slurms_own_node_state_corroborates(ts_env):
    fake = FakeNodes()
    fake.admin("node6", "DOWN", reason="Not responding")
    async with running_ledger(ts_env, fake) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node6", 7, at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained)
        rec = await record(handle, "node6")
    assert "corroborated: Slurm shows it DOWN (Not responding)" in rec.drain_reason
    assert fake.health_calls == []  # Slurm's word was enough


async def test_evidence_telemetry_read_outside_the_job_corroborates(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(
            NodeLedgerWorkflow.record_implication, imp("node1", 7, at=now, source=EvidenceSource.NODE_AGENT)
        )
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained)
        rec = await record(handle, "node1")
    assert "corroborated: node agent evidence in job 7" in rec.drain_reason


async def test_the_job_is_told_its_drain_waits_and_then_that_the_node_was_drained(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, cluster="test") as ledger:
        inp = job_input(Mode.ACT).model_copy(update={"ledger_workflow_id": ledger.id})
        async with Running(ts_env.client, inp, workflow_id=workflow_id("test", inp.job_id)) as run:
            await send(run.handle, started(0), xid79_on("node2"), ended(0))
            await settle(ts_env, ledger, lambda v: v.nodes and v.nodes[0].waiting)
            now = await ts_env.get_current_time()
            await ledger.signal(
                NodeLedgerWorkflow.record_implication, imp("node2", 99, drain=False, user="bob", at=now)
            )
            await settle(ts_env, ledger, lambda v: v.nodes[0].drained)
            for _ in range(50):
                notes = (await run.handle.query(JobRecoveryWorkflow.status)).ledger_notes
                if len(notes) == 2:
                    break
                await ts_env.sleep(timedelta(seconds=1))
            await run.handle.terminate("test done")
    assert run.fake.drains == [] and fake.drain_calls == [["node2"]]  # the ledger drained it, not the job
    assert run.fake.restarts[0].exclude_nodes == ["node2"]
    assert notes[0].startswith(f"node2: excluded from job {inp.job_id} only; {WAITS}")
    assert notes[1].startswith("node2 drained by the node ledger: lazarus: nvrm_xid_79")


# ---- one drain per node, lemons, the budget, resume ----------------------------------------------------------


async def test_two_jobs_implicating_one_node_produce_one_drain(ts_env):
    fake = FakeNodes(failed={"node2"})
    async with running_ledger(ts_env, fake) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 1, at=now))
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 2, user="bob", at=now))
        await settle(ts_env, handle, lambda v: len(v.nodes[0].implications) == 2)
    assert fake.drain_calls == [["node2"]]


async def test_a_node_blamed_by_jobs_of_three_users_is_drained_as_a_lemon(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, lemon_job_count=3) as handle:
        now = await ts_env.get_current_time()
        for job, user in ((11, "ann"), (12, "ann"), (13, "bob"), (14, "cid")):
            await handle.signal(
                NodeLedgerWorkflow.record_implication, imp("node5", job, drain=False, user=user, at=now)
            )
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained_by_lazarus)
        rec = await record(handle, "node5")
    assert rec.drain_reason.startswith("lazarus: lemon node: implicated by jobs of 3 users (4 jobs: 11,12,13,14)")
    assert fake.nodes["node5"].drained


async def test_drains_stop_at_the_budget(ts_env):
    fake = FakeNodes(count=8, failed={"node1", "node2", "node3"})
    async with running_ledger(ts_env, fake, max_drain_fraction=0.25) as handle:
        now = await ts_env.get_current_time()
        for i, node in enumerate(("node1", "node2", "node3"), start=1):
            await handle.signal(NodeLedgerWorkflow.record_implication, imp(node, 100 + i, at=now))
        await settle(ts_env, handle, lambda v: len(v.nodes) == 3 and v.nodes[2].refused)
        view = await handle.query(NodeLedgerWorkflow.view)
    assert fake.drain_calls == [["node1"], ["node2"]]
    assert "budget 25%" in view.nodes[2].refused[0]


async def test_resume_returns_the_node_and_records_who(ts_env):
    fake = FakeNodes(failed={"node4"})
    async with running_ledger(ts_env, fake) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 7, at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained_by_lazarus)
        await handle.execute_update(NodeLedgerWorkflow.resume_node, ResumeRequest(node="node4", operator="carol"))
        view = await handle.query(NodeLedgerWorkflow.view)
    assert view.nodes[0].resumed_by == "carol" and not view.nodes[0].drained
    assert not fake.nodes["node4"].drained


async def test_operator_drain_is_recorded_with_who_and_why(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake) as handle:
        await handle.execute_update(
            NodeLedgerWorkflow.drain_node, DrainRequest(node="node6", operator="dave", reason="fan noise")
        )
        view = await handle.query(NodeLedgerWorkflow.view)
    assert fake.nodes["node6"].drained and "fan noise (by dave via lazarus)" in fake.nodes["node6"].reason
    assert view.nodes[0].drained_by == "dave"


async def test_an_operator_drain_then_resume_leaves_the_node_in_service(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake) as handle:
        await handle.execute_update(
            NodeLedgerWorkflow.drain_node, DrainRequest(node="node3", operator="dave", reason="fan noise")
        )
        await handle.execute_update(NodeLedgerWorkflow.resume_node, ResumeRequest(node="node3", operator="dave"))
        [rec] = (await handle.query(NodeLedgerWorkflow.view)).nodes
    assert not rec.drained and rec.drained_by is None and rec.resumed_by == "dave"


# ---- the ledger stays true to Slurm --------------------------------------------------------------------------


async def test_a_node_resumed_outside_lazarus_is_noticed_at_the_next_reconciliation(ts_env):
    fake = FakeNodes(failed={"node4"})
    async with running_ledger(ts_env, fake, reconcile_interval=timedelta(minutes=5)) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 7, at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained)
        fake.admin("node4", "IDLE")  # scontrol update nodename=node4 state=resume
        await ts_env.sleep(timedelta(minutes=6))
        await settle(ts_env, handle, lambda v: not v.nodes[0].drained)
        [rec] = (await handle.query(NodeLedgerWorkflow.view)).nodes
    assert rec.resumed_by == "outside Lazarus" and rec.resumed_at is not None
    assert rec.slurm_state == "IDLE"
    assert "resumed outside Lazarus, seen at" in rec.history[-1]


async def test_a_node_resumed_outside_lazarus_is_drained_again_for_a_new_fault(ts_env):
    fake = FakeNodes(failed={"node4"})
    async with running_ledger(ts_env, fake, reconcile_interval=timedelta(days=1)) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 7, at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained)
        fake.admin("node4", "IDLE")  # the timer has not fired: only the check before a drain can notice
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node4", 8, at=now))
        await settle(ts_env, handle, lambda v: len(v.nodes[0].implications) == 2 and fake.nodes["node4"].drained)
        [rec] = (await handle.query(NodeLedgerWorkflow.view)).nodes
    assert fake.drain_calls == [["node4"], ["node4"]]
    assert rec.drained_by_lazarus and "job 8" in rec.drain_reason


async def test_a_node_drained_by_someone_else_is_recorded_as_such(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, reconcile_interval=timedelta(minutes=5)) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 7, drain=False, at=now))
        await settle(ts_env, handle, lambda v: v.nodes)
        fake.admin("node2", "IDLE+DRAIN", reason="bad DIMM")
        await ts_env.sleep(timedelta(minutes=6))
        await settle(ts_env, handle, lambda v: v.nodes[0].drained)
        [rec] = (await handle.query(NodeLedgerWorkflow.view)).nodes
    assert rec.drained_by == "outside Lazarus" and rec.drain_reason == "bad DIMM"
    assert not rec.drained_by_lazarus and fake.drain_calls == []


async def test_the_policy_can_be_changed_without_restarting_the_ledger(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, lemon_job_count=3) as handle:
        await handle.signal(
            NodeLedgerWorkflow.set_policy,
            PolicyChange(policy=LedgerPolicy(lemon_job_count=2), by="config at worker start"),
        )
        now = await ts_env.get_current_time()
        for job, user in ((21, "ann"), (22, "bob")):
            await handle.signal(
                NodeLedgerWorkflow.record_implication, imp("node5", job, drain=False, user=user, at=now)
            )
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].drained)
        view = await handle.query(NodeLedgerWorkflow.view)
    assert view.policy.lemon_job_count == 2 and view.policy_set_by == "config at worker start"
    assert "lemon node: implicated by jobs of 2 users" in view.nodes[0].drain_reason


# ---- the ledger stays small ----------------------------------------------------------------------------------


async def test_records_of_nodes_slurm_does_not_know_are_pruned(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake, reconcile_interval=timedelta(minutes=5)) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node99", 7, drain=False, at=now))
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node1", 7, drain=False, at=now))
        await settle(ts_env, handle, lambda v: len(v.nodes) == 2)
        await ts_env.sleep(timedelta(minutes=6))
        await settle(ts_env, handle, lambda v: [r.node for r in v.nodes] == ["node1"])


async def test_the_ledgers_reads_of_slurm_carry_its_own_nodes_only_however_large_the_cluster(ts_env):
    """A read of the whole node list would put every node of the cluster into the ledger's history at each
    reconciliation (1.5 MB at 20,000 nodes, every few minutes): the census carries the counts the drain budget
    needs and the states of the nodes the ledger keeps records of."""
    fake = FakeNodes(count=3000, failed={"node7"})
    for n in range(1, 751):  # a quarter of the cluster already drained by someone else: the budget is spent
        fake.nodes[f"node{2000 + n}"] = NodeState(name=f"node{2000 + n}", state="IDLE+DRAIN", reason="maintenance")
    async with running_ledger(ts_env, fake, max_drain_fraction=0.25, reconcile_interval=timedelta(minutes=5)) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node7", 7, at=now))
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].refused)
        await ts_env.sleep(timedelta(minutes=11))  # two reconciliations
        await settle(ts_env, handle, lambda v: v.nodes and v.nodes[0].node == "node7")
        view = await handle.query(NodeLedgerWorkflow.view)
        history = await handle.fetch_history()
    assert fake.drain_calls == [] and "750/3000 nodes already drained" in view.nodes[0].refused[0]
    reads = [
        e.activity_task_completed_event_attributes.result.payloads[0].data
        for e in history.events
        if e.HasField("activity_task_completed_event_attributes")
    ]
    census = [NodeCensus.model_validate_json(r) for r in reads if b'"total"' in r]
    assert len(census) >= 3  # the implication's read and the reconciliations
    assert all(c.total == 3000 and [s.name for s in c.states] == ["node7"] for c in census)
    assert max(len(r) for r in reads) < 2_000


async def test_records_whose_drain_was_refused_are_pruned_once_their_implications_expire(ts_env):
    fake = FakeNodes(count=4, failed={"node1", "node2"})
    async with running_ledger(
        ts_env, fake, max_drain_fraction=0.25, lemon_window=timedelta(hours=1), reconcile_interval=timedelta(minutes=30)
    ) as handle:
        now = await ts_env.get_current_time()
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node1", 1, at=now))
        await handle.signal(NodeLedgerWorkflow.record_implication, imp("node2", 2, at=now))
        await settle(ts_env, handle, lambda v: len(v.nodes) == 2 and v.nodes[1].refused)
        await ts_env.sleep(timedelta(hours=2, minutes=31))
        await settle(ts_env, handle, lambda v: [r.node for r in v.nodes] == ["node1"])


async def test_the_ledger_keeps_only_the_newest_implications_up_to_its_cap(ts_env):
    fake = FakeNodes(count=14)
    async with running_ledger(ts_env, fake, max_implications=10) as handle:
        start = await ts_env.get_current_time()
        for job in range(1, 15):
            await handle.signal(
                NodeLedgerWorkflow.record_implication,
                imp(f"node{job}", job, drain=False, at=start + timedelta(seconds=job)),
            )
        await settle(ts_env, handle, lambda v: any(i.job_id == 14 for r in v.nodes for i in r.implications))
        view = await handle.query(NodeLedgerWorkflow.view)
    kept = sorted(i.job_id for r in view.nodes for i in r.implications)
    assert kept == list(range(5, 15)) and {r.node for r in view.nodes} == {f"node{j}" for j in range(5, 15)}


async def test_a_refused_operator_drain_carries_slurms_reason_to_the_caller(ts_env):
    fake = FakeNodes()
    async with running_ledger(ts_env, fake) as handle:
        with pytest.raises(WorkflowUpdateFailedError) as caught:
            await handle.execute_update(
                NodeLedgerWorkflow.drain_node, DrainRequest(node="node9", operator="dave", reason="fan noise")
            )
        view = await handle.query(NodeLedgerWorkflow.view)
    assert failure_message(caught.value) == "node9: not a node of this cluster"
    assert isinstance(caught.value.cause, ApplicationError) and caught.value.cause.type == "UnknownNode"
    assert view.nodes == []  # nothing recorded for a node that does not exist
