"""The audit's records: every decision and action in a job's recovery state or the node ledger's log, as
one flat record each (who, when, what, why, evidence). Pure: the command (:mod:`lazarus.cli.audit`) reads
the states from Temporal."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lazarus.models.ledger import LedgerAction, LedgerView
from lazarus.models.recovery import Advice, AdviceAction, AdviceStatus, Attempt, JobStatus, RecoveryState


class AuditRecord(BaseModel):
    """One thing Lazarus or a person decided or did."""

    model_config = ConfigDict(extra="forbid")

    at: datetime
    cluster: str
    scope: Literal["job", "node", "cluster"]
    job_id: int | None = None
    attempt: int | None = None
    node: str | None = None
    who: str = Field(description="'lazarus' (and which part of it), an operator, or 'outside Lazarus'")
    action: str = Field(description="detected, advised, approved, rejected, expired, acted, requeued, ...")
    what: str
    why: str = ""
    evidence: list[str] = Field(default_factory=list)
    workflow_id: str


def job_records(status: JobStatus, wid: str, closed_at: datetime | None = None) -> list[AuditRecord]:
    """The decisions and actions in one job's recovery state; ``closed_at`` dates its end (stop, failure)."""
    records: list[AuditRecord] = []

    def add(at: datetime | None, attempt: int | None, who: str, action: str, what: str, **more: object) -> None:
        if at is not None:
            records.append(
                AuditRecord.model_validate(
                    {
                        "at": at,
                        "cluster": status.cluster,
                        "scope": "job",
                        "job_id": status.job_id,
                        "attempt": attempt,
                        "who": who,
                        "action": action,
                        "what": what,
                        "workflow_id": wid,
                        **more,
                    }
                )
            )

    for attempt in status.attempts:
        if attempt.anomaly is not None:
            a, d = attempt.anomaly, attempt.anomaly.diagnosis
            nodes = f", nodes {','.join(d.implicated_nodes)}" if d.implicated_nodes else ""
            add(
                a.recorded_at or a.observed_at,
                attempt.index,
                f"lazarus ({a.source})",
                "detected",
                f"{a.kind.value} in attempt {attempt.index}: {d.signature} ({d.category.value}{nodes})",
                why=d.explanation,
                evidence=[f"{e.file}:{e.line_no}: {e.text}" for e in d.evidence] + [f"note: {n}" for n in d.notes],
            )
        if attempt.requeued_at is not None and attempt.advice_generation is not None:
            advice = status.advice_history[attempt.advice_generation - 1]
            add(
                attempt.requeued_at,
                attempt.index,
                advice.decided_by or "lazarus",
                "requeued",
                attempt.outcome or f"requeued attempt {attempt.index}",
                why=advice.reason,
                evidence=[f"excluded {','.join(advice.exclude_nodes)}"] if advice.exclude_nodes else [],
            )
    for advice in status.advice_history:
        records.extend(_advice_records(status, advice, wid))
    for refused in status.refused_answers:
        add(refused.at, None, refused.operator, f"refused-{refused.kind}", refused.describe(), why=refused.reason)
    if status.state in (RecoveryState.STOPPED, RecoveryState.FAILED, RecoveryState.IGNORED):
        last = status.attempts[-1] if status.attempts else None
        add(
            closed_at or _ended(last),
            last.index if last else None,
            "lazarus",
            status.state.value,
            f"job {status.job_id} {status.state.value}",
            why=status.stop_reason or "",
        )
    return records


def _advice_records(status: JobStatus, advice: Advice, wid: str) -> list[AuditRecord]:
    """The advice, the answer it got, and, for advice the fresh state at the moment of acting said no to,
    that it was not executed and why."""
    base = {"cluster": status.cluster, "scope": "job", "job_id": status.job_id, "attempt": advice.attempt}
    base["workflow_id"] = wid
    nodes = []
    if advice.exclude_nodes:
        nodes.append(f"excluding {','.join(advice.exclude_nodes)}")
    if advice.drain_nodes:
        nodes.append(f"draining {','.join(advice.drain_nodes)}")
    records = [
        AuditRecord.model_validate(
            {
                **base,
                "at": advice.created_at,
                "who": "lazarus",
                "action": "advised",
                "what": f"advice {advice.generation}: {advice.action.value} {' '.join(nodes)}".strip(),
                "why": advice.reason,
                "evidence": advice.evidence,
            }
        )
    ]
    undecided = advice.status in (AdviceStatus.PENDING, AdviceStatus.SUPERSEDED) or advice.decided_at is None
    if undecided or advice.action != AdviceAction.RESTART:
        # nothing answered yet; a stop or advice-only is decided in the instant it is advised
        return records + _not_executed(advice, base)
    if advice.status in (AdviceStatus.REJECTED, AdviceStatus.EXPIRED):
        answer = advice.status.value
    elif advice.decided_by and not advice.decided_by.startswith("lazarus"):
        answer = "approved"
    else:
        answer = "acted"  # act mode, or the mode switched to act while the advice waited
    who = advice.decided_by or ("lazarus (decision watchdog)" if answer == "expired" else "lazarus")
    records.append(
        AuditRecord.model_validate(
            {
                **base,
                "at": advice.decided_at,
                "who": who,
                "action": answer,
                "what": f"advice {advice.generation} {answer}",
                "why": advice.comment or ("nobody answered in time" if answer == "expired" else ""),
            }
        )
    )
    return records + _not_executed(advice, base)


def _not_executed(advice: Advice, base: dict[str, object]) -> list[AuditRecord]:
    """Advice decided or approved that Lazarus did not carry out: the job had moved on when it came to act."""
    if advice.status != AdviceStatus.NOT_EXECUTED:
        return []
    return [
        AuditRecord.model_validate(
            {
                **base,
                "at": advice.decided_at or advice.created_at,
                "who": "lazarus",
                "action": "not-executed",
                "what": f"advice {advice.generation} not executed",
                "why": advice.not_executed_reason or "",
            }
        )
    ]


def _ended(attempt: Attempt | None) -> datetime | None:
    return attempt.ended_at or attempt.started_at if attempt else None


def ledger_records(view: LedgerView, wid: str) -> list[AuditRecord]:
    """The node ledger's log: drains, resumes, refused and failed drains, changes noticed in Slurm, and
    cluster-wide mode changes (the kill switch)."""
    return [_ledger_record(view.cluster, action, wid) for action in view.actions]


def _ledger_record(cluster: str, action: LedgerAction, wid: str) -> AuditRecord:
    what = f"cluster mode set: {action.reason}" if action.node is None else f"{action.action} {action.node}"
    return AuditRecord(
        at=action.at,
        cluster=cluster,
        scope="cluster" if action.node is None else "node",
        node=action.node,
        who=action.by,
        action=action.action,
        what=what,
        why=action.reason,
        evidence=action.evidence,
        workflow_id=wid,
    )
