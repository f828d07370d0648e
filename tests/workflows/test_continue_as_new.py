"""Long-lived job workflows continue-as-new when the server suggests it, carrying their whole record
(real dev server, with the suggestion threshold lowered to 20 events)."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.common import SearchAttributeKey
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from lazarus.models.policy import Mode
from lazarus.models.recovery import RecoveryState
from lazarus.models.search_attributes import SEARCH_ATTRIBUTES
from lazarus.models.slurm import JobState
from tests.conftest import assert_eventually
from tests.workflows.harness import T0, Running, ended, job_input, progress, send, started, xid79_on

pytestmark = pytest.mark.asyncio(loop_scope="session")

_KEYS = {
    "Keyword": SearchAttributeKey.for_keyword,
    "Int": SearchAttributeKey.for_int,
    "KeywordList": SearchAttributeKey.for_keyword_list,
}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def dev_env():
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        data_converter=pydantic_data_converter,
        search_attributes=[_KEYS[t](name) for name, t in SEARCH_ATTRIBUTES.items()],
        dev_server_extra_args=["--dynamic-config-value", "limit.historyCount.suggestContinueAsNew=20"],
    )
    yield env
    await env.shutdown()


async def test_state_survives_continue_as_new(dev_env):
    async with Running(dev_env.client, job_input(Mode.ACT)) as run:
        await send(run.handle, started(0), progress(0, 10, T0, checkpoint=10), xid79_on("node2"), ended(0))
        await send(run.handle, started(1, ("node1", "node3")))
        for step in range(11, 40):
            await send(run.handle, progress(1, step, T0 + timedelta(seconds=step), checkpoint=step))
        await send(run.handle, ended(1, JobState.COMPLETED, 0))
        status = await run.handle.result()

        async def runs():
            return len([wf async for wf in dev_env.client.list_workflows(f'WorkflowId="{run.handle.id}"')]) > 1

        assert await assert_eventually(runs, timeout=10)  # it did continue as new (visibility lags a little)
    assert status.state == RecoveryState.COMPLETED
    assert [a.index for a in status.attempts] == [0, 1]
    assert status.attempts[1].last_step == 39 and status.attempts[0].anomaly.diagnosis.implicated_nodes == ["node2"]
    assert len(run.fake.restarts) == 1
