"""A drain needs more than one job's word (trust rule): on the real Slurm cluster and a real Temporal server, a
job's own output may exclude a node of its allocation from that job's restart, but draining the node for everyone
waits for corroboration from outside the job.

- One user's job printing an Xid for a node of its allocation restarts without the node; the node stays in
  service, and both `lazarus nodes` and the job's history say the drain waits for corroboration.
- A job of a second user implicating the same node corroborates it: the node is drained.
- The node's own agent (fake NVML reporting the Xid) corroborates it: the node is drained at once.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from lazarus.models.recovery import JobStatus, RecoveryState
from tests.conftest import assert_eventually, submit_job
from tests.e2e.agents import node_agents
from tests.e2e.helpers import lazarus_cli, restore_nodes, wait_state
from tests.e2e.stack import JOB_PREFIX, POLICY, E2EStack

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]

WAITS = "drain waits for corroboration"
OTHER_USER = "nobody"


def xid_job(
    e2e: E2EStack, out_dir: Path, user: str | None = None, bad: str | None = None, fake_gpus: Path | None = None
) -> int:
    """A 2-node job whose first attempt prints an Xid for ``bad`` (default: the second node of its allocation)
    and fails; the next attempt succeeds. With ``fake_gpus`` the node's fake GPU raises the Xid first, as the
    demo's does, so the node's agent sees it."""
    line = "May  1 12:00:03 $BAD kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus."
    hardware = f'  echo "0 79" >> "{fake_gpus}/$BAD/nvml-events"; sleep 2\n' if fake_gpus else ""
    script = (
        "#!/bin/bash\n"
        'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then\n'
        f"  BAD={bad or ''}\n"
        '  BAD=${BAD:-$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 2p)}\n'
        f'  sleep 3\n{hardware}  echo "{line}"\n  sleep 3\n  exit 1\nfi\nsleep 2\n'
    )
    return submit_job(
        e2e.cluster,
        script,
        job_name=f"{JOB_PREFIX}xid",
        nodes=2,
        output=str(out_dir / "xid-%j.out"),
        uid=user,
        comment=json.dumps({"lazarus": {"policy": POLICY}}),
    )


def blamed(status: JobStatus) -> str:
    """The node the job's first attempt blamed, excluded from its restart."""
    [bad] = status.attempts[0].anomaly.diagnosis.implicated_nodes
    assert bad in status.attempts[0].nodes and status.attempts[1].excluded_nodes == [bad], status.attempts
    assert bad not in status.attempts[1].nodes
    return bad


def other_users_dir() -> Path:
    """A job directory the other user can write its output to (and Lazarus read: its files are that user's)."""
    path = Path(tempfile.mkdtemp(prefix="lz-e2e-other-", dir="/tmp"))
    shutil.chown(path, OTHER_USER)
    path.chmod(0o755)
    return path


async def occupy(e2e: E2EStack, nodes: list[str], seconds: int) -> None:
    """Keep ``nodes`` busy for ``seconds`` with jobs Lazarus does not watch, so the next job lands elsewhere."""
    jobs = [submit_job(e2e.cluster, f"sleep {seconds}", nodes=1, nodelist=node, output="/dev/null") for node in nodes]

    def running() -> bool:
        states = e2e.cluster.run("squeue", "-h", "-o", "%T", "-j", ",".join(map(str, jobs))).stdout.split()
        return states == ["RUNNING"] * len(jobs)

    await assert_eventually(running, timeout=30)


def ledger_record(e2e: E2EStack, node: str) -> dict | None:
    rows = json.loads(lazarus_cli(e2e, "nodes", "--json").stdout)["nodes"]
    return next((r for r in rows if r["node"] == node), None)


def slurm_drained(e2e: E2EStack, node: str) -> bool:
    return e2e.cluster.run("sinfo", "-h", "-n", node, "-o", "%t").stdout.strip().startswith(("drain", "drng"))


async def recovered(e2e: E2EStack, job: int) -> JobStatus:
    status = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
    )
    assert status.state == RecoveryState.COMPLETED, status.stop_reason
    return status


async def with_ledger_note(e2e: E2EStack, job_id: int) -> JobStatus | None:
    status = await e2e.status(job_id)
    return status if status.ledger_notes else None


@pytest.fixture
def fresh_nodes(e2e):
    restore_nodes(e2e.cluster)
    yield
    restore_nodes(e2e.cluster)


async def test_one_users_xid_excludes_the_node_from_that_job_only_and_a_second_user_corroborates_the_drain(
    e2e, job_dir, fresh_nodes
):
    first = await recovered(e2e, xid_job(e2e, job_dir))
    bad = blamed(first)
    record = await assert_eventually(lambda: ledger_record(e2e, bad), timeout=20)
    assert not slurm_drained(e2e, bad) and record["drained"] is False, record
    waiting = await assert_eventually(lambda: ledger_record(e2e, bad).get("waiting"), timeout=20)
    assert f"excluded from job {first.job_id} only; {WAITS}" in waiting
    status = await assert_eventually(lambda: with_ledger_note(e2e, first.job_id), timeout=20)
    assert any(WAITS in note for note in status.ledger_notes), status.ledger_notes
    assert WAITS in lazarus_cli(e2e, "show", str(first.job_id)).stdout
    assert WAITS in lazarus_cli(e2e, "nodes").stdout

    companion, *others = [n for n in e2e.cluster.nodes if n != bad]
    await occupy(e2e, others, seconds=20)  # the second user's job lands on the same node
    second = await recovered(e2e, xid_job(e2e, other_users_dir(), user=OTHER_USER, bad=bad))
    assert blamed(second) == bad and sorted(second.attempts[0].nodes) == sorted([bad, companion])
    await assert_eventually(lambda: slurm_drained(e2e, bad), timeout=30)
    record = ledger_record(e2e, bad)
    assert record["drained_by_lazarus"] and "corroborated: jobs of 2 users" in record["drain_reason"], record
    assert record["waiting"] is None


async def test_the_node_agents_verdict_corroborates_the_drain(e2e, job_dir, fresh_nodes, tmp_path):
    with node_agents(e2e, tmp_path) as fake_gpus:
        job = await recovered(e2e, xid_job(e2e, job_dir, fake_gpus=fake_gpus))
        bad = blamed(job)
        await assert_eventually(lambda: slurm_drained(e2e, bad), timeout=30)
    record = ledger_record(e2e, bad)
    assert record["drained_by_lazarus"] and "its node agent reports it failed (Xid 79)" in record["drain_reason"]
    assert record["waiting"] is None
    status = await assert_eventually(lambda: with_ledger_note(e2e, job.job_id), timeout=20)
    assert status.ledger_notes[-1].startswith(f"{bad} drained by the node ledger")
