"""`lazarus advice list|approve|reject` and `lazarus mode`: the operator's side of monitor mode."""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError

from lazarus.cli.common import (
    about_job,
    generation_arg,
    job_id_arg,
    json_option,
    operator_name,
    print_json_lines,
    run_async,
    settings_from,
    text_arg,
    ui_link,
)
from lazarus.cli.jobs import fetch_status
from lazarus.cli.progress import waiting
from lazarus.errors import LazarusError
from lazarus.ledger_mode import UNREADABLE, read_cluster_mode
from lazarus.models.names import ledger_id, workflow_id
from lazarus.models.policy import Mode
from lazarus.models.recovery import Approval, ModeChange, RefusedAnswer, Rejection
from lazarus.temporal_client import connect
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands


class AdviceRefused(LazarusError):
    """The workflow refused an approval or rejection (stale, duplicate, nothing pending)."""


def register(sub: Subcommands) -> None:
    p = sub.add_parser("advice", help="list, approve or reject recovery advice (monitor mode)")
    asub = p.add_subparsers(dest="advice_command", metavar="ACTION", required=True)
    q = asub.add_parser("list", help="advice awaiting approval")
    json_option(q, "advice awaiting approval", listing=True)
    q.set_defaults(func=lambda a: run_async(_list, a))
    for name in ("approve", "reject"):
        q = asub.add_parser(name, help=f"{name} a job's pending advice")
        q.add_argument("job_id", type=job_id_arg, help="the Slurm job id")
        q.add_argument("--generation", type=generation_arg, help="the advice generation (default: the pending one)")
        q.add_argument("--comment", help="why, kept with the answer in the job's history")
        q.add_argument(
            "--operator", type=text_arg("operator"), default=None, help="who decides (default: your user name)"
        )
        q.set_defaults(func=lambda a, n=name: run_async(_decide, a, n))
    p = sub.add_parser("mode", help="set monitor/act mode for one job, or for every watched job (kill switch)")
    p.add_argument(
        "mode", choices=[m.value for m in Mode], help="monitor: advice waits for approval; act: Lazarus acts on it"
    )
    p.add_argument("--job", type=job_id_arg, help="only this job id")
    p.set_defaults(func=lambda a: run_async(_mode, a))


async def _list(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    client = await connect(settings)
    rows: list[dict[str, Any]] = []
    async for wf in client.list_workflows(f'LazarusCluster="{settings.cluster}" AND RecoveryState="awaiting-approval"'):
        try:
            status = await client.get_workflow_handle(wf.id).query(JobRecoveryWorkflow.status)
        except RPCError:
            continue  # decided or closed since the listing
        if status.advice:
            refused = status.refused_answers[-1] if status.refused_answers else None
            rows.append(
                {
                    "job_id": status.job_id,
                    "advice": status.advice.model_dump(mode="json"),
                    "last_refused": refused.model_dump(mode="json") if refused else None,
                    "link": ui_link(settings, wf.id),
                }
            )
    if args.json:
        print_json_lines(rows)
    elif not rows:
        print("no advice awaiting approval")
    for r in rows if not args.json else []:
        a = r["advice"]
        print(
            f"job {r['job_id']} advice {a['generation']}: {a['action']} "
            f"exclude={','.join(a['exclude_nodes']) or '-'} drain={','.join(a['drain_nodes']) or '-'}\n"
            f"  reason: {a['reason']}\n  expires: {a['expires_at']}"
        )
        if r["last_refused"]:
            refused = RefusedAnswer.model_validate(r["last_refused"])
            print(f"  last refused answer ({refused.at:%H:%M:%S}): {refused.describe()}")
        print(f"  {r['link']}")
    return 0


async def _decide(args: argparse.Namespace, action: str) -> int:
    settings = settings_from(args)
    job_id = args.job_id
    generation = args.generation
    if generation is None:
        status = await fetch_status(settings, job_id)
        if status.advice is None or status.advice.status.value != "pending":
            raise AdviceRefused(f"job {job_id} has no advice awaiting approval (state {status.state.value})")
        generation = status.advice.generation
    client = await connect(settings)
    handle = client.get_workflow_handle(workflow_id(settings.cluster, job_id))
    who = args.operator or operator_name()
    try:
        with about_job(settings, job_id), waiting(f"waiting for the workflow of job {job_id} to answer"):
            if action == "approve":
                reply = await handle.execute_update(
                    JobRecoveryWorkflow.approve_advice,
                    Approval(
                        generation=generation,
                        operator=who,
                        comment=args.comment,
                        job_id=job_id,
                        cluster=settings.cluster,
                    ),
                )
            else:
                reply = await handle.execute_update(
                    JobRecoveryWorkflow.reject_advice,
                    Rejection(
                        generation=generation,
                        operator=who,
                        comment=args.comment,
                        job_id=job_id,
                        cluster=settings.cluster,
                    ),
                )
    except WorkflowUpdateFailedError as exc:
        raise AdviceRefused(f"refused: {exc.cause.message if hasattr(exc.cause, 'message') else exc.cause}") from None
    print(reply.message)
    return 0


MODE_SHOWN_WITHIN = timedelta(seconds=15)


async def _ledger_shows(client: Client, ledger: str, mode: Mode) -> str:
    """Wait until the ledger shows the mode to those who read it before acting (its memo changes in the workflow
    task that applies the signal): from then on no action starts under the old mode."""
    deadline = time.monotonic() + MODE_SHOWN_WITHIN.total_seconds()
    while True:
        try:
            if (await read_cluster_mode(client, ledger, timedelta(seconds=5))).mode == mode:
                return "the ledger shows it to every action from now on, and new jobs will start in it too"
        except UNREADABLE:
            pass
        if time.monotonic() > deadline:
            return (
                f"the ledger has the signal but did not show the mode within {MODE_SHOWN_WITHIN.seconds} s "
                "(is the control worker running?); actions read it as soon as it applies it"
            )
        await asyncio.sleep(0.2)


async def _mode(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    client = await connect(settings)
    mode = Mode(args.mode)
    if args.job:
        job_id = args.job
        with about_job(settings, job_id):
            await client.get_workflow_handle(workflow_id(settings.cluster, job_id)).signal(
                JobRecoveryWorkflow.set_mode, ModeChange(mode=mode, scope="job", operator=operator_name())
            )
        print(f"job {job_id}: mode {mode.value}")
        return 0
    change = ModeChange(mode=mode, scope="cluster", operator=operator_name())
    try:  # new jobs: the ledger remembers the cluster-wide mode
        await client.get_workflow_handle(ledger_id(settings.cluster)).signal(
            NodeLedgerWorkflow.set_cluster_mode, change
        )
        remembered = await _ledger_shows(client, ledger_id(settings.cluster), mode)
    except RPCError:
        remembered = f"no node ledger runs yet, so new jobs start in the configured mode ({settings.mode.value})"
    count = 0
    missed: list[str] = []
    with waiting(f"switching running jobs to {mode.value} mode") as progress:
        async for wf in client.list_workflows(
            f'LazarusCluster="{settings.cluster}" AND ExecutionStatus="Running" AND WorkflowType="JobRecoveryWorkflow"'
        ):
            try:
                await client.get_workflow_handle(wf.id).signal(JobRecoveryWorkflow.set_mode, change)
                count += 1
            except RPCError:  # closed between the listing and the signal: nothing left to switch
                missed.append(wf.id)
            progress.say(f"switching running jobs to {mode.value} mode: {count} done")
    print(
        f"mode {mode.value} set on {count} running job workflow(s); {remembered}"
        + (f"; {len(missed)} had just closed" if missed else "")
    )
    return 0
