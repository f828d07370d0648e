"""Hot spares on the real cluster and a real Temporal server: a reservation of three nodes, a 2-node training
job in it, the fourth node busy with other work.

- A hardware fault on one node makes the job run again on the reservation's spare within seconds (Slurm starts
  it there at once: the reservation's third node is free for it).
- The node ledger then wants the faulty node out of the reservation, but the only node of the general pool is
  busy: it records the pool short (`lazarus spares`) and notifies.
- Once that node is free it refills the reservation from the general pool: Slurm's reservation lists the two
  healthy members and the new node, and the job's history says so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from lazarus.models.recovery import RecoveryState
from tests.conftest import assert_eventually, submit_job
from tests.e2e.helpers import json_lines, lazarus_cli, ledger_started, restore_nodes, wait_state
from tests.e2e.receiver import Receiver
from tests.e2e.stack import JOB_PREFIX, SPARES_POLICY, SPARES_RESERVATION, E2EStack

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

MEMBERS = ("node1", "node2", "node3")
OTHER = "node4"
XID = "May  1 12:00:03 $BAD kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus."


def reservation_nodes(e2e: E2EStack) -> list[str]:
    shown = e2e.cluster.run("scontrol", "show", "reservation", SPARES_RESERVATION).stdout
    hostlist = next(word.split("=", 1)[1] for word in shown.split() if word.startswith("Nodes="))
    return e2e.cluster.run("scontrol", "show", "hostnames", hostlist).stdout.split()


@pytest.fixture
def reservation(e2e: E2EStack) -> Iterator[str]:
    """The reservation of node1-3 the spare pool policy names; deleted afterwards."""
    restore_nodes(e2e.cluster)
    e2e.cluster.run(
        "scontrol",
        "create",
        "reservation",
        f"ReservationName={SPARES_RESERVATION}",
        f"Nodes={','.join(MEMBERS)}",
        "StartTime=now",
        "Duration=30",
        "Users=root",
        "Flags=IGNORE_JOBS",
    )
    yield SPARES_RESERVATION
    jobs = e2e.cluster.run("squeue", "-h", "-R", SPARES_RESERVATION, "-o", "%i", check=False).stdout.split()
    if jobs:  # a reservation in use cannot be deleted, and it would keep other tests off three nodes
        e2e.cluster.run("scancel", *jobs, check=False)
    for _ in range(60):  # its jobs take a moment to end
        shown = e2e.cluster.run("scontrol", "show", "reservation", SPARES_RESERVATION, check=False)
        if shown.returncode != 0 or SPARES_RESERVATION not in shown.stdout:
            break
        e2e.cluster.run("scontrol", "delete", f"ReservationName={SPARES_RESERVATION}", check=False)
        time.sleep(1)
    restore_nodes(e2e.cluster)


def training_job(e2e: E2EStack, out_dir: Path) -> int:
    """A 2-node job in the reservation: its first attempt prints an Xid for its second node and fails; the next
    attempt trains for a while (long enough for the pool to be refilled while it runs) and completes."""
    script = (
        "#!/bin/bash\n"
        'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then\n'
        '  BAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 2p)\n'
        f'  sleep 3\n  echo "{XID}"\n  sleep 3\n  exit 1\nfi\n'
        'for i in $(seq 1 90); do echo "LAZARUS step=$i"; sleep 0.5; done\n'
    )
    return submit_job(
        e2e.cluster,
        script,
        job_name=f"{JOB_PREFIX}spares",
        nodes=2,
        reservation=SPARES_RESERVATION,
        output=str(out_dir / "spares-%j.out"),
        comment=json.dumps({"lazarus": {"policy": SPARES_POLICY}}),
    )


def pool(e2e: E2EStack) -> dict | None:
    rows = json_lines(lazarus_cli(e2e, "spares", "--json").stdout)
    return next((r for r in rows if r["reservation"] == SPARES_RESERVATION), None)


async def test_a_hardware_fault_moves_the_job_to_the_spare_and_the_pool_is_refilled_once_a_node_is_free(
    e2e: E2EStack, job_dir: Path, reservation: str, webhooks: Receiver
) -> None:
    await ledger_started(e2e)  # the first test on a fresh stack can come before the telemetry worker's first cycle
    for node in [*MEMBERS, OTHER]:  # an operator's resume: earlier tests' implications of these nodes no longer count
        lazarus_cli(e2e, "nodes", "resume", node, "--comment", "spares test: a clean slate")
    # Busy until the test cancels it: with the default 2-minute limit, a slow run saw it end on its own and the
    # pool refilled from the node it freed before the test looked for the shortfall.
    other = submit_job(e2e.cluster, "sleep 600", nodes=1, nodelist=OTHER, output="/dev/null", time="10")
    try:
        await assert_eventually(
            lambda: e2e.cluster.run("squeue", "-h", "-o", "%T", "-j", str(other)).stdout.strip() == "RUNNING",
            timeout=120,
        )
        job = training_job(e2e, job_dir)
        status = await assert_eventually(lambda: _second_attempt_running(e2e, job), timeout=120)
        first, second = status.attempts[0], status.attempts[1]
        [bad] = first.anomaly.diagnosis.implicated_nodes
        assert set(first.nodes) <= set(MEMBERS) and bad in first.nodes
        assert bad not in second.nodes and set(second.nodes) <= set(MEMBERS)  # the spare, in the reservation
        assert second.started_at - first.ended_at < timedelta(seconds=20), (first.ended_at, second.started_at)

        short = await assert_eventually(lambda: (p := pool(e2e)) is not None and p["short"] == [bad] and p, timeout=60)
        assert sorted(short["members"]) == sorted(MEMBERS) and short["refills"] == 0
        assert sorted(reservation_nodes(e2e)) == sorted(MEMBERS)  # nothing free to take: the reservation keeps its size
        await assert_eventually(
            lambda: any(b["kind"] == "spares-short" and b["nodes"] == [bad] for b in webhooks.bodies("/json")),
            timeout=30,
        )

        e2e.cluster.run("scancel", str(other))  # the other work ends: the general pool has a free node
        try:
            refilled = await assert_eventually(
                lambda: (p := pool(e2e)) is not None and p["refills"] == 1 and p, timeout=60
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}\npool: {pool(e2e)}\nworker log:\n{e2e.log_tail(lines=60)}") from None
        healthy = sorted(m for m in MEMBERS if m != bad)
        assert sorted(reservation_nodes(e2e)) == sorted([*healthy, OTHER])
        assert sorted(refilled["members"]) == sorted([*healthy, OTHER]) and refilled["short"] == []
        table = lazarus_cli(e2e, "spares").stdout
        assert SPARES_RESERVATION in table and f"{bad} -> {OTHER}" in table

        told = await assert_eventually(lambda: _noted(e2e, job, f"{bad} replaced by {OTHER}"), timeout=30)
        assert SPARES_RESERVATION in told
        done = await wait_state(e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, timeout=120)
        assert done.state == RecoveryState.COMPLETED, done.stop_reason
    finally:
        e2e.cluster.run("scancel", str(other), check=False)


async def _second_attempt_running(e2e: E2EStack, job: int):
    status = await e2e.status(job)
    return status if len(status.attempts) >= 2 and status.attempts[1].started_at else None


async def _noted(e2e: E2EStack, job: int, text: str) -> str | None:
    status = await e2e.status(job)
    return next((note for note in status.ledger_notes if text in note), None)
