"""The cluster-level node ledger: which nodes were implicated by which jobs, and what was done about it."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lazarus.models.diagnosis import EvidenceSource
from lazarus.models.policy import Mode
from lazarus.models.spares import SparePool, SparePoolState


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LedgerPolicy(_Model):
    """Rules for cross-job node decisions."""

    lemon_job_count: int = Field(
        3,
        ge=2,
        description="a node implicated by jobs of this many different users is a lemon (jobs of one user count once)",
    )
    lemon_window: timedelta = Field(timedelta(hours=24), gt=timedelta(0), description="...within this window")
    max_drain_fraction: float = Field(
        0.25, gt=0, le=1, description="never drain more than this fraction of the cluster's nodes"
    )
    reconcile_interval: timedelta = Field(
        timedelta(minutes=5),
        gt=timedelta(0),
        description="how often the ledger reads Slurm's node states and corrects its drained records",
    )
    waiting_recheck: timedelta = Field(
        timedelta(seconds=30),
        gt=timedelta(0),
        description="a drain that begins to wait for corroboration is looked at again this long after, once, "
        "before the next reconciliation: a node agent that saw the fault a poll later than the job corroborates "
        "it then",
    )
    max_implications: int = Field(
        2000, ge=10, description="the ledger keeps at most this many implications; the oldest are trimmed"
    )
    corroborating_users: int = Field(
        2,
        ge=2,
        description="a node that only jobs' own output implicates is drained once jobs of this many "
        "different users implicated it within the lemon window (other corroboration: the node agent, Slurm's "
        "node state)",
    )

    def max_drained(self, cluster_size: int) -> int:
        """The most nodes of a cluster of ``cluster_size`` that may be drained at once under the budget (the
        ledger's ``drain_allowed`` lets a drain through while the drained nodes stay within this)."""
        return math.floor((self.max_drain_fraction + 1e-9) * cluster_size) if cluster_size > 0 else 0


class Implication(_Model):
    """One job attempt blamed one node."""

    node: str
    job_id: int
    attempt: int
    signature: str | None = None
    category: str = "unknown"
    at: datetime
    drain_requested: bool = Field(False, description="the job's advice asked for this node to be drained")
    user: str = Field("", description="the job's user; jobs of one user are one voice (empty: not known)")
    source: EvidenceSource = Field(
        EvidenceSource.JOB_OUTPUT,
        description="where the evidence comes from: the job's own output can by itself "
        "only exclude the node from that job",
    )


OUTSIDE_LAZARUS = "outside Lazarus"
"""``drained_by`` / ``resumed_by`` of a change the ledger saw in Slurm but did not make (e.g. ``scontrol``)."""


class NodeRecord(_Model):
    """The ledger's view of one node. It is drained in the ledger's view when Lazarus drained it
    (``drained_by_lazarus``) or someone else did (``drained_by``: an operator via `lazarus nodes drain`, or
    :data:`OUTSIDE_LAZARUS`); a resume, through Lazarus or noticed in Slurm, clears both."""

    node: str
    implications: list[Implication] = Field(default_factory=list)
    drained_by_lazarus: bool = False
    drained_by: str | None = Field(
        None, description="who else drained it: an operator (`lazarus nodes drain`) or 'outside Lazarus'"
    )
    drain_reason: str | None = None
    drained_at: datetime | None = None
    resumed_by: str | None = Field(None, description="who returned it to service, or 'outside Lazarus'")
    resumed_at: datetime | None = None
    refused: list[str] = Field(default_factory=list, description="drains refused (budget), with reasons")
    slurm_state: str | None = Field(None, description="Slurm's node state when the ledger last read it")
    slurm_seen_at: datetime | None = None
    history: list[str] = Field(
        default_factory=list, description="changes the ledger noticed in Slurm but did not make, newest last"
    )
    waiting: str | None = Field(
        None,
        description="a drain asked for on one job's word alone, waiting for corroboration from outside "
        "the job (re-evaluated with each implication and reconciliation)",
    )

    @property
    def drained(self) -> bool:
        """Drained in the ledger's view, by anyone."""
        return self.drained_by_lazarus or self.drained_by is not None


MAX_LEDGER_ACTIONS = 500
"""Actions the ledger keeps (the newest); older ones remain in its workflow histories."""


class LedgerAction(_Model):
    """One thing done to a node or to the cluster's mode, or refused: who, when, what, why, on what evidence
    (`lazarus audit` lists them)."""

    at: datetime
    action: Literal[
        "drain", "resume", "drain-refused", "drain-failed", "noticed", "cluster-mode", "spare-refill", "spares-short"
    ]
    node: str | None = Field(
        None, description="None for a cluster-wide mode change; the member replaced for a spare pool"
    )
    by: str = Field(description="'lazarus', the operator, or 'outside Lazarus'")
    reason: str
    evidence: list[str] = Field(default_factory=list, description="the implications behind a drain")


MAX_REFUSED = 10
"""Refused signals a ledger keeps (the newest)."""


class LedgerInput(_Model):
    cluster: str
    policy: LedgerPolicy = LedgerPolicy()
    policy_set_by: str | None = Field(None, description="who sent the policy in force (config, an operator)")
    scheduler_queue: str = "lazarus-scheduler"
    telemetry_queue: str = Field("lazarus-telemetry", description="task queue of the node health activity")
    nodes: dict[str, NodeRecord] = Field(default_factory=dict)
    mode_override: str | None = Field(
        None,
        description="cluster-wide mode set by an operator (`lazarus mode`); wins over the configured mode "
        "for new jobs, so the kill switch also holds for jobs submitted after it",
    )
    mode_set_by: str | None = None
    actions: list[LedgerAction] = Field(
        default_factory=list,
        description=f"what the ledger did or refused, oldest first (the newest {MAX_LEDGER_ACTIONS})",
    )
    operators: list[str] = Field(
        default_factory=list,
        description="who may drain, resume and set the cluster-wide mode (authorization.operators, sent by the "
        "workers); empty: whoever may write to the namespace",
    )
    refused: list[str] = Field(
        default_factory=list, description=f"signals refused to callers not permitted (the newest {MAX_REFUSED})"
    )
    spare_pools: list[SparePool] = Field(
        default_factory=list, description="the spare pools the configured policies name (sent by the workers)"
    )
    spares: dict[str, SparePoolState] = Field(
        default_factory=dict, description="each pool's state at its last refill check, by reservation"
    )


class PolicyChange(_Model):
    """A new ledger policy for the running ledger (signal ``set_policy``)."""

    policy: LedgerPolicy
    by: str = Field(min_length=1, description="who sent it, e.g. 'config at worker start' or an operator")
    telemetry_queue: str | None = Field(None, description="the workers' telemetry task queue (sent at worker start)")
    operators: list[str] | None = Field(
        None, description="the configured authorization.operators (sent at worker start); None leaves them as they are"
    )
    spare_pools: list[SparePool] | None = Field(
        None, description="the spare pools the configured policies name (sent at worker start); None leaves them"
    )


class ResumeRequest(_Model):
    node: str
    operator: str = Field(min_length=1)
    comment: str | None = None


class DrainRequest(_Model):
    node: str
    operator: str = Field(min_length=1)
    reason: str = Field(min_length=1, max_length=120)


class LedgerView(_Model):
    cluster: str
    policy: LedgerPolicy
    policy_set_by: str | None = None
    nodes: list[NodeRecord]
    mode_override: str | None = None
    mode_set_by: str | None = None
    actions: list[LedgerAction] = Field(default_factory=list, description="what the ledger did or refused")
    operators: list[str] = Field(default_factory=list, description="who may drain, resume and switch modes")
    refused: list[str] = Field(default_factory=list, description="signals refused to callers not permitted")
    spare_pools: list[SparePool] = Field(default_factory=list, description="the spare pools the policies name")
    spares: list[SparePoolState] = Field(default_factory=list, description="each pool at its last refill check")


class ClusterMode(_Model):
    """The cluster-wide mode an operator set in the ledger (the kill switch), read right before acting."""

    mode: Mode | None = Field(None, description="None: no operator override (the job's own mode stands)")
    set_by: str | None = None


class NodeHealthQuery(_Model):
    """The node agents' verdict on these nodes (activity ``node_health``), asked before a drain."""

    nodes: list[str] = Field(min_length=1, max_length=64)


class NodeHealthVerdict(_Model):
    node: str
    failed: bool
    detail: str = Field("", description="what the agent reports, e.g. 'failed: Xid 79'")


class NodeHealthReport(_Model):
    """What the node agents say; nodes without a current verdict are left out, and ``unavailable`` says why
    when none could be read."""

    verdicts: list[NodeHealthVerdict] = Field(default_factory=list)
    unavailable: str | None = None
