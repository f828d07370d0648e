"""Which transitions operators are told about, and what the notice says. Pure: no Temporal calls, no I/O.

A job's recovery notifies when it enters ``awaiting-approval`` (advice waits for an
operator), ``stopped`` (Lazarus will not restart it: stop advice, attempts used up,
advice rejected or expired after the job ended) or ``failed`` (Lazarus could not
act). A job the user cancelled is not announced: nobody needs telling. The node
ledger notifies when it drains a node, when the drain budget refuses a drain, and when a spare pool
cannot replace an untrusted member because no healthy node is free.
Each notice names the workflow whose history its link opens (the job's).
"""

from __future__ import annotations

from datetime import datetime

from lazarus.models.names import ledger_id, workflow_id
from lazarus.models.notify import Notice, NoticeKind
from lazarus.models.recovery import JobRecoveryInput, RecoveryState
from lazarus.models.slurm import JobState


def on_entering(state: JobRecoveryInput, new: RecoveryState, now: datetime) -> Notice | None:
    """The notice for a job's recovery entering ``new`` (``state`` already says why); None when there is none."""
    wid = workflow_id(state.cluster, state.job_id)
    job = f"job {state.job_id}" + (f" ({state.job_name}, {state.user})" if state.job_name else "")
    advice = state.advice_history[-1] if state.advice_history else None
    if new == RecoveryState.AWAITING_APPROVAL and advice is not None:
        nodes = sorted(set(advice.exclude_nodes) | set(advice.drain_nodes))
        expires = f"; expires {advice.expires_at:%Y-%m-%d %H:%M:%S} UTC" if advice.expires_at else ""
        return Notice(
            id=f"{wid}/{new.value}/{advice.generation}",
            kind=NoticeKind.ADVICE_PENDING,
            cluster=state.cluster,
            text=f"{job}: advice {advice.generation} ({advice.action.value}) awaits approval: {advice.reason}{expires}",
            at=now,
            workflow_id=wid,
            job_id=state.job_id,
            generation=advice.generation,
            action=advice.action.value,
            nodes=nodes,
            reason=advice.reason,
        )
    if new not in (RecoveryState.STOPPED, RecoveryState.FAILED) or _cancelled_by_user(state):
        return None
    failed = new == RecoveryState.FAILED
    reason = state.stop_reason or new.value
    return Notice(
        id=f"{wid}/{new.value}/{len(state.attempts)}",
        kind=NoticeKind.JOB_FAILED if failed else NoticeKind.JOB_STOPPED,
        cluster=state.cluster,
        text=f"{job}: {'Lazarus could not act' if failed else 'stopped'}: {reason}",
        at=now,
        workflow_id=wid,
        job_id=state.job_id,
        generation=advice.generation if advice else None,
        action=advice.action.value if advice else None,
        reason=reason,
    )


def node_drained(cluster: str, node: str, reason: str, job_id: int, now: datetime) -> Notice:
    """The ledger drained ``node``; the link opens the history of the job whose report tipped it."""
    return _node_notice(NoticeKind.NODE_DRAINED, cluster, node, f"node {node} drained: {reason}", reason, job_id, now)


def drain_refused(cluster: str, node: str, note: str, job_id: int, now: datetime) -> Notice:
    """The drain budget kept ``node`` in service (``note`` says how many are drained already, and why)."""
    return _node_notice(NoticeKind.DRAIN_REFUSED, cluster, node, f"node {node} not drained: {note}", note, job_id, now)


def _node_notice(
    kind: NoticeKind, cluster: str, node: str, text: str, reason: str, job_id: int, now: datetime
) -> Notice:
    """A notice about one node, linked to the history of the job whose report led to it."""
    wid = workflow_id(cluster, job_id)
    return Notice(
        id=f"{wid}/{kind.value}/{node}/{now:%Y%m%dT%H%M%S}",
        kind=kind,
        cluster=cluster,
        text=text,
        at=now,
        workflow_id=wid,
        job_id=job_id,
        node=node,
        nodes=[node],
        reason=reason,
    )


def spares_short(cluster: str, reservation: str, nodes: list[str], job_id: int | None, now: datetime) -> Notice:
    """A spare pool keeps untrusted ``nodes``: no healthy idle node is free (the ledger keeps looking). The link
    opens the history of the job that lost them, else the ledger's."""
    wid = workflow_id(cluster, job_id) if job_id is not None else ledger_id(cluster)
    return Notice(
        id=f"{ledger_id(cluster)}/{NoticeKind.SPARES_SHORT.value}/{reservation}/{now:%Y%m%dT%H%M%S}",
        kind=NoticeKind.SPARES_SHORT,
        cluster=cluster,
        text=f"spare pool {reservation}: no healthy idle node free to replace {', '.join(nodes)}; retrying",
        at=now,
        workflow_id=wid,
        job_id=job_id,
        nodes=list(nodes),
        reason="no healthy idle node free",
    )


def _cancelled_by_user(state: JobRecoveryInput) -> bool:
    """The job ended cancelled with no advice of Lazarus's about that attempt: someone cancelled it."""
    attempt = state.attempts[-1] if state.attempts else None
    return attempt is not None and attempt.end_state == JobState.CANCELLED and attempt.advice_generation is None
