"""`lazarus audit [--since 24h] [--json]`: every decision and action across jobs and nodes, read from Temporal.

Jobs come from visibility (workflows whose ``LazarusCluster`` is this cluster,
running or closed since ``--since``). A running job's recovery state is read
with the ``status`` query; a completed one from its result (the final status
it returned); any other closed one (terminated, timed out) with the query,
which a worker answers by replaying its history, or else from its close event
(who terminated it, and why). The node ledger's log gives drains, resumes,
refused drains and the kill switch. Records are sorted by time; ``--json``
prints one JSON object per line.
"""

from __future__ import annotations

import argparse
import asyncio
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus, WorkflowQueryFailedError
from temporalio.service import RPCError

from lazarus.cli.audit_records import AuditRecord, job_records, ledger_records
from lazarus.cli.common import json_option, run_async, settings_from
from lazarus.models.ledger import LedgerView
from lazarus.models.names import JOB_STATUS, JOB_WORKFLOW, LEDGER_VIEW, ledger_id
from lazarus.models.recovery import JobStatus
from lazarus.temporal_client import connect
from workflows import attributes

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands
    from lazarus.config import Settings

_AGO = re.compile(r"^(\d+)([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
PARALLEL_READS = 16


def since_arg(text: str) -> datetime:
    """argparse type: a time ago (``90s``, ``30m``, ``24h``, ``7d``, ``2w``) or an ISO 8601 time (UTC if no zone)."""
    value = text.strip()
    ago = _AGO.match(value)
    if ago:
        return datetime.now(UTC) - timedelta(**{_UNITS[ago[2]]: int(ago[1])})
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--since takes a time ago such as 30m, 24h or 7d, or an ISO 8601 time, got {text!r}"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def register(sub: Subcommands) -> None:
    p = sub.add_parser(
        "audit",
        help="every decision and action across jobs and nodes: who, when, what, why, evidence",
        description="List every decision and action Lazarus and its operators took, read from Temporal.",
    )
    p.add_argument("--since", type=since_arg, help="only what happened since: 30m, 24h, 7d, or an ISO 8601 time")
    json_option(p, "record", listing=True)
    p.set_defaults(func=lambda a: run_async(_audit, a))


async def _audit(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    records = await collect(settings, args.since)
    if args.json:
        for record in records:
            print(record.model_dump_json())
    elif not records:
        print("nothing decided or done" + (f" since {args.since:%Y-%m-%d %H:%M:%S} UTC" if args.since else ""))
    else:
        for record in records:
            print(render(record))
    return 0


async def collect(settings: Settings, since: datetime | None) -> list[AuditRecord]:
    """Every record of the cluster's jobs and ledger, oldest first, at or after ``since``."""
    client = await connect(settings)
    query = f'LazarusCluster="{settings.cluster}" AND WorkflowType="{JOB_WORKFLOW}"'
    if since is not None:
        query += f' AND (ExecutionStatus="Running" OR CloseTime >= "{since.astimezone(UTC).isoformat()}")'
    latest: dict[str, WorkflowExecution] = {}
    async for wf in client.list_workflows(query):
        if wf.id not in latest or wf.start_time > latest[wf.id].start_time:  # the newest run after continue-as-new
            latest[wf.id] = wf
    limit = asyncio.Semaphore(PARALLEL_READS)

    async def one(wf: WorkflowExecution) -> list[AuditRecord]:
        async with limit:
            return await _job(client, wf)

    records = [r for batch in await asyncio.gather(*(one(wf) for wf in latest.values())) for r in batch]
    records += await _ledger(client, ledger_id(settings.cluster))
    return sorted((r for r in records if since is None or r.at >= since), key=lambda r: (r.at, r.workflow_id))


async def _job(client: Client, wf: WorkflowExecution) -> list[AuditRecord]:
    handle = client.get_workflow_handle(wf.id, result_type=JobStatus)
    if wf.status == WorkflowExecutionStatus.COMPLETED:
        return job_records(await handle.result(), wf.id, wf.close_time)
    try:
        status = await handle.query(JOB_STATUS, result_type=JobStatus)
    except (RPCError, WorkflowQueryFailedError):
        return await _closed_without_state(client, wf)
    return job_records(status, wf.id, wf.close_time)


async def _closed_without_state(client: Client, wf: WorkflowExecution) -> list[AuditRecord]:
    """A closed workflow no worker could replay: what its close event says (who terminated it, and why)."""
    who, why = "temporal", wf.status.name.lower() if wf.status else "closed"
    async for event in client.get_workflow_handle(wf.id, run_id=wf.run_id).fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
            attrs = event.workflow_execution_terminated_event_attributes
            who, why = attrs.identity or "unknown", attrs.reason or "terminated"
    ended = wf.status.name.lower() if wf.status else "closed"
    return [
        AuditRecord(
            at=wf.close_time or wf.start_time,
            cluster=wf.typed_search_attributes.get(attributes.CLUSTER) or "?",
            scope="job",
            job_id=wf.typed_search_attributes.get(attributes.JOB_ID),
            who=who,
            action=ended,
            what=f"workflow {wf.id} {ended}",
            why=why,
            workflow_id=wf.id,
        )
    ]


async def _ledger(client: Client, wid: str) -> list[AuditRecord]:
    try:
        view = await client.get_workflow_handle(wid).query(LEDGER_VIEW, result_type=LedgerView)
    except (RPCError, WorkflowQueryFailedError):
        return []  # no ledger yet: nothing was drained or switched
    return ledger_records(view, wid)


def render(record: AuditRecord) -> str:
    """One record in a few lines: when, where, who, what; then why and the evidence, indented."""
    where = f"job {record.job_id}" if record.job_id is not None else f"node {record.node}" if record.node else "cluster"
    if record.attempt is not None:
        where += f" attempt {record.attempt}"
    lines = [f"{record.at:%Y-%m-%d %H:%M:%S}  {where:<22} {record.who:<28} {record.action:<14} {record.what}"]
    if record.why:
        lines.append(f"{'':21}why: {record.why}")
    lines.extend(f"{'':21}evidence: {line}" for line in record.evidence[:5])
    return "\n".join(lines)
