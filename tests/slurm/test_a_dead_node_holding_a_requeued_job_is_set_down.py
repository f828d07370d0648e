"""A node found dead by Lazarus's liveness that holds a requeued job in COMPLETING is set DOWN only when its slurmd
does not answer either, and only while another node's slurmd does (lazarus/slurm/node_down.py). The real-cluster
half: on a cluster whose slurmds all answer, nothing is ever set down, whatever the request says."""

from __future__ import annotations

import pytest

from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.node_down import dead_nodes, default_slurmd_port, down_lost_nodes
from tests.conftest import SlurmCluster
from tests.slurm.conftest import RecordingTransport, writes


def test_a_lost_node_whose_slurmd_does_not_answer_while_another_does_is_dead() -> None:
    assert dead_nodes(["node2"], {"node1": True, "node2": False, "node3": True}) == ["node2"]


def test_when_no_other_slurmd_answers_this_worker_is_blind_and_no_node_is_dead() -> None:
    assert dead_nodes(["node2"], {"node1": False, "node2": False}) == []
    assert dead_nodes(["node2"], {"node2": False}) == []


def test_a_lost_node_whose_slurmd_answers_is_not_dead() -> None:
    assert dead_nodes(["node2"], {"node1": True, "node2": True}) == []


@pytest.mark.slurm
@pytest.mark.asyncio
async def test_a_node_whose_slurmd_answers_is_never_set_down(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport
) -> None:
    nodes = await local_client.nodes()
    assert all(n.address for n in nodes) and await default_slurmd_port(local_client)  # where each slurmd listens
    completing = JobSnapshot(job_id=999999, state=JobState.COMPLETING, nodes=["node1", "node2"])
    assert await down_lost_nodes(local_client, completing, ["node2"], lambda _: None) == []
    assert writes(recorder) == []
