"""Every scheduler activity refuses node names and job ids with shell metacharacters: the worker answers with
a typed, non-retryable ``InvalidArgument`` and runs no command at all, on the real test cluster's client.

A workflow hands activities whatever its inputs held (a forged allocation, a ledger record), so the activities
check again; tests/e2e/test_hostile_input.py shows the same through a running worker.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.scheduler import SlurmActivities
from lazarus.models.slurm import NodeAction, RestartRequest
from lazarus.slurm.client import SlurmClient
from tests.slurm.conftest import RecordingTransport

pytestmark = [pytest.mark.slurm, pytest.mark.asyncio]

NODE_NAMES = [
    "node1;touch {m}",
    "$(touch {m})",
    "`touch {m}`",
    "node1 && touch {m}",
    "node1|touch {m}",
    "node[1-2]>{m}",
    "node1\ntouch {m}",
]
JOB_IDS = ["1;touch {m}", "$(touch {m})", "1 && touch {m}", "1\n2"]


def node_calls(activities: SlurmActivities, name: str) -> list:
    """Each activity that takes node names, with the hostile one among them."""
    return [
        (activities.drain_nodes, NodeAction(nodes=["node2", name], reason="x")),
        (activities.resume_nodes, NodeAction(nodes=[name])),
        (activities.restart_excluding, RestartRequest(job_id=12, expected_attempt=0, exclude_nodes=[name])),
    ]


@pytest.mark.parametrize("template", NODE_NAMES)
async def test_each_activity_refuses_a_hostile_node_name_with_a_typed_error_and_runs_nothing(
    recorder: RecordingTransport, tmp_path: Path, template: str
) -> None:
    marker = tmp_path / "pwned"
    for fn, arg in node_calls(SlurmActivities(SlurmClient(recorder)), template.format(m=marker)):
        with pytest.raises(ApplicationError) as refused:
            await ActivityEnvironment().run(fn, arg)
        assert refused.value.type == "InvalidArgument" and refused.value.non_retryable, fn
    assert recorder.calls == [] and not marker.exists()


@pytest.mark.parametrize("template", JOB_IDS)
async def test_the_release_activity_refuses_a_hostile_job_id_and_runs_nothing(
    recorder: RecordingTransport, tmp_path: Path, template: str
) -> None:
    marker = tmp_path / "pwned"
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(SlurmActivities(SlurmClient(recorder)).release_job, template.format(m=marker))
    assert refused.value.type == "InvalidArgument" and refused.value.non_retryable
    assert recorder.calls == [] and not marker.exists()
