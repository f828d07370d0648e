"""A worker refuses to start when the cluster's node ledger or telemetry lease runs on a task queue it does
not serve (task queues renamed under a running deployment): otherwise nobody would ever serve them, no job
would be watched, and nothing would say why. Absent or ended workflows, and the right queues, let it start."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from lazarus.config import Settings
from lazarus.models import names
from workers.queues import TaskQueueMismatchError, check_task_queues

pytestmark = [pytest.mark.temporal, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def temporal() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(dev_server_existing_path=str(Path(sys.executable).parent / "temporal"))
    yield env
    await env.shutdown()


def _settings() -> Settings:
    return Settings(cluster=f"up{uuid.uuid4().hex[:6]}")  # per-cluster task queues by default


async def _start(env: WorkflowEnvironment, wid: str, queue: str) -> None:
    """A running workflow on ``queue`` (no worker needed: only its task queue is read)."""
    await env.client.start_workflow(names.LEDGER_WORKFLOW, id=wid, task_queue=queue)


async def test_a_ledger_left_on_the_old_shared_queue_stops_the_worker_with_one_sentence(temporal) -> None:
    settings = _settings()
    await _start(temporal, names.ledger_id(settings.cluster), "lazarus-control")
    with pytest.raises(TaskQueueMismatchError) as err:
        await check_task_queues(temporal.client, settings)
    message = str(err.value)
    assert "'lazarus-control'" in message and f"'{settings.task_queues.control}'" in message
    assert "set task_queues" in message and "\n" not in message


async def test_a_lease_left_on_another_queue_stops_the_worker(temporal) -> None:
    settings = _settings()
    await _start(temporal, names.telemetry_lease_id(settings.cluster), "lazarus-telemetry")
    with pytest.raises(TaskQueueMismatchError, match="lazarus-telemetry"):
        await check_task_queues(temporal.client, settings)


async def test_workflows_on_the_configured_queues_absent_or_ended_let_the_worker_start(temporal) -> None:
    settings = _settings()
    await check_task_queues(temporal.client, settings)  # a new cluster: nothing runs yet
    await _start(temporal, names.ledger_id(settings.cluster), settings.task_queues.control)
    lease = names.telemetry_lease_id(settings.cluster)
    await _start(temporal, lease, "lazarus-telemetry")
    await temporal.client.get_workflow_handle(lease).terminate(reason="test: an ended lease is no obstacle")
    await check_task_queues(temporal.client, settings)
