"""The cluster-level node ledger: which nodes were implicated by which jobs, and what was done about it."""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LedgerPolicy(_Model):
    """Rules for cross-job node decisions."""

    lemon_job_count: int = Field(3, ge=2, description="a node implicated by this many different jobs is a lemon")
    lemon_window: timedelta = Field(timedelta(hours=24), gt=timedelta(0), description="...within this window")
    max_drain_fraction: float = Field(
        0.25, gt=0, le=1, description="never drain more than this fraction of the cluster's nodes"
    )


class Implication(_Model):
    """One job attempt blamed one node."""

    node: str
    job_id: int
    attempt: int
    signature: str | None = None
    category: str = "unknown"
    at: datetime
    drain_requested: bool = Field(False, description="the job's advice asked for this node to be drained")


class NodeRecord(_Model):
    node: str
    implications: list[Implication] = Field(default_factory=list)
    drained_by_lazarus: bool = False
    drained_by: str | None = Field(None, description="operator who drained it by hand (`lazarus nodes drain`)")
    drain_reason: str | None = None
    drained_at: datetime | None = None
    resumed_by: str | None = None
    resumed_at: datetime | None = None
    refused: list[str] = Field(default_factory=list, description="drains refused (budget), with reasons")


class LedgerInput(_Model):
    cluster: str
    policy: LedgerPolicy = LedgerPolicy()
    scheduler_queue: str = "lazarus-scheduler"
    nodes: dict[str, NodeRecord] = Field(default_factory=dict)
    mode_override: str | None = Field(
        None, description="cluster-wide mode set by an operator (`lazarus mode`); wins over the configured mode "
        "for new jobs, so the kill switch also holds for jobs submitted after it"
    )
    mode_set_by: str | None = None


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
    nodes: list[NodeRecord]
    mode_override: str | None = None
    mode_set_by: str | None = None
