"""Workers start as one unit: when one role fails, the roles already started are shut down, with one message.

The roles start one after another on an ``AsyncExitStack``. A role that cannot
be built, or whose worker stops with a fatal error once running, unwinds the
stack: every worker already polling is shut down, and the process exits with
one line that names the role, instead of leaving the other roles serving.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio import activity
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from lazarus.errors import ConfigError
from workers.host import WorkerStartError, start_roles

pytestmark = [pytest.mark.temporal]
REPO = Path(__file__).resolve().parents[2]


@activity.defn
async def noop() -> None:
    """An activity, so the worker has something to poll for."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def temporal() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(dev_server_existing_path=str(Path(sys.executable).parent / "temporal"))
    yield env
    await env.shutdown()


def _unbuildable() -> Worker:
    raise ConfigError("telemetry.offsets_file: /nonexistent is not writable")


@pytest.mark.asyncio(loop_scope="module")
async def test_a_role_that_cannot_start_shuts_down_the_role_already_polling(temporal: WorkflowEnvironment) -> None:
    control = Worker(temporal.client, task_queue=f"lz-{uuid.uuid4().hex[:8]}", activities=[noop])
    with pytest.raises(WorkerStartError, match=r"^the telemetry worker failed to start: telemetry\.offsets_file"):
        async with AsyncExitStack() as stack:
            await start_roles(stack, {"control": lambda: control, "telemetry": _unbuildable})
            pytest.fail("start_roles returned although the telemetry role failed")
    assert control.is_shutdown


@pytest.mark.asyncio(loop_scope="module")
async def test_a_worker_that_dies_after_starting_takes_the_others_down_with_one_message(
    temporal: WorkflowEnvironment, tmp_path: Path
) -> None:
    config = tmp_path / "lazarus.yaml"
    address = temporal.client.service_client.config.target_host
    config.write_text(f"temporal:\n  address: {address}\n  namespace: no-such-namespace\n")
    proc = subprocess.run(
        [sys.executable, "-m", "workers.host", "--role", "all", "--config", str(config)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    ours = [line for line in proc.stderr.splitlines() if line.startswith("lazarus worker:")]
    assert proc.returncode == 2, proc.stderr
    assert len(ours) == 1, proc.stderr
    assert "worker stopped: " in ours[0] and "no-such-namespace" in ours[0]
