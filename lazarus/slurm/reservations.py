"""Keep a spare pool's reservation healthy: swap untrusted members for healthy idle nodes, verified.

The same discipline as every action: read the reservation and the nodes fresh, change only what differs,
then read again until the reservation shows the intended node list. A member leaves only when a healthy
idle node of the general pool (in no reservation, not drained or down, not distrusted by the node ledger)
takes its place, so the reservation keeps its size; members left without a replacement are reported
``short`` and the caller tries again later. A retry after a crash finds the swap already made and changes
nothing.
"""

from __future__ import annotations

from lazarus.models.slurm import NodeState
from lazarus.models.spares import RefillRequest, RefillResult, Reservation, Swap
from lazarus.slurm import validate
from lazarus.slurm.errors import UnknownReservationError
from lazarus.slurm.reads import SlurmReader
from lazarus.slurm.waiting import Heartbeat, wait_for

_UNHEALTHY = ("DRAIN", "DOWN", "FAIL", "NOT_RESPONDING", "MAINT", "POWER", "REBOOT")


def healthy(node: NodeState) -> bool:
    """Slurm shows nothing wrong with the node (not drained, down, failing, in maintenance or powering)."""
    state = node.state.upper()
    return not state.endswith("*") and not any(flag in state for flag in _UNHEALTHY)


def idle(node: NodeState) -> bool:
    """Healthy and running nothing (a reservation's own idle members show ``IDLE+RESERVED``)."""
    return healthy(node) and node.state.upper().split("+")[0] == "IDLE"


def plan(
    reservation: Reservation, reservations: list[Reservation], nodes: list[NodeState], distrusted: set[str]
) -> tuple[list[Swap], list[str]]:
    """The swaps to make and the untrusted members left without a replacement. Pure."""
    by_name = {n.name: n for n in nodes}
    reserved = {name for r in reservations for name in r.nodes}
    out = [m for m in reservation.nodes if m in distrusted or (m in by_name and not healthy(by_name[m]))]
    free = [n.name for n in nodes if n.name not in reserved and n.name not in distrusted and idle(n)]
    swaps = [Swap(out=o, into=i) for o, i in zip(out, free, strict=False)]
    return swaps, out[len(swaps) :]


async def reservation(client: SlurmReader, name: str) -> Reservation:
    """The reservation ``name`` as Slurm holds it now; :class:`UnknownReservationError` when it does not."""
    for found in await client.reservations():
        if found.name == name:
            return found
    raise UnknownReservationError(f"Slurm has no reservation {name!r}")


async def refill(client: SlurmReader, request: RefillRequest, heartbeat: Heartbeat) -> RefillResult:
    """Swap the reservation's untrusted or unhealthy members for healthy idle nodes; verified."""
    distrusted = set(validate.node_names(request.distrusted)) if request.distrusted else set()
    reservations = await client.reservations()
    current = next((r for r in reservations if r.name == request.reservation), None)
    if current is None:
        raise UnknownReservationError(f"Slurm has no reservation {request.reservation!r}")
    nodes = await client.nodes()
    swaps, short = plan(current, reservations, nodes, distrusted)
    members = current.nodes
    if swaps:
        leaving = {s.out for s in swaps}
        wanted = sorted({*(m for m in members if m not in leaving), *(s.into for s in swaps)})
        argv = ["scontrol", "update", f"ReservationName={current.name}", f"Nodes={validate.hostlist_expr(wanted)}"]
        await client.run(argv, f"reservation {current.name}")
        after = await wait_for(
            lambda: reservation(client, current.name),
            lambda r: set(r.nodes) == set(wanted),
            timeout=client.verify_timeout,
            what=f"reservation {current.name} on {validate.hostlist_expr(wanted)}",
            heartbeat=heartbeat,
        )
        members = after.nodes
        nodes = await client.nodes()
    by_name = {n.name: n for n in nodes}
    spare = [m for m in members if m not in distrusted and m in by_name and idle(by_name[m])]
    return RefillResult(reservation=current.name, members=members, swaps=swaps, short=short, idle=spare)
