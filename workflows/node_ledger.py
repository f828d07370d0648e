"""NodeLedgerWorkflow: one per cluster (id ``lazarus-<cluster>-ledger``).

Job workflows report every node they implicate (signal ``record_implication``;
ids and message names: :mod:`lazarus.models.names`).
The ledger keeps the history, drains a node once however many jobs blame it,
drains "lemon" nodes that several different jobs implicated within a window,
and never drains more than a configured share of the cluster. Operators list
it (`lazarus nodes`) and return nodes to service (`lazarus nodes resume`),
which records who did it. It also holds the cluster-wide mode an operator set
with `lazarus mode` (the kill switch), which new jobs start in.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from lazarus.models import names
    from lazarus.models.ledger import (
        DrainRequest,
        Implication,
        LedgerInput,
        LedgerView,
        NodeRecord,
        ResumeRequest,
    )
    from lazarus.models.recovery import ModeChange
    from lazarus.models.slurm import NodeAction, NodeActionResult, NodeState
    from workflows.ledger_rules import drain_allowed, lemon_reason, prune
    from workflows.options import SLURM_READ, SLURM_WRITE


def _check_node(node: str) -> None:
    if not node or any(c in node for c in " ;|&$`'\"\\\n"):
        raise ValueError(f"invalid node name {node!r}")


@workflow.defn(name=names.LEDGER_WORKFLOW)
class NodeLedgerWorkflow:
    @workflow.init
    def __init__(self, inp: LedgerInput) -> None:
        self.s = inp
        self._inbox: list[Implication] = []
        self._resumes: list[ResumeRequest] = []

    @workflow.signal(name=names.RECORD_IMPLICATION)
    def record_implication(self, implication: Implication) -> None:
        self._inbox.append(implication)

    @workflow.update(name=names.RESUME_NODE)
    async def resume_node(self, request: ResumeRequest) -> NodeActionResult:
        result = await workflow.execute_activity(
            "slurm_resume_nodes", NodeAction(nodes=[request.node], reason=request.comment or ""),
            result_type=NodeActionResult, task_queue=self.s.scheduler_queue,
            summary=f"resume {request.node}", **SLURM_WRITE)
        record = self._record(request.node)
        record.drained_by_lazarus, record.resumed_by, record.resumed_at = False, request.operator, workflow.now()
        return result

    @resume_node.validator
    def _validate_resume(self, request: ResumeRequest) -> None:
        _check_node(request.node)

    @workflow.update(name=names.DRAIN_NODE)
    async def drain_node(self, request: DrainRequest) -> NodeActionResult:
        """An operator takes a node out of service by hand; recorded like Lazarus's own drains."""
        reason = f"{request.reason} (by {request.operator} via lazarus)"
        result = await workflow.execute_activity(
            "slurm_drain_nodes", NodeAction(nodes=[request.node], reason=reason),
            result_type=NodeActionResult, task_queue=self.s.scheduler_queue,
            summary=f"drain {request.node} (operator)", **SLURM_WRITE)
        record = self._record(request.node)
        record.drained_by, record.drain_reason, record.drained_at = request.operator, reason, workflow.now()
        record.resumed_by = record.resumed_at = None
        return result

    @drain_node.validator
    def _validate_drain(self, request: DrainRequest) -> None:
        _check_node(request.node)

    @workflow.signal(name=names.SET_CLUSTER_MODE)
    def set_cluster_mode(self, change: ModeChange) -> None:
        """The cluster-wide mode (kill switch) for jobs discovered from now on."""
        self.s.mode_override = change.mode.value if change.mode else None
        self.s.mode_set_by = change.operator

    @workflow.query(name=names.LEDGER_VIEW)
    def view(self) -> LedgerView:
        return LedgerView(cluster=self.s.cluster, policy=self.s.policy,
                          nodes=sorted(self.s.nodes.values(), key=lambda r: r.node),
                          mode_override=self.s.mode_override, mode_set_by=self.s.mode_set_by)

    def _record(self, node: str) -> NodeRecord:
        return self.s.nodes.setdefault(node, NodeRecord(node=node))

    @workflow.run
    async def run(self, inp: LedgerInput) -> None:
        while True:
            await workflow.wait_condition(lambda: bool(self._inbox) or workflow.info().is_continue_as_new_suggested())
            while self._inbox:
                await self._handle(self._inbox.pop(0))
            if workflow.info().is_continue_as_new_suggested():
                await workflow.wait_condition(workflow.all_handlers_finished)
                if self._inbox:
                    continue  # signals arrived meanwhile: record them first
                for record in self.s.nodes.values():
                    prune(record, self.s.policy, workflow.now())
                workflow.continue_as_new(self.s)

    async def _handle(self, imp: Implication) -> None:
        record = self._record(imp.node)
        if any(i.job_id == imp.job_id and i.attempt == imp.attempt for i in record.implications):
            return  # the same attempt reported twice (a retried signal): count it once
        record.implications.append(imp)
        reason = lemon_reason(record, self.s.policy, workflow.now())
        if reason is None and imp.drain_requested:
            reason = f"lazarus: {imp.signature or imp.category} in job {imp.job_id} attempt {imp.attempt}"
        if reason is None or record.drained_by_lazarus:
            return
        await self._drain(record, reason)

    async def _drain(self, record: NodeRecord, reason: str) -> None:
        try:
            nodes: list[NodeState] = await workflow.execute_activity(
                "slurm_list_nodes", result_type=list[NodeState], task_queue=self.s.scheduler_queue,
                summary="read node states", **SLURM_READ)
        except ActivityError as exc:  # the ledger outlives a scheduler outage; the job's exclusion still holds
            record.refused.append(f"drain not attempted at {workflow.now():%Y-%m-%d %H:%M}: scheduler unreadable "
                                  f"({exc.cause or exc})")
            return
        current = {n.name: n for n in nodes}
        if record.node in current and current[record.node].drained:
            record.drained_by_lazarus, record.drain_reason = True, current[record.node].reason or reason
            return
        drained = sum(1 for n in nodes if n.drained)
        if not drain_allowed(drained, len(nodes), self.s.policy):
            note = (f"drain refused at {workflow.now():%Y-%m-%d %H:%M}: {drained}/{len(nodes)} nodes already "
                    f"drained (budget {self.s.policy.max_drain_fraction:.0%}); reason was: {reason}")
            record.refused.append(note)
            workflow.logger.warning(f"{record.node}: {note}")
            return
        try:
            await workflow.execute_activity(
                "slurm_drain_nodes", NodeAction(nodes=[record.node], reason=reason), result_type=NodeActionResult,
                task_queue=self.s.scheduler_queue, summary=f"drain {record.node}", **SLURM_WRITE)
        except ActivityError as exc:
            record.refused.append(f"drain failed: {exc.cause or exc}")
            return
        record.drained_by_lazarus, record.drain_reason, record.drained_at = True, reason, workflow.now()
