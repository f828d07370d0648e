"""The hang watchdog's deadline, from workflow state only (no server).

The budget telemetry learned wins; until one arrives the policy's rule for the phase applies to what the
workflow heard. Either way the policy's one clamp bounds it (tests/detection/test_one_hang_budget.py shows the
learner says the same).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.models.policy import Policy
from lazarus.models.recovery import Attempt
from workflows.timers import hang_budget, hang_deadline

T = datetime(2026, 1, 1, tzinfo=UTC)
POLICY = Policy(
    hang_budget=timedelta(minutes=30),
    hang_budget_min=timedelta(seconds=60),
    hang_budget_max=timedelta(hours=2),
    startup_grace=timedelta(minutes=10),
    hang_step_multiple=8,
)


def running(**heard) -> Attempt:
    return Attempt(index=0, started_at=T, **heard)


def test_before_any_progress_the_startup_grace_applies_from_the_attempts_start():
    assert hang_budget(POLICY, running()) == timedelta(minutes=10)
    assert hang_deadline(POLICY, running()) == T + timedelta(minutes=10)


def test_without_a_learned_budget_the_budget_follows_the_slowest_step_within_bounds():
    since = T + timedelta(minutes=1)
    assert hang_budget(POLICY, running(last_progress_at=since)) == timedelta(minutes=30)  # no interval known yet
    assert hang_budget(POLICY, running(last_progress_at=since, max_step_interval=timedelta(seconds=20))) == timedelta(
        seconds=160
    )
    assert hang_budget(POLICY, running(last_progress_at=since, max_step_interval=timedelta(seconds=1))) == timedelta(
        seconds=60
    )  # never below the minimum
    assert hang_deadline(
        POLICY, running(last_progress_at=since, max_step_interval=timedelta(seconds=20))
    ) == since + timedelta(seconds=160)


def test_without_a_learned_budget_a_save_gets_the_operator_budget_as_the_learner_gives_a_first_save():
    saving = running(last_progress_at=T, max_step_interval=timedelta(seconds=1), checkpointing=True)
    assert hang_budget(POLICY, saving) == timedelta(minutes=30)


def test_the_learned_budget_wins_and_is_clamped_again():
    heard = running(
        last_progress_at=T,
        max_step_interval=timedelta(seconds=1),
        checkpointing=True,
        hang_budget=timedelta(minutes=50),
    )
    assert hang_budget(POLICY, heard) == timedelta(minutes=50)
    assert hang_budget(POLICY, heard.model_copy(update={"hang_budget": timedelta(days=1)})) == timedelta(hours=2)
    assert hang_deadline(POLICY, heard) == T + timedelta(minutes=50)


def test_no_watchdog_before_the_attempt_starts_or_after_it_ends():
    assert hang_deadline(POLICY, Attempt(index=0)) is None
    assert hang_deadline(POLICY, running(ended_at=T + timedelta(hours=1))) is None
