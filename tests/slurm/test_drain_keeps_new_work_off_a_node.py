"""Drain and resume on the real cluster: a drained node gets no new work; both actions are idempotent."""

from __future__ import annotations

import pytest

from lazarus.models.slurm import JobState, NodeAction
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import UnknownNodeError
from tests.conftest import SlurmCluster, assert_eventually, submit_job
from tests.slurm.conftest import RecordingTransport, writes

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.asyncio]


async def test_a_drained_node_receives_no_new_work_until_resumed(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, jobs: list[int], restore_nodes: None
) -> None:
    node = "node3"
    drained = await local_client.drain(NodeAction(nodes=[node], reason="lazarus test: suspect gpu"))
    assert drained.changed == [node] and drained.nodes[0].drained
    assert drained.nodes[0].reason.startswith("lazarus test: suspect gpu")

    spread = submit_job(slurm_cluster, "srun true; sleep 30", nodes=3)
    pinned = submit_job(slurm_cluster, "sleep 30", nodelist=node)
    jobs.extend([spread, pinned])

    async def spread_runs() -> bool:
        job = await local_client.job(spread)
        return job.state is JobState.RUNNING and len(job.nodes) == 3

    await assert_eventually(spread_runs, timeout=60)
    assert node not in (await local_client.job(spread)).nodes
    assert (await local_client.job(pinned)).state is JobState.PENDING  # only fits on the drained node

    resumed = await local_client.resume(NodeAction(nodes=[node]))
    assert resumed.changed == [node] and not resumed.nodes[0].drained

    async def pinned_runs_on_node() -> bool:
        job = await local_client.job(pinned)
        return job.state is JobState.RUNNING and job.nodes == [node]

    await assert_eventually(pinned_runs_on_node, timeout=60)


async def test_drain_and_resume_twice_change_things_once(
    local_client: SlurmClient, recorder: RecordingTransport, restore_nodes: None
) -> None:
    action = NodeAction(nodes=["node[3-4]"], reason="lazarus test")
    first = await local_client.drain(action)
    second = await local_client.drain(action)
    assert first.changed == ["node3", "node4"] and second.changed == [] and second.unchanged == ["node3", "node4"]

    assert (await local_client.resume(action)).changed == ["node3", "node4"]
    again = await local_client.resume(action)
    assert again.changed == [] and all(not n.drained and not n.down for n in again.nodes)
    assert [call[3] for call in writes(recorder)] == ["State=DRAIN", "State=RESUME"]


async def test_an_unknown_node_is_refused_before_anything_changes(
    local_client: SlurmClient, recorder: RecordingTransport
) -> None:
    with pytest.raises(UnknownNodeError, match="node99"):
        await local_client.drain(NodeAction(nodes=["node1", "node99"], reason="x"))
    assert writes(recorder) == []
    assert not any(n.drained for n in await local_client.nodes() if n.name == "node1")
