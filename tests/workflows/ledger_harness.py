"""Helpers for the node ledger's workflow tests (and scripts/record_histories.py): Slurm's nodes and the node
agents' verdicts as in-memory doubles, and a ledger served by them that always ends with the test."""

from __future__ import annotations

import uuid
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from lazarus.models.diagnosis import EvidenceSource
from lazarus.models.ledger import (
    Implication,
    LedgerInput,
    LedgerPolicy,
    NodeHealthQuery,
    NodeHealthReport,
    NodeHealthVerdict,
)
from lazarus.models.slurm import NodeAction, NodeActionResult, NodeCensus, NodeCensusRequest, NodeState

try:
    from lazarus.models.spares import RefillRequest, RefillResult, Reservation
    from lazarus.slurm.reservations import plan
except ModuleNotFoundError:  # a revision from before spare pools (record_histories.py --rev)
    SPARES = False
else:
    SPARES = True
from tests.workflows.harness import workflow_interceptors
from tests.workflows.notify_double import notify_activities
from workflows.node_ledger import NodeLedgerWorkflow


class FakeNodes:
    """Slurm's nodes, and the node agents' verdicts (``failed``: the nodes whose agent reports them failed)."""

    def __init__(self, count: int = 8, failed: set[str] | None = None) -> None:
        self.nodes = {f"node{i}": NodeState(name=f"node{i}", state="IDLE") for i in range(1, count + 1)}
        self.failed = set(failed or ())
        self.drain_calls: list[list[str]] = []
        self.health_calls: list[list[str]] = []
        self.notices: list[Any] = []  # what the notify double was given
        self.reservations: dict[str, list[str]] = {}  # Slurm's reservations and their nodes
        self.refill_calls: list[Any] = []

    def activities(self):
        @activity.defn(name="slurm_list_nodes")
        async def list_nodes() -> list[NodeState]:
            return list(self.nodes.values())

        @activity.defn(name="slurm_node_census")
        async def node_census(req: NodeCensusRequest) -> NodeCensus:
            return NodeCensus.of(list(self.nodes.values()), req.names)

        @activity.defn(name="slurm_drain_nodes")
        async def drain(req: NodeAction) -> NodeActionResult:
            self._known(req.nodes)
            self.drain_calls.append(req.nodes)
            for n in req.nodes:
                self.nodes[n] = NodeState(name=n, state="IDLE+DRAIN", reason=req.reason)
            return NodeActionResult(changed=req.nodes)

        @activity.defn(name="slurm_resume_nodes")
        async def resume(req: NodeAction) -> NodeActionResult:
            self._known(req.nodes)
            for n in req.nodes:
                self.nodes[n] = NodeState(name=n, state="IDLE")
            return NodeActionResult(changed=req.nodes)

        @activity.defn(name="node_health")
        async def node_health(query: NodeHealthQuery) -> NodeHealthReport:
            self.health_calls.append(query.nodes)
            return NodeHealthReport(
                verdicts=[
                    NodeHealthVerdict(
                        node=n, failed=n in self.failed, detail="failed (Xid 79)" if n in self.failed else "healthy"
                    )
                    for n in query.nodes
                ]
            )

        return [
            list_nodes,
            node_census,
            drain,
            resume,
            node_health,
            *self._spare_activities(),
            *notify_activities(self.notices),
        ]

    def _spare_activities(self) -> list[Any]:
        """The refill double: the adapter's own plan (lazarus.slurm.reservations) over these nodes, applied at once."""
        if not SPARES:
            return []

        @activity.defn(name="slurm_refill_reservation")
        async def refill(req: RefillRequest) -> RefillResult:
            self.refill_calls.append(req)
            if req.reservation not in self.reservations:
                raise ApplicationError(
                    f"Slurm has no reservation {req.reservation!r}", type="UnknownReservation", non_retryable=True
                )
            every = [Reservation(name=name, nodes=nodes) for name, nodes in self.reservations.items()]
            current = next(r for r in every if r.name == req.reservation)
            swaps, short = plan(current, every, list(self.nodes.values()), set(req.distrusted))
            leaving = {s.out for s in swaps}
            members = sorted({*(m for m in current.nodes if m not in leaving), *(s.into for s in swaps)})
            self.reservations[req.reservation] = members
            idle = [m for m in members if m not in req.distrusted and self.nodes[m].state.startswith("IDLE")]
            return RefillResult(reservation=req.reservation, members=members, swaps=swaps, short=short, idle=idle)

        return [refill]

    def _known(self, names: list[str]) -> None:
        """What the real activity raises for a name Slurm does not know (activities/scheduler.py, node_actions)."""
        unknown = [n for n in names if n not in self.nodes]
        if unknown:
            raise ApplicationError(
                f"{', '.join(unknown)}: not a node of this cluster", type="UnknownNode", non_retryable=True
            )

    def admin(self, node: str, state: str, reason: str = "") -> None:
        """An administrator changes a node with scontrol, outside Lazarus."""
        self.nodes[node] = NodeState(name=node, state=state, reason=reason)


@asynccontextmanager
async def running_ledger(
    env, fake: FakeNodes, cluster: str = "t", operators: tuple[str, ...] = (), spare_pools: tuple = (), **policy
):
    """A ledger whose scheduler and telemetry activities are ``fake``'s; always ended when the test leaves: its
    reconciliation timer would otherwise hold the time-skipping server's clock (a timer firing for a workflow
    nobody serves leaves a task outstanding for the rest of the session)."""
    sched = "ledger-sched-" + uuid.uuid4().hex[:6]
    tq = "ledger-" + uuid.uuid4().hex[:6]
    workers = [
        Worker(env.client, task_queue=tq, workflows=[NodeLedgerWorkflow], interceptors=workflow_interceptors()),
        Worker(env.client, task_queue=sched, activities=fake.activities()),
    ]
    for w in workers:
        await w.__aenter__()
    handle = await env.client.start_workflow(
        NodeLedgerWorkflow.run,
        LedgerInput(
            cluster=cluster,
            policy=LedgerPolicy(**policy),
            scheduler_queue=sched,
            telemetry_queue=sched,
            operators=list(operators),
            **({"spare_pools": list(spare_pools)} if spare_pools else {}),
        ),
        id="ledger-" + uuid.uuid4().hex[:6],
        task_queue=tq,
    )
    try:
        yield handle
    finally:
        await handle.terminate("test done")
        for w in workers:
            await w.__aexit__(None, None, None)


async def settle(env, handle, predicate) -> None:
    """Until the ledger's view satisfies ``predicate`` (skipping a second of server time between looks)."""
    for _ in range(100):
        view = await handle.query(NodeLedgerWorkflow.view)
        if predicate(view):
            return
        await env.sleep(timedelta(seconds=1))
    raise AssertionError(f"ledger never reached the expected state: {view}")


def imp(node: str, job: int, drain: bool = True, user: str = "alice", **kw) -> Implication:
    """Job ``job`` of ``user`` blames ``node`` for an Xid 79 (its own output, unless ``source`` says otherwise)."""
    return Implication(
        node=node,
        job_id=job,
        attempt=0,
        signature="nvrm_xid_79",
        category="hardware",
        at=kw.get("at"),
        drain_requested=drain,
        user=user,
        source=kw.get("source", EvidenceSource.JOB_OUTPUT),
    )


async def record(handle, node: str):
    """The ledger's record of ``node``."""
    return next(r for r in (await handle.query(NodeLedgerWorkflow.view)).nodes if r.node == node)
