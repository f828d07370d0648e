"""The kill switch fails closed (real Slurm, Temporal server and worker, act mode by configuration).

- Thrown between a job's discovery and its failure, in a way the job's own workflow never hears of (the
  switch lists running workflows, and a workflow started a moment earlier may not be listed yet): the node
  ledger remembers it, and the workflow reads it right before acting, so the advice waits for a person.
- With the ledger unreadable, nothing acts alone: a job discovered before the outage reads no mode at the
  moment of acting and waits for a person; a job discovered during it starts in monitor mode.
"""

from __future__ import annotations

import pytest
from temporalio.common import WorkflowIDConflictPolicy

from lazarus.models.ledger import LedgerInput, PolicyChange
from lazarus.models.names import LEDGER_WORKFLOW, SET_LEDGER_POLICY, ledger_id
from lazarus.models.policy import Mode
from lazarus.models.recovery import ModeChange, RecoveryState
from tests.e2e.helpers import restarts, restore_nodes, wait_state
from tests.e2e.stack import submit_training
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

# Crashes (Xid 79 on rank 1) at step 40, about 10 s after it starts: time to throw the switch in between.
LATE_CRASH = dict(steps=60, ckpt_every=10, fault="xid79", fault_rank=1, fault_step=40, fault_attempts="0")
NOBODY = "e2e-nobody-serves-this-queue"


async def set_cluster_mode(e2e, mode: Mode | None) -> None:
    """What `lazarus mode` records in the node ledger for jobs the switch does not reach (None clears it)."""
    client = await e2e.client()
    await client.get_workflow_handle(ledger_id("lztest")).signal(
        NodeLedgerWorkflow.set_cluster_mode, ModeChange(mode=mode, scope="cluster", operator="e2e-operator")
    )


async def test_a_kill_switch_thrown_after_discovery_holds_back_the_action(e2e, job_dir):
    job = submit_training(e2e.cluster, job_dir, **LATE_CRASH)
    status = await wait_state(e2e, job, RecoveryState.WATCHING, timeout=60)
    assert status.mode == Mode.ACT  # discovered, and started in act mode
    await set_cluster_mode(e2e, Mode.MONITOR)  # the kill switch, which this job's workflow never heard of
    try:
        status = await wait_state(
            e2e,
            job,
            RecoveryState.AWAITING_APPROVAL,
            RecoveryState.VERIFYING,
            RecoveryState.COMPLETED,
            RecoveryState.FAILED,
            timeout=90,
        )
        assert status.state == RecoveryState.AWAITING_APPROVAL and restarts(e2e.cluster, job) == 0
        assert status.mode == Mode.MONITOR and "kill switch" in status.advice.monitor_reason
    finally:
        await set_cluster_mode(e2e, None)
        e2e.cluster.run("scancel", str(job), check=False)
        restore_nodes(e2e.cluster)


async def test_an_unreadable_ledger_means_monitor(e2e, job_dir):
    for name in ("before", "during"):
        (job_dir / name).mkdir(mode=0o755)
    before = submit_training(e2e.cluster, job_dir / "before", **LATE_CRASH)
    await wait_state(e2e, before, RecoveryState.WATCHING, timeout=60)
    client = await e2e.client()
    # the ledger's id now names a workflow no worker serves: every read of it fails (times out)
    await client.start_workflow(
        LEDGER_WORKFLOW,
        LedgerInput(cluster="lztest"),
        id=ledger_id("lztest"),
        task_queue=NOBODY,
        id_conflict_policy=WorkflowIDConflictPolicy.TERMINATE_EXISTING,
    )
    try:
        during = submit_training(e2e.cluster, job_dir / "during", **LATE_CRASH)
        for job in (before, during):
            status = await wait_state(
                e2e,
                job,
                RecoveryState.AWAITING_APPROVAL,
                RecoveryState.VERIFYING,
                RecoveryState.COMPLETED,
                RecoveryState.FAILED,
                timeout=120,
            )
            assert status.state == RecoveryState.AWAITING_APPROVAL, (job, status.state)
            assert restarts(e2e.cluster, job) == 0
        assert "could not be read" in (await e2e.status(before)).advice.monitor_reason
        assert (await e2e.status(during)).mode == Mode.MONITOR
    finally:
        settings = e2e.settings  # the real ledger back, for the tests that follow, started as the workers start it
        await client.start_workflow(
            NodeLedgerWorkflow.run,
            LedgerInput(
                cluster="lztest",
                policy=settings.ledger,
                scheduler_queue=settings.task_queues.scheduler,
                telemetry_queue=settings.task_queues.telemetry,
            ),
            id=ledger_id("lztest"),
            task_queue=settings.task_queues.control,
            id_conflict_policy=WorkflowIDConflictPolicy.TERMINATE_EXISTING,
            start_signal=SET_LEDGER_POLICY,
            start_signal_args=[
                PolicyChange(
                    policy=settings.ledger,
                    by="configuration at worker start",
                    telemetry_queue=settings.task_queues.telemetry,
                )
            ],
        )
        e2e.cluster.run("scancel", str(before), str(during), check=False)
        restore_nodes(e2e.cluster)
