"""`lazarus submit | watch`: put a job under Lazarus, then say what Lazarus actually did with it.

Both build the job's comment with :func:`opt_in_comment` (a comment the job
already has is kept next to the opt-in) and check it with :func:`parse_opt_in`,
the parser the telemetry loop uses, against the configured policies, before they
touch Slurm: a refusal is one sentence and changes nothing.

Afterwards they wait a few seconds (``--wait``; a progress line on a terminal) for
the job's workflow (``lazarus-<cluster>-<jobid>``) and report what Lazarus did: watching it (policy,
mode, and any note on the comment's requests), ignoring it and why, or not seen
yet (and how to check later).
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle, WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from lazarus.cli import exits
from lazarus.cli.common import run_async, settings_from, ui_link
from lazarus.cli.progress import waiting
from lazarus.config import Settings
from lazarus.errors import JobCommentError, LazarusError
from lazarus.models.names import workflow_id
from lazarus.models.recovery import JobStatus, RecoveryState
from lazarus.models.slurm import SubmitRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.validate import job_id as validate_job_id
from lazarus.telemetry.optin import opt_in_comment, parse_opt_in
from lazarus.temporal_client import connect
from workflows.job_recovery import JobRecoveryWorkflow

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands

# sbatch and scontrol run as the calling user, on this host, with this limit.
_SLURM_TIMEOUT_S = 60.0
# how long submit and watch wait, by default, for Lazarus to pick the job up; and how often they look
DEFAULT_WAIT_S = 10.0
_POLL_S = 0.5
_QUERY_TIMEOUT = timedelta(seconds=5)


class OptInRefused(LazarusError):
    """The opt-in cannot be set as asked; nothing was submitted or changed."""


def register(sub: Subcommands) -> None:
    p = sub.add_parser(
        "submit",
        help="sbatch with the Lazarus opt-in comment added",
        description="Runs sbatch with the Lazarus opt-in in --comment (a comment of your own is kept "
        "next to it) and --open-mode=append (so logs survive requeues), then reports whether "
        "Lazarus watches the job.",
    )
    p.add_argument("--policy", help="policy to apply (default: the one your --comment names, else 'default')")
    p.add_argument(
        "--comment", dest="own_comment", metavar="TEXT", help="your own job comment, kept next to the opt-in"
    )
    _wait_argument(p)
    p.add_argument("sbatch_args", nargs=argparse.REMAINDER, help="-- then sbatch options, script and its arguments")
    p.set_defaults(func=_submit)
    exits.declare(p, {exits.FOUND: "submitted, but Lazarus ignores the job (the output says why)"})
    p = sub.add_parser(
        "watch",
        help="attach Lazarus to an already submitted job",
        description="Adds the Lazarus opt-in to a submitted job's comment (keeping what it holds), "
        "then reports whether Lazarus watches the job.",
    )
    p.add_argument("job_id", help="the Slurm job id")
    p.add_argument("--policy", help="policy to apply (default: the one the job's comment names, else 'default')")
    _wait_argument(p)
    p.set_defaults(func=_watch)
    exits.declare(p, {exits.FOUND: "Lazarus ignores the job (the output says why)"})


def _wait_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--wait",
        type=_seconds,
        default=DEFAULT_WAIT_S,
        metavar="SECONDS",
        help=f"how long to wait for Lazarus to pick the job up (default {DEFAULT_WAIT_S:g}; 0: do not wait)",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--wait takes seconds, got {text!r}") from None
    if not 0 <= value <= 600:
        raise argparse.ArgumentTypeError(f"--wait takes 0 to 600 seconds, got {value:g}")
    return value


def checked_comment(settings: Settings, policy: str | None, own: str | None, unchanged: str) -> str:
    """The opt-in comment for ``policy`` keeping ``own``, as the telemetry loop will accept it.

    Otherwise :class:`OptInRefused`: the parser's sentence, then ``unchanged`` (what was left alone).
    """
    try:
        comment = opt_in_comment(policy, own)
        parse_opt_in(comment, settings.policies)
    except JobCommentError as exc:
        raise OptInRefused(f"{exc}; {unchanged}") from None
    return comment


def _slurm(settings: Settings) -> SlurmClient:
    return SlurmClient.local(settings.scheduler, command_timeout=_SLURM_TIMEOUT_S)


# ---- submit ---------------------------------------------------------------------------------


def split_own_comment(args: list[str]) -> tuple[list[str], str | None]:
    """sbatch arguments without ``--comment`` (``--comment=X`` or ``--comment X``), and its value."""
    rest: list[str] = []
    own: str | None = None
    values = iter(args)
    for arg in values:
        if arg == "--comment":
            own = next(values, "")
        elif arg.startswith("--comment="):
            own = arg.partition("=")[2]
        else:
            rest.append(arg)
    return rest, own


def _submit(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    extra, own = split_own_comment([a for a in args.sbatch_args if a != "--"])
    if own is not None and args.own_comment is not None:
        raise OptInRefused(
            "give your own comment once, either as `lazarus submit --comment` or among the sbatch "
            "arguments; nothing was submitted"
        )
    comment = checked_comment(
        settings, args.policy, own if own is not None else args.own_comment, "nothing was submitted"
    )
    opts = [] if any(a.startswith("--open-mode") for a in extra) else ["--open-mode=append"]
    with waiting("submitting the job with sbatch"):
        job_id = run_async(_submitted, settings, SubmitRequest(args=[*opts, *extra], comment=comment))
    print(f"Submitted batch job {job_id}")
    return run_async(report_pickup, settings, job_id, args.wait)


async def _submitted(settings: Settings, request: SubmitRequest) -> int:
    async with _slurm(settings) as slurm:
        return (await slurm.submit(request)).job_id


# ---- watch ----------------------------------------------------------------------------------


def _watch(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    job_id = validate_job_id(args.job_id)
    with waiting(f"adding the opt-in to the comment of job {job_id}"):
        changed = run_async(_opt_in, settings, job_id, args.policy)
    print(f"job {job_id}: {'opt-in added to its comment' if changed else 'already opted in'}")
    return run_async(report_pickup, settings, job_id, args.wait)


async def _opt_in(settings: Settings, job_id: int, policy: str | None) -> bool:
    """Set the opt-in in the job's comment, keeping the rest; False when it already carries it.

    Refused, changing nothing, when Lazarus would not accept the comment, or when the job already has a
    workflow with another policy (or an ignored one): Lazarus reads a job's opt-in once, when it first
    sees the job, so a new comment would change nothing.
    """
    unchanged = f"the comment of job {job_id} is unchanged"
    if policy is not None:
        checked_comment(settings, policy, None, unchanged)  # the policy named first, before anything else
    existing = await workflow_status(await connect(settings), settings.cluster, job_id)
    if existing is not None:
        if existing.state == RecoveryState.IGNORED or policy not in (None, existing.policy_name):
            raise OptInRefused(
                f"{_verdict(existing)}; {unchanged}, because Lazarus reads a job's opt-in only "
                "when it first sees the job"
            )
        return False
    async with _slurm(settings) as slurm:
        job = await slurm.job(job_id)
        comment = checked_comment(settings, policy, job.comment, unchanged)
        return (await slurm.set_comment(job_id, comment)).changed


# ---- what Lazarus did -----------------------------------------------------------------------


async def report_pickup(settings: Settings, job_id: int, wait_s: float) -> int:
    """Wait up to ``wait_s`` for the job's workflow and print what Lazarus did; 1 when it ignores the job."""
    with waiting(f"waiting for Lazarus to pick up job {job_id}", quiet=wait_s == 0):
        status = await _wait_for_workflow(settings, job_id, wait_s)
    link = ui_link(settings, workflow_id(settings.cluster, job_id))
    if status is None:
        every = settings.discovery.interval.total_seconds()
        print(
            f"Lazarus has not picked up job {job_id} within {wait_s:g} s (it looks for new jobs every {every:g} s); "
            f"check later with `lazarus show {job_id}`"
        )
        return 0
    print(f"{_verdict(status)}: {link}")
    for note in status.opt_in_notes:
        print(f"  note: {note}")
    return 1 if status.state == RecoveryState.IGNORED else 0


def _verdict(status: JobStatus) -> str:
    """One clause: what Lazarus does with the job."""
    job = f"job {status.job_id}"
    if status.state == RecoveryState.IGNORED:
        return f"Lazarus ignores {job}: {status.stop_reason}"
    if status.state in (RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED):
        reason = f": {status.stop_reason}" if status.stop_reason else ""
        return f"Lazarus watched {job} (policy {status.policy_name}) until it ended: {status.state.value}{reason}"
    return f"Lazarus watches {job} (policy {status.policy_name}, mode {status.mode.value})"


async def _wait_for_workflow(settings: Settings, job_id: int, wait_s: float) -> JobStatus | None:
    client = await connect(settings)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        status = await workflow_status(client, settings.cluster, job_id)
        left = deadline - loop.time()
        if status is not None or left <= 0:
            return status
        await asyncio.sleep(min(_POLL_S, left))


async def workflow_status(client: Client, cluster: str, job_id: int) -> JobStatus | None:
    """The job workflow's status, None when it does not exist; a finished one's from its result."""
    handle = client.get_workflow_handle_for(JobRecoveryWorkflow.run, workflow_id(cluster, job_id))
    try:
        described = await handle.describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return None
        raise
    if described.status == WorkflowExecutionStatus.COMPLETED:
        return await handle.result(rpc_timeout=_QUERY_TIMEOUT)
    return await _query(handle, job_id)


async def _query(handle: WorkflowHandle[Any, Any], job_id: int) -> JobStatus:
    try:
        return await handle.query(JobRecoveryWorkflow.status, rpc_timeout=_QUERY_TIMEOUT)
    except (RPCError, WorkflowQueryFailedError) as exc:
        raise LazarusError(
            f"job {job_id} has a Lazarus workflow, but it did not answer "
            f"({getattr(exc, 'message', exc)}); is the control worker running?"
        ) from None
