"""The three milestones of each attempt, measured from the fault that ended the one before it.

The seeds separate restarting the allocation, restoring training progress and completing training;
"running" is not "training". For every attempt the job workflow records when Slurm started it
(``Attempt.started_at``), its first progress line (``Attempt.first_progress_at``, ``first_step``) and, for a
restarted attempt, the checkpoint it resumed from and the steps lost (``resumed_from``, ``steps_lost``);
the failed attempt before it keeps its anomaly and when Lazarus's requeue was verified
(``Attempt.requeued_at``). :func:`of` reads them as one row per attempt, the shape `lazarus show --json`
gives under ``milestones`` (:class:`lazarus.models.recovery.AttemptMilestones`) and `lazarus goodput` takes as input (docs/milestones.md).

Pure: no clock, no I/O; the job workflow's ``status`` query, the CLI and the metrics all read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from lazarus.models.recovery import Attempt, AttemptMilestones
from lazarus.models.slurm import JobState

MILESTONES = ("requeued", "running", "progress_restored", "completed")
"""The milestones after a fault, in the order they happen."""


def of(attempts: Sequence[Attempt]) -> list[AttemptMilestones]:
    """One row per attempt, oldest first; plus a row for the next attempt while a verified requeue waits for it
    to start."""
    rows = []
    previous: Attempt | None = None
    for attempt in attempts:
        rows.append(_row(attempt.index, attempt, previous))
        previous = attempt
    if previous is not None and previous.requeued_at is not None:
        rows.append(_row(previous.index + 1, None, previous))
    return rows


def _row(index: int, attempt: Attempt | None, previous: Attempt | None) -> AttemptMilestones:
    fault_at, fault = _fault(previous)
    row = AttemptMilestones(
        attempt=index,
        fault_at=fault_at,
        fault=fault,
        requeued_at=previous.requeued_at if previous is not None else None,
    )
    if attempt is None:
        return row
    return row.model_copy(
        update={
            "running_at": attempt.started_at,
            "progress_restored_at": attempt.first_progress_at,
            "first_step": attempt.first_step,
            "resumed_from": attempt.resumed_from,
            "steps_lost": attempt.steps_lost,
            "completed_at": attempt.ended_at if attempt.end_state == JobState.COMPLETED else None,
            "ended_at": attempt.ended_at,
            "end_state": attempt.end_state,
        }
    )


def _fault(previous: Attempt | None) -> tuple[datetime | None, str | None]:
    """When the attempt before failed, and how: its anomaly's evidence, else its end."""
    if previous is None:
        return None, None
    if previous.anomaly is not None:
        return previous.anomaly.observed_at, previous.anomaly.diagnosis.signature or previous.anomaly.kind.value
    if previous.ended_at is not None:
        return previous.ended_at, previous.end_state.value if previous.end_state else None
    return None, None


def resumed(first_step: int, earlier: Sequence[Attempt]) -> tuple[int, int | None]:
    """The checkpoint a restarted attempt whose first progress line shows ``first_step`` resumed from, and the
    steps lost since it: the newest checkpoint saved by an earlier attempt that lies below ``first_step``
    (0 when none: the training started over), and the last step seen before minus that checkpoint (None when
    no step was seen before)."""
    saved = [a.last_checkpoint for a in earlier if a.last_checkpoint is not None and a.last_checkpoint < first_step]
    resumed_from = max(saved, default=0)
    steps = [a.last_step for a in earlier if a.last_step is not None]
    lost = max(0, max(steps) - resumed_from) if steps else None
    return resumed_from, lost
