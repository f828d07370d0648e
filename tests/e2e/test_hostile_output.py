"""A job's user controls everything the job prints: on the real Slurm cluster and a real Temporal server,
a node named in a job's output counts only when it is in that attempt's allocation.

- A kernel line naming a node outside the allocation neither excludes nor drains that node; the record
  says the name was ignored.
- A hostlist naming 99,999 nodes implicates at most the allocation, and the job is still recovered.
"""

from __future__ import annotations

import json

import pytest

from lazarus.models.recovery import RecoveryState
from tests.conftest import submit_job
from tests.e2e.helpers import job_field, wait_state
from tests.e2e.stack import JOB_PREFIX, POLICY

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]


def hostile_job(e2e, job_dir, line: str, nodes: list[str]) -> int:
    """A 2-node job on ``nodes`` whose first attempt prints ``line`` and fails; the next attempt succeeds."""
    script = (
        "#!/bin/bash\n"
        'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then\n'
        f"  sleep 3\n  echo {json.dumps(line)}\n  sleep 3\n  exit 1\n"
        "fi\nsleep 2\n"
    )
    return submit_job(
        e2e.cluster,
        script,
        job_name=f"{JOB_PREFIX}hostile",
        nodes=2,
        nodelist=",".join(nodes),
        output=str(job_dir / "hostile-%j.out"),
        comment=json.dumps({"lazarus": {"policy": POLICY}}),
    )


def node_state(e2e, node: str) -> str:
    return e2e.cluster.run("sinfo", "-h", "-n", node, "-o", "%t").stdout.strip()


async def test_an_xid_naming_a_node_outside_the_allocation_neither_excludes_nor_drains_it(e2e, job_dir):
    mine, other = e2e.cluster.nodes[:2], e2e.cluster.nodes[3]
    line = (
        f"May  1 12:00:03 {other} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
        "name=<unknown>, GPU has fallen off the bus."
    )
    job = hostile_job(e2e, job_dir, line, mine)
    status = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=90
    )
    assert status.state == RecoveryState.COMPLETED, status.stop_reason
    first = status.attempts[0]
    diagnosis = first.anomaly.diagnosis
    assert diagnosis.signature == "xid_79_fallen_off_bus"
    assert diagnosis.implicated_nodes == []
    assert any(other in note and "outside" in note for note in diagnosis.notes), diagnosis.notes
    assert other not in status.attempts[1].excluded_nodes
    assert all(other not in a.exclude_nodes and other not in a.drain_nodes for a in status.advice_history)
    assert not node_state(e2e, other).startswith(("drain", "drng"))


async def test_a_hostlist_of_99999_nodes_implicates_at_most_the_allocation(e2e, job_dir):
    mine = e2e.cluster.nodes[:2]
    job = hostile_job(e2e, job_dir, "srun: error: Node failure on x[1-99999]", mine)
    status = await wait_state(
        e2e, job, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=90
    )
    assert status.state == RecoveryState.COMPLETED, status.stop_reason
    diagnosis = status.attempts[0].anomaly.diagnosis
    assert diagnosis.signature == "slurm_node_failure"
    assert diagnosis.implicated_nodes == []
    assert any("outside" in note for note in diagnosis.notes), diagnosis.notes
    assert sum(len(note) for note in diagnosis.notes) < 2000  # the record names a few, never 99,999
    assert job_field(e2e.cluster, job, "ExcNodeList") in ("", "(null)")
