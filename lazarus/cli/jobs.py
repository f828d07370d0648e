"""`lazarus jobs | show`: read the recovery history of jobs under Lazarus (`submit` and `watch`: :mod:`.submit`)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from temporalio.client import WorkflowQueryFailedError
from temporalio.service import RPCError

from lazarus.cli import submit
from lazarus.cli.common import (
    JobNotWatched,
    about_job,
    job_id_arg,
    json_option,
    print_json,
    print_json_lines,
    run_async,
    settings_from,
    ui_link,
)
from lazarus.models.names import workflow_id
from lazarus.models.recovery import JobMemo, JobStatus, RecoveryState
from lazarus.temporal_client import connect
from workflows import attributes
from workflows.job_recovery import JobRecoveryWorkflow

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands
    from lazarus.config import Settings


def register(sub: Subcommands) -> None:
    submit.register(sub)
    p = sub.add_parser("jobs", help="list watched jobs (from Temporal visibility)")
    p.add_argument("--state", choices=[st.value for st in RecoveryState], help="only this recovery state")
    json_option(p, "job", listing=True)
    p.set_defaults(func=lambda a: run_async(_jobs, a))
    p = sub.add_parser("show", help="a job's attempt timeline, advice and latencies")
    p.add_argument("job_id", type=job_id_arg, help="the Slurm job id")
    json_option(p, "the job's status (attempts, advice, notes)")
    p.set_defaults(func=lambda a: run_async(_show, a))


async def _jobs(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    client = await connect(settings)
    query = f'LazarusCluster="{settings.cluster}"'
    if args.state:
        query += f' AND RecoveryState="{args.state}"'
    rows: list[dict[str, Any]] = []
    async for wf in client.list_workflows(query):
        sa = wf.typed_search_attributes
        memo = JobMemo.model_validate(await wf.memo())
        ignored = sa.get(attributes.STATE) == RecoveryState.IGNORED.value
        rows.append(
            {
                "job_id": sa.get(attributes.JOB_ID),
                "workflow_id": wf.id,
                "user": sa.get(attributes.USER),
                "state": sa.get(attributes.STATE),
                "mode": None if ignored else sa.get(attributes.MODE),
                "policy": memo.policy,
                "reason": memo.ignored_reason,
                "attempt": sa.get(attributes.ATTEMPT),
                "signature": sa.get(attributes.SIGNATURE),
                "implicated_nodes": sa.get(attributes.NODES) or [],
                "status": wf.status.name if wf.status else None,
            }
        )
    if args.json:
        print_json_lines(rows)
        return 0
    if not rows:
        print("no watched jobs")
        return 0
    print(f"{'JOB':>8}  {'USER':10} {'STATE':18} {'MODE':8} {'POLICY':16} {'ATT':>3}  {'SIGNATURE':24} NODES")
    for r in rows:
        print(
            f"{r['job_id'] or '?':>8}  {r['user'] or '':10} {r['state'] or '':18} {r['mode'] or '-':8} "
            f"{r['policy'] or '-':16} {r['attempt'] if r['attempt'] is not None else '':>3}  "
            f"{r['signature'] or '-':24} {','.join(r['implicated_nodes']) or '-'}"
        )
        if r["reason"]:
            print(f"{'':10}ignored: {r['reason']}")
    return 0


async def fetch_status(settings: Settings, job_id: int) -> JobStatus:
    client = await connect(settings)
    handle = client.get_workflow_handle(workflow_id(settings.cluster, job_id))
    try:
        with about_job(settings, job_id):
            return await handle.query(JobRecoveryWorkflow.status)
    except (RPCError, WorkflowQueryFailedError) as exc:
        raise JobNotWatched(f"job {job_id} is not watched by Lazarus on cluster {settings.cluster} ({exc})") from None


async def _show(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    job_id = args.job_id
    from lazarus.cli.timeline import render_timeline, with_milestones

    status = with_milestones(await fetch_status(settings, job_id))
    if args.json:
        print_json(status)
        return 0

    print(render_timeline(status, ui_link(settings, workflow_id(settings.cluster, job_id))))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
