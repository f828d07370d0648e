"""A dead node under a job being restarted: set it DOWN now rather than after ``SlurmdTimeout``.

A job requeued off a node that died stays COMPLETING until the node confirms its processes are gone, which a dead
node never does: Slurm waits ``SlurmdTimeout`` (300 s by default) before it marks the node DOWN itself, ends the
attempt as a node failure and requeues the job. The restart does not wait for that when two sources outside the
job agree the node is dead:

- Lazarus's liveness (the request's ``lost_nodes``): the node's agent is silent while the other agents answer,
  and the job's progress stopped (lazarus/telemetry/liveness.py);
- the scheduler side: the node's slurmd does not accept a connection while another node's slurmd does (so an
  unreachable network from this worker is never taken for dead nodes).

Only nodes the job still holds (RUNNING or COMPLETING) are set DOWN, with a reason naming Lazarus. With
``ReturnToService=2`` the node returns to service by itself when its slurmd registers again, as after Slurm's own
DOWN; until then no work lands there, as Slurm would have decided ``SlurmdTimeout`` later.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from lazarus.models.slurm import JobSnapshot, JobState, NodeState
from lazarus.slurm import validate
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.waiting import Heartbeat

CONNECT_TIMEOUT_S = 2.0
DOWN_REASON = "lazarus: node lost (node agent silent, slurmd unreachable), job requeued off it"


def dead_nodes(candidates: list[str], answers: Mapping[str, bool]) -> list[str]:
    """The candidates whose slurmd did not answer, provided at least one other node's slurmd did (else this
    worker cannot see the nodes at all: no verdict)."""
    controls = [n for n, ok in answers.items() if n not in candidates and ok]
    if not controls:
        return []
    return sorted(n for n in candidates if answers.get(n) is False)


async def default_slurmd_port(client: SlurmReader) -> int | None:
    """The cluster's ``SlurmdPort``: ``scontrol show node`` shows a node's Port only when it differs from it."""
    for line in (await client.run(["scontrol", "show", "config"], "the configuration")).stdout.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "SlurmdPort" and value.strip().isdigit():
            return int(value.strip())
    return None


async def _answers(node: NodeState, default_port: int | None) -> bool | None:
    """Whether the node's slurmd accepts a TCP connection; None when its address is not known."""
    port = node.port or default_port
    if not node.address or port is None:
        return None
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(node.address, port), CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError):
        return False
    writer.close()
    return True


async def down_lost_nodes(client: SlurmReader, job: JobSnapshot, lost: list[str], heartbeat: Heartbeat) -> list[str]:
    """Set DOWN the ``lost`` nodes that ``job`` holds and whose slurmd does not answer; return them."""
    if job.state not in (JobState.RUNNING, JobState.COMPLETING):
        return []
    candidates = sorted(set(validate.node_names(lost)) & set(job.nodes))
    if not candidates:
        return []
    nodes = {n.name: n for n in await client.nodes()}
    asked = [n for n in nodes.values() if n.name in candidates or not (n.down or n.drained)]
    default_port = await default_slurmd_port(client)
    replies = await asyncio.gather(*(_answers(n, default_port) for n in asked))
    answers = {n.name: ok for n, ok in zip(asked, replies, strict=True) if ok is not None}
    dead = [n for n in dead_nodes(candidates, answers) if not nodes[n].down]
    if dead:
        argv = ["scontrol", "update", f"NodeName={validate.hostlist_expr(dead)}", "State=DOWN", f"Reason={DOWN_REASON}"]
        await client.run(argv, f"node(s) {', '.join(dead)}")
        heartbeat(f"job {job.job_id}: set {', '.join(dead)} DOWN (dead, under the job)")
    return dead
