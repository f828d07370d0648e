"""`lazarus show` says who keeps the hang clock: where telemetry does, a silence of the budget is checked at once
and the deadline shown is the workflow's backstop, not when a hang would be called."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.cli.timeline import hang_line
from lazarus.models.policy import HangPhase
from lazarus.models.recovery import HangBudgetInForce

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)
BUDGET = HangBudgetInForce(budget=timedelta(minutes=2), phase=HangPhase.TRAINING, source="telemetry")


def test_with_telemetry_keeping_the_clock_the_deadline_shown_is_the_backstop():
    line = hang_line(BUDGET, T0 + timedelta(minutes=30), telemetry_clock=True)
    assert "budget 120 s" in line and "kept by telemetry" in line and "the backstop fires at" in line


def test_without_it_the_deadline_is_when_the_watchdog_fires():
    line = hang_line(BUDGET, T0 + timedelta(minutes=2))
    assert "kept by telemetry" not in line and "), fires at " in line
