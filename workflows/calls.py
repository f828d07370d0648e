"""The activity calls the job workflow performs for the effects of the event path.

Each takes one effect and returns its outcome, an input for
:func:`workflows.transitions.apply` (None when there is nothing to apply).
Options come from the presets in :mod:`workflows.options`. Workflow code only.
"""

from __future__ import annotations

from typing import TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from lazarus.models import names
    from lazarus.models.notify import NotifyResult
    from lazarus.models.recovery import ProgressView
    from lazarus.models.slurm import JobActionResult, NodeActionResult, RestartResult
    from workflows.effects import (
        CheckProgress,
        DrainFailed,
        HoldReleased,
        Input,
        Isolate,
        Notify,
        ProgressChecked,
        ReleaseHold,
        Requeue,
        Requeued,
        RequeueFailed,
    )
    from workflows.options import NOTIFY, SLURM_RESTART, SLURM_WRITE, TELEMETRY_READ

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
        # no telemetry to confirm with: the workflow's own view decides (it was silent for the budget)
        workflow.logger.warning(
            f"job {effect.query.job_id}: progress check failed ({exc.cause}); deciding on the "
            "last progress the workflow heard"
        )
        view = ProgressView(known=True)
    return ProgressChecked(attempt=effect.query.attempt, view=view)


async def isolate(effect: Isolate) -> Input | None:
    """Report the implicated nodes through the cluster's node ledger (one drain however many jobs blame a node, within the drain
    budget), or directly when no ledger runs or it cannot be reached."""
    if effect.ledger_workflow_id:
        ledger = workflow.get_external_workflow_handle(effect.ledger_workflow_id)
        try:
            for implication in effect.implications:
                await ledger.signal(names.RECORD_IMPLICATION, implication)
            return None
        except ApplicationError as exc:
            workflow.logger.warning(f"node ledger unreachable ({exc}); draining directly")
    if effect.drain is None:
        return None
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


async def release(effect: ReleaseHold) -> Input | None:
    try:
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
