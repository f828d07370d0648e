"""Watchdog deadlines, computed from workflow state only (no clock reads here).

The hang budget is learned in one place, telemetry's ``lazarus.detection.hang.HangBudget``, and arrives with
the progress digests (``attempt.hang_budget``). This module only turns a budget into a deadline; its fallback
before a learned budget arrives is the policy's own rule for the phase, the same one the learner applies.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from lazarus.models.policy import HangPhase, Policy
from lazarus.models.recovery import Attempt, HangBudgetInForce
from workflows.blindness import recheck_deadline


def hang_budget(policy: Policy, attempt: Attempt) -> timedelta:
    """How long the attempt may go without progress before it counts as hung.

    The budget telemetry learned for the current phase wins, bounded again by the policy's one clamp.
    Without it (older telemetry, or no digest yet) the policy's rule for the phase applies to what the
    workflow heard: the start-up grace before the first progress line, a multiple of the slowest step
    interval (``hang_budget`` until one is known), and ``hang_budget`` for a save (no save timed yet).
    """
    return hang_budget_in_force(policy, attempt).budget


def hang_budget_in_force(policy: Policy, attempt: Attempt) -> HangBudgetInForce:
    """:func:`hang_budget`, with the phase it applies to and whether telemetry learned it or the policy's
    rule gave it (what `lazarus show` prints next to the deadline)."""
    phase = HangPhase.of(progressed=attempt.last_progress_at is not None, checkpointing=attempt.checkpointing)
    if attempt.hang_budget is not None:
        return HangBudgetInForce(
            budget=policy.clamp_hang_budget(attempt.hang_budget, phase), phase=phase, source="telemetry"
        )
    return HangBudgetInForce(
        budget=policy.phase_hang_budget(phase, slowest_step=attempt.max_step_interval), phase=phase, source="policy"
    )


BACKSTOP = timedelta(minutes=30)
"""Where telemetry keeps the hang clock, the workflow's own hang timer waits at least this long after the last
progress: a telemetry that stopped signalling still cannot leave a hang unseen forever. Telemetry's keep-alive
(``lazarus.telemetry.tracker.KEEP_ALIVE``) comes sooner, so a healthy job's timer never fires."""


def hang_deadline(policy: Policy, attempt: Attempt, backstop: bool = False) -> datetime | None:
    """When the hang watchdog fires for a running attempt; None when it must not run.

    The silence is counted from the last sign of life telemetry reported (a step or a checkpoint start),
    or from the attempt's start before any. While Lazarus is blind to the attempt (an open blind spell), the
    watchdog only checks again now and then (:mod:`workflows.blindness`). Never counted from before the
    attempt's last resume: a suspended attempt (``scontrol suspend``) has no hang watchdog, and a resumed one
    gets a fresh budget. With ``backstop`` (telemetry keeps the attempt's hang clock and signals a silence that
    reaches the budget), the timer waits ``max(budget, BACKSTOP)`` instead, unless a blind spell is open: then
    the rechecks run as they always did.
    """
    if attempt.started_at is None or attempt.ended_at is not None or attempt.suspended_at is not None:
        return None
    since = attempt.last_progress_at or attempt.started_at
    if attempt.resumed_at is not None:
        since = max(since, attempt.resumed_at)
    budget = hang_budget(policy, attempt)
    recheck = recheck_deadline(attempt, budget)
    if recheck is not None:
        return max(since + budget, recheck)
    return since + (max(budget, BACKSTOP) if backstop else budget)
