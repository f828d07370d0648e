"""NodeLedgerWorkflow: one per cluster (id ``lazarus-<cluster>-ledger``).

Job workflows report every node they implicate (signal ``record_implication``).
The ledger keeps the history, drains a node once however many jobs blame it,
drains "lemon" nodes that several different jobs implicated within a window,
and never drains more than a configured share of the cluster. Operators list
it (`lazarus nodes`) and return nodes to service (`lazarus nodes resume`),
which records who did it. It also holds the cluster-wide mode an operator set
with `lazarus mode` (the kill switch), which new jobs start in. With operators configured
(``LedgerInput.operators``, sent by the workers), only the callers they name may
drain, resume or set that mode (:mod:`workflows.authorization`).

The ledger stays true to Slurm: every ``policy.reconcile_interval`` (a durable
timer), and again before every drain decision, it reads Slurm's node states and
corrects its records. A node resumed outside Lazarus (``scontrol``) is no longer
drained in its view, so a new hardware fault drains it again; a node drained by
someone else is recorded as such. Records of nodes Slurm does not know are
dropped, and the ledger keeps at most ``policy.max_implications`` implications.
Its policy changes while it runs (signal ``set_policy``; the workers send the
configured one when they start). A refused operator action fails the update with
the activity's own message (an ``ApplicationError``), so the CLI can say why.

A job's own output can by itself only exclude a node from that job (trust rule).
The ledger drains a node only with corroboration from outside the job
(:func:`workflows.ledger_rules.corroboration`): Slurm's own node state, the node
agent's verdict (activity ``node_health`` on the telemetry queue, asked at
decision time), evidence telemetry read outside the job, or jobs of
``policy.corroborating_users`` different users. Until then the record says the
drain waits (``waiting``, shown by `lazarus nodes`), the job is told so (a
``LedgerNote`` in its history), and the request is looked at again with every
implication of the node and every reconciliation, and once ``policy.waiting_recheck``
after it began to wait (patch ``ledger-rechecks-a-waiting-drain``): a node agent
that polled its GPU after the job printed the fault corroborates it then.

Spare pools (patch ``ledger-keeps-spare-pools``): the policies may name Slurm reservations with spares
(``Policy.spares``; the workers send them with the policy). After implications, an operator's drain, every
reconciliation, and (while a pool is short or its check failed) every ``retry_interval``, the ledger asks the
Slurm adapter to swap each pool's members it distrusts (:func:`workflows.spare_rules.distrusted`) for healthy
idle nodes of the general pool (activity ``slurm_refill_reservation``: fresh read, act if needed, verify).
A replacement is kept as an action and told to the jobs that implicated the node; a member left for want of a
free node is recorded, notified, and looked at again. Reservations no policy names are never touched.

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
    from lazarus.errors import shorten
    from lazarus.models import names
    from lazarus.models.ledger import (
        MAX_LEDGER_ACTIONS,
        MAX_REFUSED,
        OUTSIDE_LAZARUS,
        ClusterMode,
        DrainRequest,
        Implication,
        LedgerAction,
        LedgerInput,
        LedgerView,
        NodeHealthQuery,
        NodeHealthReport,
        NodeHealthVerdict,
        NodeRecord,
        PolicyChange,
        ResumeRequest,
    )
    from lazarus.models.notify import Notice
    from lazarus.models.policy import Mode
    from lazarus.models.recovery import LedgerNote, ModeChange
    from lazarus.models.slurm import NodeAction, NodeActionResult, NodeCensus, NodeCensusRequest, NodeState
    from lazarus.models.spares import RefillRequest, RefillResult, SparePool
    from workflows import callers, metering, notices, spare_rules
    from workflows.authorization import caller_refusal, decided_by
    from workflows.calls import run_activity
    from workflows.effects import Notify
    from workflows.ledger_rules import (
        bound,
        corroboration,
        drain_allowed,
        drain_reason,
        drain_request,
        in_window,
        lemon_reason_by_jobs,
        mark_drained,
        mark_resumed,
        prune,
        reconcile,
        waiting_note,
    )
    from workflows.notifier import Notifier
    from workflows.options import NODE_HEALTH_READ, SLURM_READ, SLURM_WRITE

RECONCILES = "ledger-reconciles-with-slurm"
"""Patch id: runs started before reconciliation keep their old commands until they continue as new."""
CORROBORATES = "ledger-drains-need-corroboration"
"""Patch id: runs started before it drained on one job's word and counted lemon nodes by job ids."""
SPARES = "ledger-keeps-spare-pools"
"""Patch id: runs started before spare pools never read or changed a reservation."""
PUBLISHES_MODE = "ledger-publishes-its-mode"
"""Patch id: runs started before it kept the cluster-wide mode only in its state, read by a query (which a busy
control worker may not answer in time); they publish nothing and are read by that query."""
RECHECKS = "ledger-rechecks-a-waiting-drain"
"""Patch id: runs started before it looked at a waiting drain again only at the next reconciliation."""
CENSUS = "ledger-reads-a-census"
"""Patch id: runs started before it read every node's state (the whole cluster into its history) at each
reconciliation; they keep doing so until they continue as new."""
MAX_DRAIN_REASON = 200
"""Slurm's limit on a drain reason (lazarus.slurm.validate)."""
JOBS_TOLD = 5
"""Jobs told about a drain they asked for (the newest)."""


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
        self._corroborates = False
        self._rechecks = False
        self._recheck_at: datetime | None = None
        self._spares = False
        self._pools_due = False
        self._notifier = Notifier()

    @workflow.signal(name=names.RECORD_IMPLICATION)
    def record_implication(self, implication: Implication) -> None:
        self._inbox.append(implication)

    @workflow.signal(name=names.SET_LEDGER_POLICY)
    def set_policy(self, change: PolicyChange) -> None:
        """A new policy (drain budget, lemon rules, reconciliation interval, size) for this running ledger."""
        self.s.policy, self.s.policy_set_by = change.policy, change.by
        self.s.telemetry_queue = change.telemetry_queue or self.s.telemetry_queue
        if change.operators is not None:
            self.s.operators = list(change.operators)
        if change.spare_pools is not None:
            self.s.spare_pools = list(change.spare_pools)
            self.s.spares = spare_rules.kept(self.s.spare_pools, self.s.spares)
            self._pools_due = True
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
        who = decided_by(callers.current(), request.operator)
        mark_resumed(self._record(request.node), who, workflow.now())
        self._log("resume", request.node, who, request.comment or "returned to service")
        return result

    @resume_node.validator
    def _validate_resume(self, request: ResumeRequest) -> None:
        self._permit(f"resume node {request.node}")
        _check_node(request.node)

    @workflow.update(name=names.DRAIN_NODE)
    async def drain_node(self, request: DrainRequest) -> NodeActionResult:
        """An operator takes a node out of service by hand; recorded like Lazarus's own drains."""
        caller = callers.current()
        who = decided_by(caller, request.operator)  # the record keeps the note; Slurm's reason only the name
        reason = f"{request.reason} (by {shorten(caller.name if caller else request.operator, 60)} via lazarus)"
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
        mark_drained(self._record(request.node), who, reason, workflow.now())
        metering.drained(self.s.cluster, "operator")
        if self._spares:  # a drained member of a spare pool is replaced
            self._pools_due = self._wake = True
        self._log("drain", request.node, who, request.reason)
        return result

    @drain_node.validator
    def _validate_drain(self, request: DrainRequest) -> None:
        self._permit(f"drain node {request.node}")
        _check_node(request.node)

    def _permit(self, action: str) -> None:
        """An update's validator: a caller not permitted is refused (the caller sees why; no history)."""
        refusal = caller_refusal(self.s.operators, callers.current(), action)
        if refusal is not None:
            workflow.logger.warning(f"ledger {self.s.cluster}: refused: {refusal}")
            raise ValueError(refusal)

    @workflow.signal(name=names.SET_CLUSTER_MODE)
    def set_cluster_mode(self, change: ModeChange) -> None:
        """The cluster-wide mode (kill switch) for jobs discovered from now on. A caller not permitted is
        ignored, and the refusal kept (``refused``, shown by `lazarus nodes`): a signal has no answer."""
        caller = callers.current()
        refusal = caller_refusal(self.s.operators, caller, f"set the cluster-wide mode to {change.mode}")
        if refusal is not None:
            note = f"{workflow.now():%Y-%m-%d %H:%M:%S} refused mode signal from {decided_by(caller, change.operator)}: {refusal}"
            self.s.refused = [*self.s.refused, note][-MAX_REFUSED:]
            workflow.logger.warning(f"ledger {self.s.cluster}: {note}")
            return
        self.s.mode_override = change.mode.value if change.mode else None
        self.s.mode_set_by = decided_by(caller, change.operator)
        self._log("cluster-mode", None, self.s.mode_set_by, f"cluster mode {self.s.mode_override or 'as configured'}")
        if workflow.patched(PUBLISHES_MODE):
            self._publish_mode()

    def _publish_mode(self) -> None:
        """Put the cluster-wide mode in the ledger's memo, which the server serves (``describe``) without asking
        a worker: the kill switch stays readable however busy the control worker is. The memo changes in the
        workflow task that applies the signal (`lazarus mode` waits until it shows)."""
        mode = ClusterMode(mode=Mode(self.s.mode_override) if self.s.mode_override else None, set_by=self.s.mode_set_by)
        workflow.upsert_memo({names.CLUSTER_MODE_MEMO: mode.model_dump(mode="json")})

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
            operators=self.s.operators,
            refused=self.s.refused,
            spare_pools=self.s.spare_pools,
            spares=[self.s.spares[name] for name in sorted(self.s.spares)],
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
        self._corroborates = reconciles and workflow.patched(CORROBORATES)
        self._spares = self._corroborates and workflow.patched(SPARES)
        self._rechecks = self._corroborates and workflow.patched(RECHECKS)
        self._census = reconciles and workflow.patched(CENSUS)
        if workflow.patched(PUBLISHES_MODE):  # a new run (or one continued as new) publishes the mode it carries
            self._publish_mode()
        while True:
            await self._wait(reconciles)
            while self._inbox:
                imp = self._inbox.pop(0)
                await (self._handle(imp) if reconciles else self._handle_unreconciled(imp))
                self._pools_due = self._spares
            if reconciles and workflow.now() >= self._next_check():
                self._recheck_at = None
                await self._reconcile()
                self._pools_due = self._spares
            if self._spares and (self._pools_due or self._pool_look_due()):
                await self._keep_pools()
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
        """When the next reconciliation is due: the periodic one, or sooner a waiting drain's re-check."""
        due = self._last_check + self.s.policy.reconcile_interval
        return due if self._recheck_at is None else min(due, self._recheck_at)

    async def _wait(self, reconciles: bool) -> None:
        """Until an implication, a policy change, a suggested continue-as-new, or the reconciliation is due."""
        self._wake = False

        def woken() -> bool:
            return bool(self._inbox) or self._wake or workflow.info().is_continue_as_new_suggested()

        if not reconciles:
            await workflow.wait_condition(woken)
            return
        wake_at = self._next_check()
        look = spare_rules.next_look(self.s.spare_pools, self.s.spares) if self._spares else None
        if look is not None and look < wake_at:
            wake_at = look
        due = (wake_at - workflow.now()).total_seconds()
        if due <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await workflow.wait_condition(woken, timeout=due)

    async def _read_nodes(self) -> NodeCensus | None:
        """Slurm's census of the nodes the ledger keeps records of (how many nodes, how many drained, their
        states), or None (``self._unreadable`` says why) when the scheduler stays unreadable through the retries.
        Runs started before the census read the whole node list and count it here."""
        names = sorted(self.s.nodes)
        try:
            if self._census:
                return await run_activity(
                    "slurm_node_census",
                    NodeCensusRequest(names=names),
                    result_type=NodeCensus,
                    task_queue=self.s.scheduler_queue,
                    preset=SLURM_READ,
                    summary="read node states",
                )
            nodes = await run_activity(
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
        return NodeCensus.of(nodes, names)

    async def _reconcile(self) -> None:
        """The periodic check: correct every record from Slurm, then keep the ledger within its size."""
        nodes = await self._read_nodes()
        self._last_check = workflow.now()
        if nodes is not None:
            self._correct(nodes)
            if self._corroborates:  # corroboration may have arrived: Slurm's state, the node agent
                await self._consider(sorted(n for n, r in self.s.nodes.items() if r.waiting), None, nodes)
        self.s.nodes = bound(self.s.nodes, self.s.policy, workflow.now())

    def _correct(self, census: NodeCensus) -> None:
        """Correct the records from Slurm's node states; records of nodes Slurm does not know are dropped
        (an empty node list is a scheduler answer not to be trusted, not a cluster without nodes)."""
        current = census.by_name()
        if not census.total:
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
        """Runs from before corroboration: a lemon by job ids, or this implication's drain request."""
        reason = lemon_reason_by_jobs(record, self.s.policy, workflow.now())
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
        if self._corroborates:
            await self._consider([imp.node], imp)
            return
        if self._drain_reason(record, imp) is None:
            return
        nodes = await self._read_nodes()
        if nodes is None:
            record.refused.append(f"drain not attempted at {workflow.now():%Y-%m-%d %H:%M}: {self._unreadable}")
            metering.drain_refused(self.s.cluster, "scheduler_unreadable")
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
            metering.drain_refused(self.s.cluster, "scheduler_unreadable")
            return
        current = nodes.by_name()
        if record.node in current and current[record.node].drained:
            record.drained_by_lazarus, record.drain_reason = True, current[record.node].reason or reason
            return
        await self._drain_within_budget(record, reason, nodes)

    async def _drain_within_budget(self, record: NodeRecord, reason: str, nodes: NodeCensus) -> str | None:
        """Drain the node unless that would exceed the budget; None when drained, else what stopped it
        (also noted on the record)."""
        drained, total = nodes.drained, nodes.total
        # the newest report tipped it: its job's history is the link (none when every report was pruned)
        blamed_by = record.implications[-1].job_id if record.implications else None
        evidence = [
            f"job {i.job_id} attempt {i.attempt}: {i.signature or i.category} at {i.at:%Y-%m-%d %H:%M:%S}"
            for i in record.implications[-5:]
        ]
        if not drain_allowed(drained, total, self.s.policy):
            note = (
                f"drain refused at {workflow.now():%Y-%m-%d %H:%M}: {drained}/{total} nodes already "
                f"drained (budget {self.s.policy.max_drain_fraction:.0%}); reason was: {reason}"
            )
            record.refused.append(note)
            workflow.logger.warning(f"{record.node}: {note}")
            metering.drain_refused(self.s.cluster, "budget")
            self._log("drain-refused", record.node, "lazarus", note, evidence)
            if blamed_by is not None:
                self._notify(notices.drain_refused(self.s.cluster, record.node, note, blamed_by, workflow.now()))
            return note
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
            note = f"drain failed: {exc.cause or exc}"
            record.refused.append(note)
            metering.drain_refused(self.s.cluster, "failed")
            self._log("drain-failed", record.node, "lazarus", f"{reason}; failed: {exc.cause or exc}", evidence)
            return note
        mark_drained(record, None, reason, workflow.now())
        metering.drained(self.s.cluster, "lazarus")
        self._log("drain", record.node, "lazarus", reason, evidence)
        if blamed_by is not None:
            self._notify(notices.node_drained(self.s.cluster, record.node, reason, blamed_by, workflow.now()))
        return None

    # ---- drains that need corroboration ------------------------------------------------------

    def _wanted(self, node_names: list[str], trigger: Implication | None, drained_too: bool = False) -> list[str]:
        """Those of ``node_names`` the ledger knows with a reason to drain, not drained in its view unless
        ``drained_too``; a wait that lost its reason is cleared."""
        wanted = []
        for name in node_names:
            record = self.s.nodes.get(name)
            if record is None or (record.drained and not drained_too):
                continue
            if drain_reason(record, self.s.policy, workflow.now(), self._own(record, trigger)) is None:
                record.waiting = None  # its requests expired or an operator resumed it since
                continue
            wanted.append(name)
        return wanted

    @staticmethod
    def _own(record: NodeRecord, trigger: Implication | None) -> Implication | None:
        return trigger if trigger is not None and trigger.node == record.node else None

    async def _consider(
        self, node_names: list[str], trigger: Implication | None, nodes: NodeCensus | None = None
    ) -> None:
        """Drain each of ``node_names`` that has a reason and corroboration from outside any one job, within the
        budget; the others wait, and the jobs that asked are told. ``trigger``: the implication that brought
        this about (None: a reconciliation, which passes the ``nodes`` it read)."""
        if nodes is None:
            if not self._wanted(node_names, trigger, drained_too=True):
                return
            nodes = await self._read_nodes()  # Slurm first: a node drained in the ledger's view may be back
            if nodes is None:
                note = f"drain not attempted at {workflow.now():%Y-%m-%d %H:%M}: {self._unreadable}"
                for name in self._wanted(node_names, trigger):
                    self.s.nodes[name].refused.append(note)
                return
            self._correct(nodes)  # a resume noticed just now starts the counts afresh
        current = nodes.by_name()
        wanted = self._wanted(node_names, trigger)
        unsure = [
            n
            for n in wanted
            if corroboration(
                self.s.nodes[n],
                self.s.policy,
                workflow.now(),
                current.get(n),
                trigger=self._own(self.s.nodes[n], trigger),
            )
            is None
        ]
        health = await self._node_health(unsure) if unsure else {}
        for name in wanted:
            await self._decide(self.s.nodes[name], trigger, current.get(name), health.get(name), nodes)

    async def _decide(
        self,
        record: NodeRecord,
        trigger: Implication | None,
        slurm: NodeState | None,
        health: NodeHealthVerdict | None,
        nodes: NodeCensus,
    ) -> None:
        now, own = workflow.now(), self._own(record, trigger)
        reason = drain_reason(record, self.s.policy, now, own)
        if reason is None:
            return
        corroborated = corroboration(record, self.s.policy, now, slurm, health, own)
        if corroborated is None:
            if record.waiting is None or own is not None:
                record.waiting = waiting_note(drain_request(record, self.s.policy, now, own), now)
                if self._rechecks and self._recheck_at is None:  # evidence a poll behind the job's: look again
                    self._recheck_at = now + self.s.policy.waiting_recheck
                workflow.logger.info(f"node ledger: {record.node} {record.waiting}")
                if own is not None and own.drain_requested:
                    await self._tell([own.job_id], f"{record.node}: {record.waiting}")
            return
        refused = await self._drain_within_budget(
            record, f"{reason}; corroborated: {corroborated}"[:MAX_DRAIN_REASON], nodes
        )
        asked = sorted({i.job_id for i in in_window(record, self.s.policy, now, own) if i.drain_requested})
        told = sorted({*asked[-JOBS_TOLD:], *([own.job_id] if own else [])})
        if refused is None:
            await self._tell(told, f"{record.node} drained by the node ledger: {record.drain_reason}")
        elif own is not None:
            await self._tell([own.job_id], f"{record.node} not drained: {refused}")

    async def _node_health(self, node_names: list[str]) -> dict[str, NodeHealthVerdict]:
        """The node agents' verdicts (through the telemetry worker); none when they cannot be read."""
        asked = node_names[:64]
        try:
            report = await run_activity(
                "node_health",
                NodeHealthQuery(nodes=asked),
                result_type=NodeHealthReport,
                task_queue=self.s.telemetry_queue,
                summary=f"node agents' verdict on {','.join(asked[:8])}",
                preset=NODE_HEALTH_READ,
            )
        except ActivityError as exc:
            workflow.logger.warning(f"node ledger: node health unavailable ({exc.cause or exc})")
            return {}
        if report.unavailable:
            workflow.logger.info(f"node ledger: node health: {report.unavailable}")
        return {v.node: v for v in report.verdicts if v.node in asked}

    async def _tell(self, job_ids: list[int], text: str) -> None:
        """Put ``text`` in these jobs' histories (a job that has ended is not told), by the ``ledger_note``
        signal. It was the generic ``job_event`` before, with no patch: on replay a signal-external command is
        matched by its kind, not its signal's name (the stored ledger histories that sent ``job_event`` replay)."""
        for job_id in job_ids:
            handle = workflow.get_external_workflow_handle(names.workflow_id(self.s.cluster, job_id))
            try:
                await handle.signal(names.LEDGER_NOTE, LedgerNote(text=text[:500]))
            except ApplicationError as exc:
                workflow.logger.info(f"node ledger: job {job_id} not told ({exc})")

    # ---- spare pools ---------------------------------------------------------------------------------

    def _pool_look_due(self) -> bool:
        look = spare_rules.next_look(self.s.spare_pools, self.s.spares)
        return look is not None and workflow.now() >= look

    def _blamers(self, node: str) -> list[int]:
        """The jobs that implicated ``node`` (the newest :data:`JOBS_TOLD`), told about its replacement."""
        record = self.s.nodes.get(node)
        jobs = sorted({i.job_id for i in record.implications}) if record is not None else []
        return jobs[-JOBS_TOLD:]

    async def _keep_pools(self) -> None:
        """Swap each pool's members the ledger distrusts for healthy idle nodes of the general pool, through the
        adapter (fresh read, act if needed, verify); keep, tell and notify what happened."""
        self._pools_due = False
        bad = spare_rules.distrusted(self.s.nodes, self.s.policy, workflow.now())
        for pool in list(self.s.spare_pools):
            await self._keep_pool(pool, bad)

    async def _keep_pool(self, pool: SparePool, bad: list[str]) -> None:
        before = self.s.spares.get(pool.reservation)
        try:
            result = await run_activity(
                "slurm_refill_reservation",
                RefillRequest(reservation=pool.reservation, distrusted=bad),
                result_type=RefillResult,
                task_queue=self.s.scheduler_queue,
                summary=f"keep spare pool {pool.reservation}",
                preset=SLURM_WRITE,
            )
        except ActivityError as exc:
            error = f"check failed: {exc.cause or exc}"
            self.s.spares[pool.reservation] = spare_rules.failed(before, pool, error, workflow.now())
            workflow.logger.warning(f"node ledger: spare pool {pool.reservation}: {error}")
            return
        now = workflow.now()
        state = spare_rules.checked(before, pool, result, now)
        self.s.spares[pool.reservation] = state
        short = spare_rules.newly_short(before, state)
        metering.spare_refills(self.s.cluster, pool.reservation, len(result.swaps), len(short))
        for swap in result.swaps:
            text = (
                f"spare pool {pool.reservation}: {swap.out} replaced by {swap.into} "
                f"(reservation now {', '.join(result.members)})"
            )
            workflow.logger.info(f"node ledger: {text}")
            self._log("spare-refill", swap.out, "lazarus", text)
            await self._tell(self._blamers(swap.out), text)
        if short:
            text = (
                f"spare pool {pool.reservation}: no healthy idle node free to replace {', '.join(short)}; "
                f"looking again {spare_rules.retry_words(pool)}"
            )
            workflow.logger.warning(f"node ledger: {text}")
            self._log("spares-short", short[0], "lazarus", text)
            jobs = sorted({job for node in short for job in self._blamers(node)})
            self._notify(notices.spares_short(self.s.cluster, pool.reservation, short, jobs[-1] if jobs else None, now))
            await self._tell(jobs, text)
