"""NodeLedgerWorkflow: one per cluster (id ``lazarus-<cluster>-ledger``).

Job workflows report every node they implicate (signal ``record_implication``).
The ledger keeps the history, drains a node once however many jobs blame it,
drains "lemon" nodes that several different jobs implicated within a window,
and never drains more than a configured share of the cluster. Operators list
it (`lazarus nodes`) and return nodes to service (`lazarus nodes resume`),
which records who did it. It also holds the cluster-wide mode an operator set
with `lazarus mode` (the kill switch), which new jobs start in.

The ledger stays true to Slurm: every ``policy.reconcile_interval`` (a durable
timer), and again before every drain decision, it reads Slurm's node states and
corrects its records. A node resumed outside Lazarus (``scontrol``) is no longer
drained in its view, so a new hardware fault drains it again; a node drained by
someone else is recorded as such. Records of nodes Slurm does not know are
dropped, and the ledger keeps at most ``policy.max_implications`` implications.
Its policy changes while it runs (signal ``set_policy``; the workers send the
configured one when they start). A refused operator action fails the update with
the activity's own message (an ``ApplicationError``), so the CLI can say why.

Every drain, resume, refused or failed drain, change noticed in Slurm and cluster
mode change is kept as an action (who, when, why, the implications behind it; the
newest 500) for `lazarus audit`. A drain and a drain refused by the budget are
also posted to the configured webhooks (:mod:`workflows.notices`).
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from lazarus.models import names
    from lazarus.models.ledger import (
        MAX_LEDGER_ACTIONS,
        OUTSIDE_LAZARUS,
        DrainRequest,
        Implication,
        LedgerAction,
        LedgerInput,
        LedgerView,
        NodeRecord,
        PolicyChange,
        ResumeRequest,
    )
    from lazarus.models.notify import Notice
    from lazarus.models.recovery import ModeChange
    from lazarus.models.slurm import NodeAction, NodeActionResult, NodeState
    from workflows import notices
    from workflows.calls import run_activity
    from workflows.effects import Notify
    from workflows.ledger_rules import (
        bound,
        drain_allowed,
        lemon_reason,
        mark_drained,
        mark_resumed,
        prune,
        reconcile,
    )
    from workflows.notifier import Notifier
    from workflows.options import SLURM_READ, SLURM_WRITE

RECONCILES = "ledger-reconciles-with-slurm"
"""Patch id: runs started before reconciliation keep their old commands until they continue as new."""


def _check_node(node: str) -> None:
    if not node or any(c in node for c in " ;|&$`'\"\\\n"):
        raise ValueError(f"invalid node name {node!r}")


def _refusal(exc: ActivityError, action: str) -> ApplicationError:
    """The update's failure for a failed operator action: the activity's own message and type (e.g.
    ``UnknownNode``: "node9: not a node of this cluster"), not Temporal's "Activity task failed"."""
    cause = exc.cause
    if isinstance(cause, ApplicationError):
        return ApplicationError(cause.message, action, type=cause.type, non_retryable=True)
    return ApplicationError(f"{action} failed: {cause or exc}", action, type="ActionFailed", non_retryable=True)


@workflow.defn(name=names.LEDGER_WORKFLOW)
class NodeLedgerWorkflow:
    @workflow.init
    def __init__(self, inp: LedgerInput) -> None:
        self.s = inp
        self._inbox: list[Implication] = []
        self._wake = False
        self._last_check = workflow.now()
        self._unreadable = ""
        self._notifier = Notifier()

    @workflow.signal(name=names.RECORD_IMPLICATION)
    def record_implication(self, implication: Implication) -> None:
        self._inbox.append(implication)

    @workflow.signal(name=names.SET_LEDGER_POLICY)
    def set_policy(self, change: PolicyChange) -> None:
        """A new policy (drain budget, lemon rules, reconciliation interval, size) for this running ledger."""
        self.s.policy, self.s.policy_set_by = change.policy, change.by
        self._wake = True  # the reconciliation timer follows the new interval

    @workflow.update(name=names.RESUME_NODE)
    async def resume_node(self, request: ResumeRequest) -> NodeActionResult:
        try:
            result = await run_activity(
                "slurm_resume_nodes",
                NodeAction(nodes=[request.node], reason=request.comment or ""),
                result_type=NodeActionResult,
                task_queue=self.s.scheduler_queue,
                summary=f"resume {request.node}",
                preset=SLURM_WRITE,
            )
        except ActivityError as exc:
            raise _refusal(exc, f"resume {request.node}") from None
        mark_resumed(self._record(request.node), request.operator, workflow.now())
        self._log("resume", request.node, request.operator, request.comment or "returned to service")
        return result

    @resume_node.validator
    def _validate_resume(self, request: ResumeRequest) -> None:
        _check_node(request.node)

    @workflow.update(name=names.DRAIN_NODE)
    async def drain_node(self, request: DrainRequest) -> NodeActionResult:
        """An operator takes a node out of service by hand; recorded like Lazarus's own drains."""
        reason = f"{request.reason} (by {request.operator} via lazarus)"
        try:
            result = await run_activity(
                "slurm_drain_nodes",
                NodeAction(nodes=[request.node], reason=reason),
                result_type=NodeActionResult,
                task_queue=self.s.scheduler_queue,
                summary=f"drain {request.node} (operator)",
                preset=SLURM_WRITE,
            )
        except ActivityError as exc:
            raise _refusal(exc, f"drain {request.node}") from None
        mark_drained(self._record(request.node), request.operator, reason, workflow.now())
        self._log("drain", request.node, request.operator, request.reason)
        return result

    @drain_node.validator
    def _validate_drain(self, request: DrainRequest) -> None:
        _check_node(request.node)

    @workflow.signal(name=names.SET_CLUSTER_MODE)
    def set_cluster_mode(self, change: ModeChange) -> None:
        """The cluster-wide mode (kill switch) for jobs discovered from now on."""
        self.s.mode_override = change.mode.value if change.mode else None
        self.s.mode_set_by = change.operator
        self._log("cluster-mode", None, change.operator, f"cluster mode {self.s.mode_override or 'as configured'}")

    @workflow.query(name=names.LEDGER_VIEW)
    def view(self) -> LedgerView:
        return LedgerView(
            cluster=self.s.cluster,
            policy=self.s.policy,
            policy_set_by=self.s.policy_set_by,
            nodes=sorted(self.s.nodes.values(), key=lambda r: r.node),
            mode_override=self.s.mode_override,
            mode_set_by=self.s.mode_set_by,
            actions=self.s.actions,
        )

    def _record(self, node: str) -> NodeRecord:
        return self.s.nodes.setdefault(node, NodeRecord(node=node))

    def _log(self, action: str, node: str | None, by: str, reason: str, evidence: list[str] | None = None) -> None:
        """Keep what was done or refused, with who and why (the newest ``MAX_LEDGER_ACTIONS``), for the audit."""
        entry = LedgerAction.model_validate(
            {
                "at": workflow.now(),
                "action": action,
                "node": node,
                "by": by,
                "reason": reason,
                "evidence": evidence or [],
            }
        )
        self.s.actions = [*self.s.actions, entry][-MAX_LEDGER_ACTIONS:]

    def _notify(self, notice: Notice) -> None:
        self._notifier.send(Notify(notice, task_queue=self.s.scheduler_queue))

    @workflow.run
    async def run(self, inp: LedgerInput) -> None:
        reconciles = workflow.patched(RECONCILES)
        while True:
            await self._wait(reconciles)
            while self._inbox:
                imp = self._inbox.pop(0)
                await (self._handle(imp) if reconciles else self._handle_unreconciled(imp))
            if reconciles and workflow.now() >= self._next_check():
                await self._reconcile()
            if workflow.info().is_continue_as_new_suggested():
                await self._notifier.flush()
                await workflow.wait_condition(workflow.all_handlers_finished)
                if self._inbox:
                    continue  # signals arrived meanwhile: record them first
                if reconciles:
                    self.s.nodes = bound(self.s.nodes, self.s.policy, workflow.now())
                else:
                    for record in self.s.nodes.values():
                        prune(record, self.s.policy, workflow.now())
                workflow.continue_as_new(self.s)

    def _next_check(self) -> datetime:
        return self._last_check + self.s.policy.reconcile_interval

    async def _wait(self, reconciles: bool) -> None:
        """Until an implication, a policy change, a suggested continue-as-new, or the reconciliation is due."""
        self._wake = False

        def woken() -> bool:
            return bool(self._inbox) or self._wake or workflow.info().is_continue_as_new_suggested()

        if not reconciles:
            await workflow.wait_condition(woken)
            return
        due = (self._next_check() - workflow.now()).total_seconds()
        if due <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await workflow.wait_condition(woken, timeout=due)

    async def _read_nodes(self) -> list[NodeState] | None:
        """Slurm's node states, or None (``self._unreadable`` says why) when the scheduler stays unreadable
        through the retries."""
        try:
            return await run_activity(
                "slurm_list_nodes",
                result_type=list[NodeState],
                task_queue=self.s.scheduler_queue,
                preset=SLURM_READ,
                summary="read node states",
            )
        except ActivityError as exc:  # the ledger outlives a scheduler outage; the job's exclusion still holds
            self._unreadable = f"scheduler unreadable ({exc.cause or exc})"
            workflow.logger.warning(f"node ledger: {self._unreadable}")
            return None

    async def _reconcile(self) -> None:
        """The periodic check: correct every record from Slurm, then keep the ledger within its size."""
        nodes = await self._read_nodes()
        self._last_check = workflow.now()
        if nodes is not None:
            self._correct(nodes)
        self.s.nodes = bound(self.s.nodes, self.s.policy, workflow.now())

    def _correct(self, nodes: list[NodeState]) -> None:
        """Correct the records from Slurm's node states; records of nodes Slurm does not know are dropped
        (an empty node list is a scheduler answer not to be trusted, not a cluster without nodes)."""
        current = {n.name: n for n in nodes}
        if not current:
            return
        for name in sorted(self.s.nodes):
            if name not in current:
                workflow.logger.info(f"node ledger: {name} is not a node of this cluster; its record is dropped")
                del self.s.nodes[name]
                continue
            note = reconcile(self.s.nodes[name], current[name], workflow.now())
            if note:
                workflow.logger.info(f"node ledger: {name} {note}")
                self._log("noticed", name, OUTSIDE_LAZARUS, note)

    def _drain_reason(self, record: NodeRecord, imp: Implication) -> str | None:
        reason = lemon_reason(record, self.s.policy, workflow.now())
        if reason is None and imp.drain_requested:
            reason = f"lazarus: {imp.signature or imp.category} in job {imp.job_id} attempt {imp.attempt}"
        return reason

    def _add(self, imp: Implication) -> NodeRecord | None:
        """Record the implication; None if this attempt already reported it (a retried signal counts once)."""
        record = self._record(imp.node)
        if any(i.job_id == imp.job_id and i.attempt == imp.attempt for i in record.implications):
            return None
        record.implications.append(imp)
        return record

    async def _handle(self, imp: Implication) -> None:
        """Record an implication; drain the node if warranted, after checking Slurm's view of it first."""
        record = self._add(imp)
        if record is None:
            return
        if sum(len(r.implications) for r in self.s.nodes.values()) > self.s.policy.max_implications:
            self.s.nodes = bound(self.s.nodes, self.s.policy, workflow.now())
        if self._drain_reason(record, imp) is None:
            return
        nodes = await self._read_nodes()
        if nodes is None:
            record.refused.append(f"drain not attempted at {workflow.now():%Y-%m-%d %H:%M}: {self._unreadable}")
            return
        self._correct(nodes)
        reason = self._drain_reason(record, imp)  # a resume noticed just now starts the lemon count afresh
        if record.node in self.s.nodes and reason is not None and not record.drained:
            await self._drain_within_budget(record, reason, nodes)

    async def _handle_unreconciled(self, imp: Implication) -> None:
        """Runs started before reconciliation: the ledger's own record decides, as it did then."""
        record = self._add(imp)
        if record is None:
            return
        reason = self._drain_reason(record, imp)
        if reason is None or record.drained_by_lazarus:
            return
        nodes = await self._read_nodes()
        if nodes is None:
            record.refused.append(f"drain not attempted at {workflow.now():%Y-%m-%d %H:%M}: {self._unreadable}")
            return
        current = {n.name: n for n in nodes}
        if record.node in current and current[record.node].drained:
            record.drained_by_lazarus, record.drain_reason = True, current[record.node].reason or reason
            return
        await self._drain_within_budget(record, reason, nodes)

    async def _drain_within_budget(self, record: NodeRecord, reason: str, nodes: list[NodeState]) -> None:
        drained = sum(1 for n in nodes if n.drained)
        blamed_by = record.implications[-1].job_id  # the newest report tipped it: its job's history is the link
        evidence = [
            f"job {i.job_id} attempt {i.attempt}: {i.signature or i.category} at {i.at:%Y-%m-%d %H:%M:%S}"
            for i in record.implications[-5:]
        ]
        if not drain_allowed(drained, len(nodes), self.s.policy):
            note = (
                f"drain refused at {workflow.now():%Y-%m-%d %H:%M}: {drained}/{len(nodes)} nodes already "
                f"drained (budget {self.s.policy.max_drain_fraction:.0%}); reason was: {reason}"
            )
            record.refused.append(note)
            workflow.logger.warning(f"{record.node}: {note}")
            self._log("drain-refused", record.node, "lazarus", note, evidence)
            self._notify(notices.drain_refused(self.s.cluster, record.node, note, blamed_by, workflow.now()))
            return
        try:
            await run_activity(
                "slurm_drain_nodes",
                NodeAction(nodes=[record.node], reason=reason),
                result_type=NodeActionResult,
                task_queue=self.s.scheduler_queue,
                summary=f"drain {record.node}",
                preset=SLURM_WRITE,
            )
        except ActivityError as exc:
            record.refused.append(f"drain failed: {exc.cause or exc}")
            self._log("drain-failed", record.node, "lazarus", f"{reason}; failed: {exc.cause or exc}", evidence)
            return
        mark_drained(record, None, reason, workflow.now())
        self._log("drain", record.node, "lazarus", reason, evidence)
        self._notify(notices.node_drained(self.s.cluster, record.node, reason, blamed_by, workflow.now()))
