"""Pure rules of the node ledger: lemon nodes and the drain budget."""

from __future__ import annotations

from datetime import datetime

from lazarus.models.ledger import LedgerPolicy, NodeRecord


def distinct_jobs_in_window(record: NodeRecord, policy: LedgerPolicy, now: datetime) -> list[int]:
    """Jobs that blamed the node within the window, and since an operator last returned it to service
    (a resume is the operator's verdict on what came before)."""
    since = now - policy.lemon_window
    if record.resumed_at is not None and record.resumed_at > since:
        since = record.resumed_at
    return sorted({i.job_id for i in record.implications if i.at >= since})


def lemon_reason(record: NodeRecord, policy: LedgerPolicy, now: datetime) -> str | None:
    """A readable drain reason if the node is a lemon, else None."""
    jobs = distinct_jobs_in_window(record, policy, now)
    if len(jobs) < policy.lemon_job_count:
        return None
    hours = policy.lemon_window.total_seconds() / 3600
    shown = ",".join(map(str, jobs[-5:])) + (",..." if len(jobs) > 5 else "")  # Slurm reasons are short
    return f"lazarus: lemon node: implicated by {len(jobs)} jobs ({shown}) within {hours:g}h"


def drain_allowed(drained_now: int, cluster_size: int, policy: LedgerPolicy) -> bool:
    """True if draining one more node keeps the drained share within the budget."""
    if cluster_size <= 0:
        return False
    return (drained_now + 1) / cluster_size <= policy.max_drain_fraction + 1e-9


def prune(record: NodeRecord, policy: LedgerPolicy, now: datetime) -> NodeRecord:
    """Drop implications older than two windows, to keep continue-as-new state compact."""
    keep_since = now - 2 * policy.lemon_window
    record.implications = [i for i in record.implications if i.at >= keep_since]
    return record
