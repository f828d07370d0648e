"""The workflows record their metrics through Temporal's meter: a real worker records each fact once, with the
cluster and the SDK's labels, and replaying the same history records nothing (a fact is never counted twice
when another worker takes the workflow over)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.runtime import MetricBuffer, Runtime, TelemetryConfig
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from lazarus.models.policy import Mode
from lazarus.models.slurm import JobState
from tests.workflows.conftest import register_search_attributes
from tests.workflows.harness import Running, ended, job_input, send, started, xid79_on
from tests.workflows.ledger_harness import FakeNodes, imp, running_ledger, settle
from workflows.callers import CallerInterceptor
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow

pytestmark = pytest.mark.asyncio(loop_scope="module")

BUFFER = MetricBuffer(10_000)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def metered_env() -> AsyncIterator[WorkflowEnvironment]:
    """A time-skipping server whose runtime keeps every metric update in :data:`BUFFER`."""
    runtime = Runtime(telemetry=TelemetryConfig(metrics=BUFFER))
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=str(Path(sys.executable).parent / "temporal-test-server"),
        data_converter=pydantic_data_converter,
        runtime=runtime,
    )
    await register_search_attributes(env.client)
    env.runtime = runtime  # type: ignore[attr-defined]
    yield env
    await env.shutdown()


def lazarus_updates() -> list[tuple[str, float, dict[str, Any]]]:
    return [
        (u.metric.name, u.value, dict(u.attributes))
        for u in BUFFER.retrieve_updates()
        if u.metric.name.startswith("lazarus_")
    ]


async def test_a_recovery_records_each_fact_once_and_its_replay_records_nothing(metered_env):
    lazarus_updates()  # start from an empty buffer
    async with Running(metered_env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), xid79_on("node2"), ended(0))
        await send(run.handle, started(1, nodes=("node1", "node3"), excluded=("node2",)))
        await send(run.handle, ended(1, JobState.COMPLETED, 0))
        await run.handle.result()
        history = await run.handle.fetch_history()
    updates = lazarus_updates()
    counted = sorted(name for name, _, _ in updates)
    assert counted == [
        "lazarus_action_latency_seconds",  # requeue verified
        "lazarus_action_latency_seconds",  # next attempt running elsewhere
        "lazarus_advice_total",
        "lazarus_detection_latency_seconds",
        "lazarus_detections_total",
        "lazarus_jobs_finished_total",
        "lazarus_recoveries_total",
        "lazarus_recovery_milestone_seconds",  # fault -> requeued
        "lazarus_recovery_milestone_seconds",  # fault -> running
        "lazarus_recovery_milestone_seconds",  # fault -> completed (no progress line: never training again)
    ]
    [(_, value, labels)] = [u for u in updates if u[0] == "lazarus_detections_total"]
    assert value == 1
    assert labels["cluster"] == "test" and labels["signature"] == "nvrm_xid_79" and labels["category"] == "hardware"
    assert labels["workflow_type"] == "JobRecoveryWorkflow" and "task_queue" in labels

    replayer = Replayer(
        workflows=[JobRecoveryWorkflow],
        data_converter=pydantic_data_converter,
        runtime=metered_env.runtime,
        interceptors=[CallerInterceptor()],
    )
    await replayer.replay_workflow(history)
    assert lazarus_updates() == []


async def test_the_ledger_counts_its_drains_and_the_drain_the_budget_refused(metered_env):
    lazarus_updates()
    fake = FakeNodes(count=8, failed={"node1", "node2", "node3"})  # the node agents corroborate each drain
    async with running_ledger(metered_env, fake, max_drain_fraction=0.25) as handle:
        now = await metered_env.get_current_time()
        for i, node in enumerate(("node1", "node2", "node3"), start=1):
            await handle.signal(NodeLedgerWorkflow.record_implication, imp(node, 100 + i, at=now))
        await settle(metered_env, handle, lambda v: len(v.nodes) == 3 and v.nodes[2].refused)
    counted = [(name, labels.get("by") or labels.get("reason")) for name, _, labels in lazarus_updates()]
    assert sorted(counted) == [
        ("lazarus_drains_refused_total", "budget"),
        ("lazarus_drains_total", "lazarus"),
        ("lazarus_drains_total", "lazarus"),
    ]
