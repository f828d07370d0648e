"""Pure rules of the node ledger: lemon nodes, the drain budget, reconciliation with Slurm, and size."""

from __future__ import annotations

from datetime import datetime

from lazarus.models.ledger import OUTSIDE_LAZARUS, LedgerPolicy, NodeRecord
from lazarus.models.slurm import NodeState

NOTES_KEPT = 5
"""Refused-drain notes and noticed changes kept per node (the newest)."""


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


def mark_drained(record: NodeRecord, by: str | None, reason: str, now: datetime) -> None:
    """Record a drain: by Lazarus itself (``by`` None), an operator, or :data:`OUTSIDE_LAZARUS`."""
    record.drained_by_lazarus, record.drained_by = by is None, by
    record.drain_reason, record.drained_at = reason, now
    record.resumed_by = record.resumed_at = None


def mark_resumed(record: NodeRecord, by: str, now: datetime) -> None:
    """Record a return to service; the drain that came before no longer holds."""
    record.drained_by_lazarus, record.drained_by = False, None
    record.resumed_by, record.resumed_at = by, now


def reconcile(record: NodeRecord, slurm: NodeState, now: datetime) -> str | None:
    """Correct the record from Slurm's current state of the node; a note on what changed outside Lazarus,
    or None when the ledger already agreed."""
    record.slurm_state, record.slurm_seen_at = slurm.state, now
    note = None
    if record.drained and not slurm.drained:
        mark_resumed(record, OUTSIDE_LAZARUS, now)
        note = f"resumed outside Lazarus, seen at {now:%Y-%m-%d %H:%M:%S} (Slurm: {slurm.state})"
    elif slurm.drained and not record.drained:
        mark_drained(record, OUTSIDE_LAZARUS, slurm.reason or "drained outside Lazarus", now)
        note = f"drained outside Lazarus, seen at {now:%Y-%m-%d %H:%M:%S} (reason: {slurm.reason or 'none given'})"
    if note:
        record.history = [*record.history, note][-NOTES_KEPT:]
    return note


def worth_keeping(record: NodeRecord, keep_since: datetime) -> bool:
    """A record stays while it is drained, still has implications, or was returned to service recently;
    one whose drain was refused and whose implications all expired says nothing the next one would not."""
    recent_resume = record.resumed_at is not None and record.resumed_at >= keep_since
    return record.drained or bool(record.implications) or recent_resume


def bound(nodes: dict[str, NodeRecord], policy: LedgerPolicy, now: datetime) -> dict[str, NodeRecord]:
    """The ledger's records within its size: expired implications pruned, the oldest trimmed beyond
    ``policy.max_implications``, notes capped, and records no longer worth keeping dropped."""
    for record in nodes.values():
        prune(record, policy, now)
        record.refused = record.refused[-NOTES_KEPT:]
    ranked = sorted(
        (i for r in nodes.values() for i in r.implications),
        key=lambda i: (i.at, i.node, i.job_id, i.attempt),
        reverse=True,
    )
    if len(ranked) > policy.max_implications:
        kept = {id(i) for i in ranked[: policy.max_implications]}
        for record in nodes.values():
            record.implications = [i for i in record.implications if id(i) in kept]
    keep_since = now - 2 * policy.lemon_window
    return {name: r for name, r in nodes.items() if worth_keeping(r, keep_since)}
