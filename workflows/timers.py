"""Watchdog budgets, computed from workflow state only (no clock reads here)."""

from __future__ import annotations

from datetime import datetime, timedelta

from lazarus.models.policy import Policy
from lazarus.models.recovery import Attempt


def hang_budget(policy: Policy, attempt: Attempt) -> timedelta:
    """How long the attempt may go without progress before it counts as hung.

    Telemetry learns the budget from every progress line and sends it with
    its digests; that value wins. Without it (older telemetry, or no digest
    yet), before the first progress line the start-up grace applies; during a
    checkpoint save (announced by the job) the maximum applies. Otherwise the
    budget is learned like NVRx does: a multiple of the slowest observed step
    interval, never below ``hang_budget_min`` nor above ``hang_budget_max``;
    until a step interval is known the configured ``hang_budget`` applies.
    """
    if attempt.last_progress_at is None:
        return max(policy.startup_grace, policy.hang_budget_min)
    if attempt.hang_budget is not None:
        # learned by telemetry from every progress line (lazarus.detection.hang.HangBudget), re-clamped here
        return min(max(attempt.hang_budget, policy.hang_budget_min), max(policy.hang_budget_max, policy.hang_budget_min))
    if attempt.checkpointing:
        # a save can take far longer than a step: allow the operator's maximum
        return max(policy.hang_budget_max, policy.hang_budget_min)
    if attempt.max_step_interval is None:
        budget = policy.hang_budget
    else:
        budget = attempt.max_step_interval * policy.hang_step_multiple
    return min(max(budget, policy.hang_budget_min), max(policy.hang_budget_max, policy.hang_budget_min))


def hang_deadline(policy: Policy, attempt: Attempt) -> datetime | None:
    """When the hang watchdog fires for a running attempt; None when it must not run."""
    if attempt.started_at is None or attempt.ended_at is not None:
        return None
    since = attempt.last_progress_at or attempt.started_at
    return since + hang_budget(policy, attempt)
