"""The activity calls the job workflow performs for the effects of the event path.

Each takes one effect and returns its outcome, an input for
:func:`workflows.transitions.apply` (None when there is nothing to apply).
Options come from the presets in :mod:`workflows.options`. Workflow code only.

New commands in running workflows go behind ``workflow.patched`` with the ids
below: a workflow whose history began under older code keeps doing what that
code did, and its history still replays.
"""

from __future__ import annotations

from typing import TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from lazarus.models import names
    from lazarus.models.ledger import ClusterMode
    from lazarus.models.notify import NotifyResult
    from lazarus.models.recovery import ProgressView
    from lazarus.models.slurm import (
        CancelResult,
        JobActionResult,
        LiftResult,
        NodeActionResult,
        ReleaseRequest,
        RestartResult,
    )
    from workflows.effects import (
        Cancel,
        CancelFailed,
        Cancelled,
        CheckMode,
        CheckProgress,
        DrainFailed,
        ExpediteLifted,
        HoldReleased,
        Input,
        Isolate,
        LiftExpedite,
        ModeChecked,
        Notify,
        ProgressChecked,
        ReleaseHold,
        Requeue,
        Requeued,
        RequeueFailed,
    )
    from workflows.options import LEDGER_READ, NOTIFY, SLURM_CANCEL, SLURM_RESTART, SLURM_WRITE, TELEMETRY_READ

# Approved advice is checked against what telemetry reported while the workflow waited.
FRESH_STATE_PATCH = "act-on-fresh-state"
# Act mode reads the cluster-wide mode (kill switch) right before acting.
MODE_READ_PATCH = "read-kill-switch-before-acting"
# The fail-open release lifts only a hold Lazarus placed on the attempt it restarted.
RELEASE_GUARD_PATCH = "release-only-lazarus-holds"

R = TypeVar("R")


async def run_activity(
    name: str,
    *args: object,
    result_type: type[R],
    task_queue: str,
    summary: str,
    preset: workflow.ActivityConfig,
) -> R:
    """``workflow.execute_activity(name, *args, result_type=..., task_queue=..., summary=..., **preset)``, typed.

    The presets (:mod:`workflows.options`) set neither ``task_queue`` nor ``summary``; merging them into one
    ``ActivityConfig`` lets the type checker see that no option is passed twice. ``result_type`` makes
    the converter build an ``R``, which the untyped by-name overload cannot express.
    """
    config: workflow.ActivityConfig = {**preset, "task_queue": task_queue, "summary": summary}
    result: R = await workflow.execute_activity(name, args=args, result_type=result_type, **config)
    return result


# Workflows that ran before this patch decided on their own view when the progress check failed.
BLIND_WITHOUT_TELEMETRY = "blind-without-telemetry"


async def check_progress(effect: CheckProgress) -> Input:
    try:
        view = await run_activity(
            "telemetry_job_progress",
            effect.query,
            result_type=ProgressView,
            task_queue=effect.task_queue,
            summary=f"confirm no progress in attempt {effect.query.attempt}",
            preset=TELEMETRY_READ,
        )
    except ActivityError as exc:
        if workflow.patched(BLIND_WITHOUT_TELEMETRY):
            # no telemetry to confirm with: Lazarus is blind to the attempt, and a blind spell is not a hang
            return ProgressChecked(
                attempt=effect.query.attempt, view=ProgressView(known=False), unreachable=str(exc.cause or exc)[:300]
            )
        workflow.logger.warning(
            f"job {effect.query.job_id}: progress check failed ({exc.cause}); deciding on the "
            "last progress the workflow heard"
        )
        view = ProgressView(known=True)
    return ProgressChecked(attempt=effect.query.attempt, view=view)


LEDGER_ONLY_DRAINS = "drains-only-through-the-node-ledger"
"""Patch id: runs started before it drained a node directly when no ledger ran or it could not be reached."""


async def cluster_mode(effect: CheckMode) -> Input:
    """The kill switch as the node ledger keeps it, read by the worker that would act; unreadable is an answer
    too (the advice then waits for a person)."""
    if not workflow.patched(MODE_READ_PATCH):
        return ModeChecked(read=False)
    try:
        view = await run_activity(
            "ledger_cluster_mode",
            effect.ledger_workflow_id,
            result_type=ClusterMode,
            task_queue=effect.task_queue,
            summary="read the cluster-wide mode (kill switch) before acting",
            preset=LEDGER_READ,
        )
    except ActivityError as exc:
        workflow.logger.warning(f"cannot read the cluster-wide mode ({exc.cause or exc}); acting as monitor")
        return ModeChecked(error=str(exc.cause or exc))
    return ModeChecked(mode=view.mode)


async def isolate(effect: Isolate) -> Input | None:
    """Report the implicated nodes to the cluster's node ledger, the only path to a drain (one drain however
    many jobs blame a node, with corroboration from outside the job, within the drain budget). Without a
    ledger nothing is drained: the exclusion keeps the job off the node, and the advice says why."""
    missing = "no node ledger runs"
    if effect.ledger_workflow_id:
        ledger = workflow.get_external_workflow_handle(effect.ledger_workflow_id)
        try:
            for implication in effect.implications:
                await ledger.signal(names.RECORD_IMPLICATION, implication)
            return None
        except ApplicationError as exc:
            missing = f"node ledger unreachable ({exc})"
            workflow.logger.warning(missing)
    if effect.drain is None:
        return None
    if workflow.patched(LEDGER_ONLY_DRAINS):
        return DrainFailed(
            cause=f"{missing}; drains go only through the ledger, so "
            f"{','.join(effect.drain.nodes)} is excluded from this job only"
        )
    try:
        await run_activity(
            "slurm_drain_nodes",
            effect.drain,
            result_type=NodeActionResult,
            task_queue=effect.task_queue,
            summary=f"drain {','.join(effect.drain.nodes)}",
            preset=SLURM_WRITE,
        )
    except ActivityError as exc:
        return DrainFailed(cause=str(exc.cause))
    return None


async def requeue(effect: Requeue) -> Input:
    request = effect.request
    try:
        result = await run_activity(
            "slurm_restart_excluding",
            request,
            result_type=RestartResult,
            task_queue=effect.task_queue,
            summary=f"requeue job {request.job_id} excluding {','.join(request.exclude_nodes) or 'no nodes'}",
            preset=SLURM_RESTART,
        )
    except ActivityError as exc:
        return RequeueFailed(cause=str(exc.cause or exc))
    return Requeued(result=result)


async def cancel(effect: Cancel) -> Input:
    """Stop means stop: cancel the attempt the stop was decided for (the activity reads fresh state first and
    leaves an ended or moved-on job alone). The reason goes with the request, into the job's history."""
    request = effect.request
    try:
        result = await run_activity(
            "slurm_cancel_attempt",
            request,
            result_type=CancelResult,
            task_queue=effect.task_queue,
            summary=f"stop: cancel job {request.job_id} attempt {request.expected_attempt} ({request.reason})"[:200],
            preset=SLURM_CANCEL,
        )
    except ActivityError as exc:
        return CancelFailed(cause=str(exc.cause or exc))
    return Cancelled(result=result)


async def release(effect: ReleaseHold) -> Input | None:
    try:
        if effect.attempt is not None and workflow.patched(RELEASE_GUARD_PATCH):
            await run_activity(
                "slurm_release_lazarus_hold",
                ReleaseRequest(job_id=effect.job_id, attempt=effect.attempt),
                result_type=JobActionResult,
                task_queue=effect.task_queue,
                summary=f"fail-open: release a hold Lazarus placed restarting attempt {effect.attempt}",
                preset=SLURM_WRITE,
            )
        else:
            await run_activity(
                "slurm_release_job",
                effect.job_id,
                result_type=JobActionResult,
                task_queue=effect.task_queue,
                summary="fail-open: release if held",
                preset=SLURM_WRITE,
            )
    except ActivityError as exc:
        workflow.logger.warning(f"fail-open release of job {effect.job_id} failed: {exc.cause}")
        return None
    return HoldReleased()


async def lift_expedite(effect: LiftExpedite) -> Input:
    """The expedited attempt runs: set its priority back, so a later requeue Lazarus did not decide waits its turn
    (the activity leaves a job on another attempt, or at a priority someone else set, alone)."""
    request = effect.request
    try:
        result = await run_activity(
            "slurm_lift_expedite",
            request,
            result_type=LiftResult,
            task_queue=effect.task_queue,
            summary=f"lift the expedite of job {request.job_id} attempt {request.attempt} (priority {request.restore})",
            preset=SLURM_WRITE,
        )
    except ActivityError as exc:
        return ExpediteLifted(generation=effect.generation, lifted=False, note=str(exc.cause or exc)[:300])
    return ExpediteLifted(generation=effect.generation, lifted=result.changed, note=result.reason)


async def notify(effect: Notify) -> None:
    """Post the notice to the webhooks; a notice that cannot be delivered is logged, never an outcome."""
    notice = effect.notice
    try:
        await run_activity(
            "notify",
            notice,
            result_type=NotifyResult,
            task_queue=effect.task_queue,
            summary=f"notify: {notice.kind.value}",
            preset=NOTIFY,
        )
    except ActivityError as exc:
        workflow.logger.warning(f"notice {notice.id} was not delivered: {exc.cause or exc}")
