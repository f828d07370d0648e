"""Pure rules of the node ledger: lemon nodes, corroboration, the drain budget, reconciliation with Slurm,
and size.

Trust rule: a job's own output can by itself only exclude a node from that job. Draining a node for everyone
needs corroboration from outside the job (:func:`corroboration`): the node agent's verdict, Slurm's own node
state, evidence the job's telemetry read outside the job, or jobs of several different users.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from lazarus.models.diagnosis import EvidenceSource
from lazarus.models.ledger import OUTSIDE_LAZARUS, Implication, LedgerPolicy, NodeHealthVerdict, NodeRecord
from lazarus.models.slurm import NodeState

NOTES_KEPT = 5
"""Refused-drain notes and noticed changes kept per node (the newest)."""

UNKNOWN_USER = "?"
"""Implications whose job's user is not known count together as this one user."""

_UNHEALTHY_FLAGS = ("DOWN", "FAIL", "NOT_RESPONDING")


def in_window(
    record: NodeRecord, policy: LedgerPolicy, now: datetime, trigger: Implication | None = None
) -> list[Implication]:
    """The implications within the window, and since an operator last returned the node to service
    (a resume is the operator's verdict on what came before). ``trigger``, the implication being handled,
    always counts: a resume noticed in Slurm only now is stamped after it."""
    since = now - policy.lemon_window
    if record.resumed_at is not None and record.resumed_at > since:
        since = record.resumed_at
    recent = [i for i in record.implications if i.at >= since]
    return recent if trigger is None or trigger in recent else [*recent, trigger]


def distinct_jobs_in_window(
    record: NodeRecord, policy: LedgerPolicy, now: datetime, trigger: Implication | None = None
) -> list[int]:
    """Jobs that blamed the node within the window (see :func:`in_window`)."""
    return sorted({i.job_id for i in in_window(record, policy, now, trigger)})


def distinct_users_in_window(
    record: NodeRecord, policy: LedgerPolicy, now: datetime, trigger: Implication | None = None
) -> list[str]:
    """Users whose jobs blamed the node within the window: many jobs of one user are one voice."""
    return sorted({i.user or UNKNOWN_USER for i in in_window(record, policy, now, trigger)})


def _shown(items: Sequence[object]) -> str:
    """The last few, for a Slurm reason (Slurm reasons are short)."""
    return ",".join(map(str, items[-5:])) + (",..." if len(items) > 5 else "")


def lemon_reason(
    record: NodeRecord, policy: LedgerPolicy, now: datetime, trigger: Implication | None = None
) -> str | None:
    """A readable drain reason if jobs of ``policy.lemon_job_count`` different users blamed the node, else None."""
    users = distinct_users_in_window(record, policy, now, trigger)
    if len(users) < policy.lemon_job_count:
        return None
    hours = policy.lemon_window.total_seconds() / 3600
    jobs = distinct_jobs_in_window(record, policy, now, trigger)
    return (
        f"lazarus: lemon node: implicated by jobs of {len(users)} users "
        f"({len(jobs)} jobs: {_shown(jobs)}) within {hours:g}h"
    )


def lemon_reason_by_jobs(record: NodeRecord, policy: LedgerPolicy, now: datetime) -> str | None:
    """The lemon rule of ledger runs from before corroboration: distinct job ids (kept for their replay)."""
    jobs = distinct_jobs_in_window(record, policy, now)
    if len(jobs) < policy.lemon_job_count:
        return None
    hours = policy.lemon_window.total_seconds() / 3600
    return f"lazarus: lemon node: implicated by {len(jobs)} jobs ({_shown(jobs)}) within {hours:g}h"


def drain_request(
    record: NodeRecord, policy: LedgerPolicy, now: datetime, trigger: Implication | None = None
) -> Implication | None:
    """The newest implication within the window whose job asked for the node to be drained."""
    return next((i for i in reversed(in_window(record, policy, now, trigger)) if i.drain_requested), None)


def drain_reason(
    record: NodeRecord, policy: LedgerPolicy, now: datetime, trigger: Implication | None = None
) -> str | None:
    """Why the node should be drained (a lemon, or a job asked for it), before corroboration; None: no reason."""
    reason = lemon_reason(record, policy, now, trigger)
    request = drain_request(record, policy, now, trigger)
    if reason is None and request is not None:
        reason = f"lazarus: {request.signature or request.category} in job {request.job_id} attempt {request.attempt}"
    return reason


def slurm_unhealthy(state: NodeState) -> bool:
    """Slurm itself holds the node down, failing or not responding."""
    upper = state.state.upper()
    return any(flag in upper for flag in _UNHEALTHY_FLAGS) or upper.endswith("*")


def corroboration(
    record: NodeRecord,
    policy: LedgerPolicy,
    now: datetime,
    slurm: NodeState | None = None,
    health: NodeHealthVerdict | None = None,
    trigger: Implication | None = None,
) -> str | None:
    """What, from outside any one job's own output, says the node is bad; None when nothing does."""
    if slurm is not None and slurm_unhealthy(slurm):
        return f"Slurm shows it {slurm.state}" + (f" ({slurm.reason})" if slurm.reason else "")
    if health is not None and health.failed:
        return f"its node agent reports it {health.detail or 'failed'}"
    recent = in_window(record, policy, now, trigger)
    outside = [i for i in recent if i.source != EvidenceSource.JOB_OUTPUT]
    if outside:
        return f"{outside[-1].source.value.replace('_', ' ')} evidence in job {outside[-1].job_id}"
    users = distinct_users_in_window(record, policy, now, trigger)
    if len(users) >= policy.corroborating_users:
        return f"jobs of {len(users)} users ({_shown(users)})"
    return None


def waiting_note(request: Implication | None, now: datetime) -> str:
    """The record's words for a drain asked for on one user's word alone."""
    who = f"job {request.job_id}" if request else "the jobs that implicated it"
    return (
        f"excluded from {who} only; drain waits for corroboration from outside the job (node agent, "
        f"Slurm's node state, or a job of another user), since {now:%Y-%m-%d %H:%M}"
    )


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
    record.waiting = None


def mark_resumed(record: NodeRecord, by: str, now: datetime) -> None:
    """Record a return to service; the drain that came before no longer holds."""
    record.drained_by_lazarus, record.drained_by = False, None
    record.resumed_by, record.resumed_at = by, now
    record.waiting = None


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
