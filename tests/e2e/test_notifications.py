"""Spec: the worker posts notices to real webhooks on loopback (tests/e2e/receiver.py), as generic JSON and
as Slack-compatible text, each linking to the job's history in the Temporal UI: advice awaiting approval, the
job stopped after its rejection, a node drained and a drain refused by the budget (both drains corroborated by
the node's own agent, which sees the Xid on its fake GPU). A webhook that fails is
retried without posting twice to the webhooks that took the notice; a webhook subscribed to some kinds only
gets those."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lazarus.models.names import workflow_id
from lazarus.models.recovery import JobStatus, RecoveryState
from tests.conftest import assert_eventually
from tests.e2e.agents import node_agents
from tests.e2e.helpers import lazarus_cli, restore_nodes, wait_state
from tests.e2e.receiver import Receiver
from tests.e2e.stack import POLICY, E2EStack, submit_training

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

CRASH = dict(steps=25, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0")


def _of(webhooks: Receiver, path: str, kind: str, **match: Any) -> list[dict[str, Any]]:
    return [
        b for b in webhooks.bodies(path) if b.get("kind", kind) == kind and all(b.get(k) == v for k, v in match.items())
    ]


async def _one(webhooks: Receiver, path: str, kind: str, **match: Any) -> dict[str, Any]:
    try:
        return (await assert_eventually(lambda: _of(webhooks, path, kind, **match), timeout=60))[0]
    except AssertionError as exc:
        posted = [{k: b.get(k) for k in ("kind", "node", "job_id", "reason")} for b in webhooks.bodies(path)]
        raise AssertionError(f"no {kind} notice with {match} on {path} within 60 s; posted: {posted}") from exc


async def _restarted(e2e: E2EStack, job: int) -> JobStatus:
    """The job's status once Lazarus has requeued its first attempt (act mode)."""

    async def requeued() -> JobStatus | None:
        status = await e2e.status(job)
        return status if status.attempts and status.attempts[0].requeued_at else None

    return await assert_eventually(requeued, timeout=90, interval=0.5)


def _link(e2e: E2EStack, job: int) -> str:
    return f"http://127.0.0.1:{e2e.ui_port}/namespaces/default/workflows/{workflow_id('lztest', job)}"


async def test_advice_awaiting_approval_and_the_stop_are_posted_as_json_and_slack_text(
    e2e: E2EStack, webhooks: Receiver, job_dir: Path
):
    job = submit_training(e2e.cluster, job_dir, comment={"lazarus": {"policy": POLICY, "mode": "monitor"}}, **CRASH)
    status = await wait_state(e2e, job, RecoveryState.AWAITING_APPROVAL)

    notice = await _one(webhooks, "/json", "advice-pending", job_id=job)
    assert notice["generation"] == status.advice.generation and notice["action"] == "restart"
    assert notice["link"] == _link(e2e, job) and notice["cluster"] == "lztest"
    assert notice["nodes"] == status.advice.exclude_nodes and "awaits approval" in notice["text"]
    slack = await assert_eventually(lambda: [b for b in webhooks.bodies("/slack") if f"|job {job}>" in b["text"]])
    assert list(slack[0]) == ["text"] and f"<{_link(e2e, job)}|job {job}>" in slack[0]["text"]

    # the flaky webhook failed once and got it on the retry; the others were not posted to twice
    flaky = await assert_eventually(lambda: len(_of(webhooks, "/flaky", "advice-pending", job_id=job)) == 2)
    assert flaky and len(_of(webhooks, "/json", "advice-pending", job_id=job)) == 1

    lazarus_cli(e2e, "advice", "reject", str(job), "--operator", "bob")
    await wait_state(e2e, job, RecoveryState.STOPPED, timeout=60)
    stopped = await _one(webhooks, "/json", "job-stopped", job_id=job)
    assert "rejected" in stopped["text"] and stopped["link"] == _link(e2e, job)
    assert not [b for b in webhooks.bodies("/slack") if f"|job {job}>" in b["text"] and "stopped" in b["text"]]


async def test_a_drain_and_a_drain_refused_by_the_budget_are_posted(
    e2e: E2EStack, webhooks: Receiver, job_dir: Path, tmp_path: Path
):
    restore_nodes(e2e.cluster)
    (job_dir / "a").mkdir()
    (job_dir / "b").mkdir()
    try:
        with node_agents(e2e, tmp_path) as fake_gpus:
            await _drained_then_refused(e2e, webhooks, job_dir, fake_gpus)
    finally:
        restore_nodes(e2e.cluster)


async def _drained_then_refused(e2e: E2EStack, webhooks: Receiver, job_dir: Path, fake_gpus: Path) -> None:
    """Two hardware faults, each seen by its node's agent: the first node is drained, the second refused."""
    first = submit_training(e2e.cluster, job_dir / "a", **CRASH, fake_gpu_dir=fake_gpus)
    status = await _restarted(e2e, first)
    (drained_node,) = status.advice_history[0].drain_nodes
    drained = await _one(webhooks, "/json", "node-drained", node=drained_node, job_id=first)
    assert drained["link"] == _link(e2e, first) and drained_node in drained["text"]
    await assert_eventually(lambda: [b for b in webhooks.bodies("/slack") if f"node {drained_node}" in b["text"]])

    # a quarter of the cluster is drained now: the next hardware fault's drain is refused, and said so
    second = submit_training(e2e.cluster, job_dir / "b", **CRASH, fake_gpu_dir=fake_gpus)
    status = await _restarted(e2e, second)
    (refused_node,) = status.advice_history[0].drain_nodes
    refused = await _one(webhooks, "/json", "drain-refused", node=refused_node, job_id=second)
    assert "budget 25%" in refused["reason"] and refused["link"] == _link(e2e, second)
