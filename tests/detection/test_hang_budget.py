"""The hang budget learner: learned from the job's own pace, phase-aware, bounded, reset per attempt."""

from __future__ import annotations

from datetime import datetime, timedelta

from lazarus.detection.hang import HangBudget, HangPhase
from lazarus.detection.progress_lines import parse_progress
from lazarus.models.policy import Policy

T0 = datetime(2024, 5, 1, 12, 0, 0)
POLICY = Policy(
    hang_budget=timedelta(minutes=30),
    hang_budget_min=timedelta(seconds=60),
    hang_budget_max=timedelta(hours=1),
    startup_grace=timedelta(minutes=10),
    hang_step_multiple=8,
)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def step(budget: HangBudget, n: int, seconds: float) -> None:
    budget.observe(parse_progress(f"LAZARUS step={n}"), at(seconds))


def test_startup_uses_the_startup_grace():
    budget = HangBudget.for_attempt(POLICY, 0)
    assert budget.phase is HangPhase.STARTUP and budget.last_progress_at is None
    assert budget.budget() == timedelta(minutes=10)


def test_a_startup_grace_longer_than_the_maximum_is_honoured_but_never_below_the_minimum():
    slow_start = HangBudget.for_attempt(POLICY.model_copy(update={"startup_grace": timedelta(hours=3)}), 0)
    assert slow_start.budget() == timedelta(hours=3)  # configured, not learned: the learned maximum does not cap it
    instant = HangBudget.for_attempt(POLICY.model_copy(update={"startup_grace": timedelta(seconds=5)}), 0)
    assert instant.budget() == timedelta(seconds=60)


def test_before_two_reports_the_operator_budget_applies():
    budget = HangBudget.for_attempt(POLICY, 0)
    step(budget, 1, 100)
    assert budget.budget() == timedelta(minutes=30)


def test_the_budget_is_a_multiple_of_the_slowest_interval():
    budget = HangBudget.for_attempt(POLICY, 0)
    for n, t in enumerate([100, 110, 125, 130], start=1):
        step(budget, n, t)
    assert budget.slowest_step_interval == timedelta(seconds=15)
    assert budget.budget() == timedelta(seconds=120)
    assert budget.last_progress_at == at(130)  # the silence is counted from here


def test_the_learned_budget_is_clamped_to_the_operator_bounds():
    fast = HangBudget.for_attempt(POLICY, 0)
    step(fast, 1, 100)
    step(fast, 2, 101)
    assert fast.budget() == timedelta(seconds=60)  # 8 s learned, min is 60 s
    slow = HangBudget.for_attempt(POLICY, 0)
    step(slow, 1, 100)
    step(slow, 2, 1100)
    assert slow.budget() == timedelta(hours=1)  # 8000 s learned, max is 1 h


def test_a_checkpoint_phase_gets_its_own_longer_budget():
    budget = HangBudget.for_attempt(POLICY, 0)
    step(budget, 1, 100)
    step(budget, 2, 110)
    budget.observe(parse_progress("LAZARUS phase=checkpoint step=2"), at(111))
    assert budget.phase is HangPhase.CHECKPOINT
    assert budget.budget() == timedelta(minutes=30)  # far beyond the 80 s step budget
    budget.observe(parse_progress("LAZARUS step=2 checkpoint=2"), at(411))
    assert budget.slowest_checkpoint == timedelta(seconds=300)
    assert budget.slowest_step_interval == timedelta(seconds=10)  # the save did not count as a step


def test_the_silence_of_a_save_is_counted_from_its_start():
    budget = HangBudget.for_attempt(POLICY, 0)
    step(budget, 1, 100)
    budget.observe(parse_progress("LAZARUS phase=checkpoint step=1"), at(150))
    assert budget.last_progress_at == at(150) and budget.checkpoint_started_at == at(150)


def test_a_save_before_the_first_step_ends_the_startup_phase():
    budget = HangBudget.for_attempt(POLICY, 0)
    budget.observe(parse_progress("LAZARUS phase=checkpoint step=0"), at(30))
    assert budget.phase is HangPhase.CHECKPOINT and budget.last_progress_at == at(30)


def test_a_slow_save_raises_the_next_checkpoint_budget():
    budget = HangBudget.for_attempt(POLICY, 0)
    step(budget, 1, 0)
    budget.observe(parse_progress("LAZARUS phase=checkpoint step=1"), at(1))
    budget.observe(parse_progress("LAZARUS step=1 checkpoint=1"), at(401))
    budget.observe(parse_progress("LAZARUS phase=checkpoint step=2"), at(500))
    assert budget.budget() == timedelta(seconds=3200)  # 8 x 400 s, above the 30 min operator budget


def test_a_new_attempt_forgets_a_stale_checkpoint_start():
    budget = HangBudget.for_attempt(POLICY, 0)
    step(budget, 1, 100)
    budget.observe(parse_progress("LAZARUS phase=checkpoint step=1"), at(200))
    restarted = budget.start_attempt(1)
    assert restarted.phase is HangPhase.STARTUP and restarted.attempt == 1
    assert restarted.checkpoint_started_at is None and restarted.slowest_step_interval is None
    assert restarted.last_progress_at is None and restarted.budget() == timedelta(minutes=10)


def test_steps_going_backwards_are_ignored():
    budget = HangBudget.for_attempt(POLICY, 0)
    step(budget, 10, 100)
    step(budget, 5, 200)
    assert budget.last_step == 10 and budget.last_progress_at == at(100)


def test_the_learner_is_serialisable():
    budget = HangBudget.for_attempt(POLICY, 2)
    step(budget, 1, 100)
    step(budget, 2, 130)
    restored = HangBudget.model_validate_json(budget.model_dump_json())
    assert restored == budget and restored.budget() == budget.budget()
