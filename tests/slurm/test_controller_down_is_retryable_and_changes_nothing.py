"""With the test cluster's slurmctld stopped, reads and actions fail with a retryable, clear error and change nothing.

The client under test uses MessageTimeout=1 (see ``impatient_slurm_conf``) so
it gives up in about a second instead of ~18 s: the shared cluster's
controller is down only briefly, and another pytest session bringing the
cluster up in the meantime cannot turn the outage into a success.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lazarus.devstack import procs
from lazarus.devstack.stack import DevStack, Parts
from lazarus.models.slurm import JobState, RestartRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import ControllerUnreachableError
from lazarus.slurm.transport import LocalTransport
from tests.conftest import SlurmCluster
from tests.slurm.conftest import RecordingTransport, impatient_slurm_conf, running_two_node_job, writes

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.asyncio]


@pytest.fixture
def stopped_controller(slurm_cluster: SlurmCluster) -> Iterator[None]:
    """Stop only the test cluster's slurmctld (by its pid file and marker); always start it again."""
    stack = DevStack(slurm_cluster.dev, Parts(temporal=False, workers=False))
    pid = procs.marked_pid(slurm_cluster.pid_file("slurmctld"), stack.marker)
    assert pid is not None, "the test cluster's slurmctld is not running"
    try:
        os.kill(pid, signal.SIGTERM)
        assert procs.wait_dead([pid], 15) == [], "slurmctld did not stop"
        yield
    finally:
        stack.up()  # starts only what is down: the controller


async def test_stopped_controller_is_a_retryable_error_and_nothing_changes(
    slurm_cluster: SlurmCluster,
    local_client: SlurmClient,
    jobs: list[int],
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    job_id = await running_two_node_job(slurm_cluster, local_client, jobs)
    before = await local_client.job(job_id)
    recorder = RecordingTransport(LocalTransport(impatient_slurm_conf(slurm_cluster, tmp_path)))
    impatient = SlurmClient(recorder)

    request.getfixturevalue("stopped_controller")
    started = time.monotonic()
    with pytest.raises(ControllerUnreachableError) as read_error:
        await impatient.jobs()
    with pytest.raises(ControllerUnreachableError) as action_error:
        await impatient.restart_excluding(
            RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[before.nodes[0]])
        )
    elapsed = time.monotonic() - started
    assert read_error.value.retryable and action_error.value.retryable
    assert "Slurm controller unreachable" in str(action_error.value)
    assert writes(recorder) == []
    print(f"controller-down errors after {elapsed:.1f} s")

    # Back up (the fixture's finaliser runs at teardown; bring it up now to compare state).
    DevStack(slurm_cluster.dev, Parts(temporal=False, workers=False)).up()
    after = await local_client.job(job_id)
    assert after.state is JobState.RUNNING and after.restarts == 0 and after.nodes == before.nodes
    assert after.excluded_nodes == [] and not after.held
