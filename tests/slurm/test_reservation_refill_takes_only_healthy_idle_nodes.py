"""Spare pools on the real cluster: an untrusted member of a reservation is swapped for a healthy idle node of
the general pool, the reservation keeps its size, a repeat changes nothing, and a busy, drained or distrusted
node is never taken."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from lazarus.models.slurm import JobState, NodeAction
from lazarus.models.spares import RefillRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import UnknownReservationError
from tests.conftest import SlurmCluster, assert_eventually, job_output, submit_job
from tests.slurm.conftest import RecordingTransport, writes

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.asyncio]


def idle_nodes(cluster: SlurmCluster, among: tuple[str, ...]) -> list[str]:
    """Those of ``among`` idle now (the shared test cluster runs other engineers' jobs too)."""
    lines = cluster.run("sinfo", "-h", "-N", "-n", ",".join(among), "-o", "%N %T").stdout.split("\n")
    return [n for n, state in (line.split() for line in lines if line.strip()) if state.lower() == "idle"]


@pytest.fixture
def reservation(slurm_cluster: SlurmCluster) -> Iterator[str]:
    """A reservation of node1 and node2 for this test, deleted afterwards."""
    name = f"lz-spares-{os.getpid()}"
    slurm_cluster.run(
        "scontrol",
        "create",
        "reservation",
        f"ReservationName={name}",
        "Nodes=node[1-2]",
        "StartTime=now",
        "Duration=10",
        "Users=root",
        "Flags=IGNORE_JOBS",
    )
    yield name
    slurm_cluster.run("scontrol", "delete", f"ReservationName={name}", check=False)


async def test_an_untrusted_member_is_swapped_for_an_idle_node_once(
    slurm_cluster: SlurmCluster, local_client: SlurmClient, recorder: RecordingTransport, reservation: str
) -> None:
    await assert_eventually(lambda: idle_nodes(slurm_cluster, ("node3", "node4")), timeout=180)
    first = await local_client.refill_reservation(RefillRequest(reservation=reservation, distrusted=["node1"]))
    assert [s.out for s in first.swaps] == ["node1"] and first.short == []
    replacement = first.swaps[0].into
    assert replacement in ("node3", "node4")
    assert sorted(first.members) == sorted(["node2", replacement])  # the reservation keeps its size
    shown = await local_client.reservations()
    assert sorted(next(r for r in shown if r.name == reservation).nodes) == sorted(["node2", replacement])

    again = await local_client.refill_reservation(RefillRequest(reservation=reservation, distrusted=["node1"]))
    assert again.swaps == [] and sorted(again.members) == sorted(first.members)
    assert [c[2] for c in writes(recorder)] == [f"ReservationName={reservation}"]


async def test_busy_drained_and_distrusted_nodes_are_never_taken(
    slurm_cluster: SlurmCluster,
    local_client: SlurmClient,
    recorder: RecordingTransport,
    reservation: str,
    jobs: list[int],
    restore_nodes: None,
) -> None:
    await local_client.drain(NodeAction(nodes=["node3"], reason="lazarus test: spare pool"))
    busy = submit_job(slurm_cluster, "echo started; sleep 60", nodelist="node4")
    jobs.append(busy)

    async def node4_busy() -> bool:
        # Its script runs: a job cancelled while slurmd still launches it can leave node4 completing for minutes.
        output = job_output(slurm_cluster, busy)
        running = (await local_client.job(busy)).state is JobState.RUNNING
        return running and output.exists() and "started" in output.read_text()

    await assert_eventually(node4_busy, timeout=60)
    result = await local_client.refill_reservation(RefillRequest(reservation=reservation, distrusted=["node1"]))
    assert result.swaps == [] and result.short == ["node1"]
    assert sorted(result.members) == ["node1", "node2"]
    assert "node1" not in result.idle  # a distrusted member is no spare

    slurm_cluster.run("scancel", str(busy))
    await assert_eventually(lambda: idle_nodes(slurm_cluster, ("node4",)), timeout=180)
    distrusted = await local_client.refill_reservation(
        RefillRequest(reservation=reservation, distrusted=["node1", "node4"])
    )
    assert distrusted.swaps == [] and distrusted.short == ["node1"]  # node4 is free but distrusted

    refilled = await local_client.refill_reservation(RefillRequest(reservation=reservation, distrusted=["node1"]))
    assert [(s.out, s.into) for s in refilled.swaps] == [("node1", "node4")]
    assert sorted(refilled.members) == ["node2", "node4"]


async def test_an_unknown_reservation_is_refused_before_anything_changes(
    local_client: SlurmClient, recorder: RecordingTransport
) -> None:
    with pytest.raises(UnknownReservationError, match="no-such-pool"):
        await local_client.refill_reservation(RefillRequest(reservation="no-such-pool", distrusted=["node1"]))
    assert writes(recorder) == []
