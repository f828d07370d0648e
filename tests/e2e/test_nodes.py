"""`lazarus nodes` against the real stack: the ledger stays true to Slurm, the listing shows both views
side by side, and a refused drain says why in one sentence."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from lazarus.models.ledger import Implication, LedgerPolicy, PolicyChange
from lazarus.models.names import ledger_id
from tests.e2e.helpers import restore_nodes
from tests.e2e.stack import E2EStack
from tests.e2e.test_cli import lazarus
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]


async def ledger_ready(e2e: E2EStack) -> None:
    for _ in range(60):  # the telemetry worker starts the ledger on its first cycle
        if lazarus(e2e, "nodes", "--json", check=False).returncode == 0:
            return
        await asyncio.sleep(0.5)
    raise AssertionError("no node ledger")


def record(e2e: E2EStack, node: str) -> dict:
    [row] = [r for r in json.loads(lazarus(e2e, "nodes", "--json").stdout)["nodes"] if r["node"] == node]
    return row


def slurm_state(e2e: E2EStack, node: str) -> str:
    return e2e.cluster.run("sinfo", "-h", "-n", node, "-o", "%t").stdout.strip()


async def eventually(check, timeout: float = 30) -> None:
    for _ in range(int(timeout / 0.5)):
        if check():
            return
        await asyncio.sleep(0.5)
    assert check()


async def test_the_workers_send_the_configured_policy_and_an_operator_can_change_it(e2e):
    await ledger_ready(e2e)
    handle = (await e2e.client()).get_workflow_handle(ledger_id("lztest"))
    view = await handle.query(NodeLedgerWorkflow.view)
    assert view.policy == e2e.settings.ledger and view.policy_set_by == "configuration at worker start"
    try:
        out = lazarus(e2e, "nodes", "policy", "--max-drain-fraction", "0.5").stdout
        assert "max_drain_fraction   0.5" in out
        assert (await handle.query(NodeLedgerWorkflow.view)).policy.max_drain_fraction == 0.5
        bad = lazarus(e2e, "nodes", "policy", "--max-drain-fraction", "2", check=False)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "max_drain_fraction" in bad.stderr
    finally:
        await handle.signal(NodeLedgerWorkflow.set_policy, PolicyChange(policy=e2e.settings.ledger, by="e2e test"))


async def test_a_node_drained_and_resumed_through_lazarus_is_listed_in_service(e2e):
    await ledger_ready(e2e)
    try:
        lazarus(e2e, "nodes", "drain", "node4", "--reason", "fan noise")
        assert record(e2e, "node4")["drained"] is True
        lazarus(e2e, "nodes", "resume", "node4")
        row = record(e2e, "node4")
        assert row["drained"] is False and row["slurm"]["drained"] is False and row["agrees"] is True
        [line] = [ln for ln in lazarus(e2e, "nodes").stdout.splitlines() if ln.startswith("node4 ")]
        drained, state = line.split()[3:5]  # NODE JOBS USERS DRAINED SLURM
        # a job of another test may already run there again: idle, mixed or allocated, never drained
        assert drained == "no" and not state.startswith(("drain", "drng")) and "≠" not in line
    finally:
        restore_nodes(e2e.cluster)


async def test_a_node_resumed_with_scontrol_is_shown_as_a_disagreement_then_reconciled(e2e):
    await ledger_ready(e2e)
    handle = (await e2e.client()).get_workflow_handle(ledger_id("lztest"))
    try:
        lazarus(e2e, "nodes", "drain", "node3", "--reason", "bad DIMM")
        e2e.cluster.run("scontrol", "update", "nodename=node3", "state=resume")
        row = record(e2e, "node3")  # the listing reads Slurm itself: the ledger has not caught up yet
        assert row["drained"] is True and row["slurm"]["drained"] is False and row["agrees"] is False
        [line] = [ln for ln in lazarus(e2e, "nodes").stdout.splitlines() if ln.startswith("node3 ")]
        assert "≠" in line
        view = await handle.query(NodeLedgerWorkflow.view)
        fast = view.policy.model_copy(update={"reconcile_interval": timedelta(seconds=1)})
        await handle.signal(NodeLedgerWorkflow.set_policy, PolicyChange(policy=fast, by="e2e test"))
        await eventually(lambda: record(e2e, "node3")["drained"] is False)
        row = record(e2e, "node3")
        assert row["resumed_by"] == "outside Lazarus" and row["agrees"] is True
        # a new hardware fault on it, which jobs of two users report, drains it again: the stale record no
        # longer blocks the drain
        for job, user in ((424242, "ann"), (424243, "bob")):
            await handle.signal(
                NodeLedgerWorkflow.record_implication,
                Implication(
                    node="node3",
                    job_id=job,
                    attempt=0,
                    signature="nvrm_xid_79",
                    category="hardware",
                    at=datetime.now(UTC),
                    drain_requested=True,
                    user=user,
                ),
            )
        await eventually(lambda: slurm_state(e2e, "node3").startswith(("drain", "drng")))
    finally:
        await handle.signal(NodeLedgerWorkflow.set_policy, PolicyChange(policy=LedgerPolicy(), by="e2e test"))
        restore_nodes(e2e.cluster)


async def test_draining_a_node_that_does_not_exist_says_why_in_one_sentence(e2e):
    await ledger_ready(e2e)
    proc = lazarus(e2e, "nodes", "drain", "node9", "--reason", "fan noise", check=False)
    assert proc.returncode != 0
    [line] = proc.stderr.strip().splitlines()
    assert line.endswith("node9: not a node of this cluster") and "Activity task failed" not in line
