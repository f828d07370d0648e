"""Drain and resume nodes: read fresh node state, change only what differs, verify.

DRAIN rather than DOWN to keep work off a node: with ``ReturnToService=2`` an
admin DOWN is undone as soon as the node's slurmd answers, while DRAIN stays
until someone resumes it. Jobs already running on a draining node keep
running; no new work lands there.

RESUME is only sent for nodes that are drained or down: Slurm answers
"Invalid node state specified" for a node already in service, and a retry
of this action must not turn into an error.
"""

from __future__ import annotations

from collections.abc import Callable

from lazarus.models.slurm import NodeAction, NodeActionResult, NodeState
from lazarus.slurm import validate
from lazarus.slurm.errors import UnknownNodeError
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.waiting import Heartbeat, wait_for

DEFAULT_DRAIN_REASON = "drained by lazarus"


async def drain(client: SlurmReader, action: NodeAction, heartbeat: Heartbeat) -> NodeActionResult:
    names = validate.node_names(action.nodes)
    reason = validate.reason(action.reason, default=DEFAULT_DRAIN_REASON)
    current = await _current(client, names)
    todo = [name for name in names if not current[name].drained]
    if todo:
        argv = ["scontrol", "update", f"NodeName={validate.hostlist_expr(todo)}", "State=DRAIN", f"Reason={reason}"]
        await client.run(argv, f"node(s) {', '.join(todo)}")
    return await _verified(client, names, todo, lambda n: n.drained, "drained", heartbeat)


async def resume(client: SlurmReader, action: NodeAction, heartbeat: Heartbeat) -> NodeActionResult:
    names = validate.node_names(action.nodes)
    current = await _current(client, names)
    todo = [name for name in names if current[name].drained or current[name].down]
    if todo:
        argv = ["scontrol", "update", f"NodeName={validate.hostlist_expr(todo)}", "State=RESUME"]
        await client.run(argv, f"node(s) {', '.join(todo)}")
    # A node whose slurmd is dead stays DOWN after RESUME: verification fails (retryable) and says so.
    return await _verified(client, names, todo, lambda n: not (n.drained or n.down), "in service", heartbeat)


async def _current(client: SlurmReader, names: list[str]) -> dict[str, NodeState]:
    """Fresh state of ``names``; unknown names are refused before anything is changed."""
    if not names:
        return {}
    by_name = {node.name: node for node in await client.nodes()}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise UnknownNodeError(f"{', '.join(unknown)}: not a node of this cluster")
    return {name: by_name[name] for name in names}


async def _verified(
    client: SlurmReader,
    names: list[str],
    changed: list[str],
    wanted: Callable[[NodeState], bool],
    what: str,
    heartbeat: Heartbeat,
) -> NodeActionResult:
    """Read the nodes until all of ``names`` satisfy ``wanted``, then report what this call changed."""
    if not names:
        return NodeActionResult()
    nodes = await wait_for(
        lambda: _current(client, names),
        lambda current: all(wanted(n) for n in current.values()),
        timeout=client.verify_timeout,
        what=f"node(s) {', '.join(names)} {what}",
        heartbeat=heartbeat,
    )
    return NodeActionResult(
        changed=changed, unchanged=[n for n in names if n not in changed], nodes=list(nodes.values())
    )
