"""`lazarus submit | watch | jobs | show`: put jobs under Lazarus and read their recovery history."""

from __future__ import annotations

import argparse
import json
import sys

from temporalio.client import WorkflowQueryFailedError
from temporalio.service import RPCError

from lazarus.cli.common import (
    JobNotWatched,
    about_job,
    job_id_arg,
    print_json,
    run_async,
    settings_from,
    ui_link,
)
from lazarus.config import Settings
from lazarus.models.recovery import JobStatus, RecoveryState
from lazarus.models.slurm import SubmitRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.validate import job_id as validate_job_id
from lazarus.temporal_client import connect
from workflows import attributes
from workflows.job_recovery import JobRecoveryWorkflow, workflow_id

DEFAULT_COMMENT = json.dumps({"lazarus": {"policy": "default"}})


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("submit", help="sbatch with the Lazarus opt-in comment added",
                       description="Runs sbatch with --comment set to the Lazarus opt-in (unless you give one) "
                       "and --open-mode=append (so logs survive requeues).")
    p.add_argument("--policy", default="default")
    p.add_argument("sbatch_args", nargs=argparse.REMAINDER)
    p.set_defaults(func=_submit)
    p = sub.add_parser("watch", help="attach Lazarus to an already submitted job")
    p.add_argument("job_id")
    p.add_argument("--policy", default="default")
    p.set_defaults(func=_watch)
    p = sub.add_parser("jobs", help="list watched jobs (from Temporal visibility)")
    p.add_argument("--state", choices=[st.value for st in RecoveryState], help="only this recovery state")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=lambda a: run_async(_jobs, a))
    p = sub.add_parser("show", help="a job's attempt timeline, advice and latencies")
    p.add_argument("job_id", type=job_id_arg)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=lambda a: run_async(_show, a))


def _comment(policy: str) -> str:
    return json.dumps({"lazarus": {"policy": policy}})


# sbatch and scontrol run as the calling user, on this host, with this limit.
_SLURM_TIMEOUT_S = 60.0


def _slurm(settings: Settings) -> SlurmClient:
    return SlurmClient.local(settings.scheduler, command_timeout=_SLURM_TIMEOUT_S)


def _submit(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    extra = [a for a in args.sbatch_args if a != "--"]
    own_comment = any(a.startswith("--comment") for a in extra)
    opts = [] if any(a.startswith("--open-mode") for a in extra) else ["--open-mode=append"]
    request = SubmitRequest(args=[*opts, *extra], comment=None if own_comment else _comment(args.policy))
    job_id = run_async(_submitted, settings, request)
    print(f"Submitted batch job {job_id} (watched by Lazarus: {ui_link(settings, workflow_id(settings.cluster, job_id))})")
    return 0


async def _submitted(settings: Settings, request: SubmitRequest) -> int:
    async with _slurm(settings) as slurm:
        return (await slurm.submit(request)).job_id


def _watch(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    job_id = validate_job_id(args.job_id)
    run_async(_opt_in, settings, job_id, _comment(args.policy))
    print(f"job {job_id} is now opted in; Lazarus picks it up within one discovery cycle: "
          f"{ui_link(settings, workflow_id(settings.cluster, job_id))}")
    return 0


async def _opt_in(settings: Settings, job_id: int, comment: str) -> None:
    async with _slurm(settings) as slurm:
        await slurm.set_comment(job_id, comment)


async def _jobs(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    client = await connect(settings)
    query = f'LazarusCluster="{settings.cluster}"'
    if args.state:
        query += f' AND RecoveryState="{args.state}"'
    rows = []
    async for wf in client.list_workflows(query):
        sa = wf.typed_search_attributes
        rows.append({
            "job_id": sa.get(attributes.JOB_ID), "workflow_id": wf.id, "user": sa.get(attributes.USER),
            "state": sa.get(attributes.STATE), "mode": sa.get(attributes.MODE),
            "attempt": sa.get(attributes.ATTEMPT), "signature": sa.get(attributes.SIGNATURE),
            "implicated_nodes": sa.get(attributes.NODES) or [], "status": wf.status.name if wf.status else None,
        })
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no watched jobs")
        return 0
    print(f"{'JOB':>8}  {'USER':10} {'STATE':18} {'MODE':8} {'ATT':>3}  {'SIGNATURE':24} NODES")
    for r in rows:
        print(f"{r['job_id'] or '?':>8}  {r['user'] or '':10} {r['state'] or '':18} {r['mode'] or '':8} "
              f"{r['attempt'] if r['attempt'] is not None else '':>3}  {r['signature'] or '-':24} "
              f"{','.join(r['implicated_nodes']) or '-'}")
    return 0


async def fetch_status(settings, job_id: int) -> JobStatus:
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
    status = await fetch_status(settings, job_id)
    if args.json:
        print_json(status)
        return 0
    from lazarus.cli.timeline import render_timeline

    print(render_timeline(status, ui_link(settings, workflow_id(settings.cluster, job_id))))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)
