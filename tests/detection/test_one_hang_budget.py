"""One hang budget: the learner, the workflow's watchdog and the job opt-in bound it with the same policy clamp.

The learner (``HangBudget``) is the only thing that learns; the workflow (``workflows.timers``) turns the
budget telemetry sends into a deadline, and before one arrives applies the policy's own rule for the phase.
For every phase both say the same budget and the same deadline.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from lazarus.detection.hang import HangBudget
from lazarus.detection.progress_lines import parse_progress
from lazarus.models.policy import HangPhase, Policy
from lazarus.models.recovery import Attempt
from lazarus.telemetry.optin import parse_opt_in
from workflows import timers

T0 = datetime(2024, 5, 1, 12, 0, 0)
POLICY = Policy(
    hang_budget=timedelta(minutes=30),
    hang_budget_min=timedelta(seconds=60),
    hang_budget_max=timedelta(hours=1),
    startup_grace=timedelta(minutes=10),
    hang_step_multiple=8,
)


def learner(policy: Policy, lines: list[tuple[float, str]]) -> HangBudget:
    hang = HangBudget.for_attempt(policy, 0)
    for seconds, line in lines:
        hang.observe(parse_progress(line), T0 + timedelta(seconds=seconds))
    return hang


def heard(hang: HangBudget, with_budget: bool) -> Attempt:
    """The attempt as the workflow knows it from telemetry's digests (with or without the learned budget)."""
    return Attempt(
        index=0,
        started_at=T0,
        last_progress_at=hang.last_progress_at,
        max_step_interval=hang.slowest_step_interval,
        checkpointing=hang.phase is HangPhase.CHECKPOINT,
        hang_budget=hang.budget() if with_budget else None,
    )


def opted_in(**overrides) -> Policy:
    return parse_opt_in(json.dumps({"lazarus": {"policy": "default", **overrides}}), {"default": POLICY}).policy


STEADY = [(100, "LAZARUS step=1"), (110, "LAZARUS step=2"), (125, "LAZARUS step=3")]
SAVING = [*STEADY, (126, "LAZARUS phase=checkpoint step=3")]
SECOND_SAVE = [*SAVING, (526, "LAZARUS step=3 checkpoint=3"), (530, "LAZARUS phase=checkpoint step=4")]

CASES = {
    # name: (policy, progress lines, phase, budget)
    "start-up": (POLICY, [], HangPhase.STARTUP, timedelta(minutes=10)),
    "start-up, grace longer than the maximum": (
        POLICY.model_copy(update={"startup_grace": timedelta(hours=3)}),
        [],
        HangPhase.STARTUP,
        timedelta(hours=3),
    ),
    "start-up, grace below the minimum": (
        POLICY.model_copy(update={"startup_grace": timedelta(seconds=5)}),
        [],
        HangPhase.STARTUP,
        timedelta(seconds=60),
    ),
    "steady, no interval yet": (POLICY, STEADY[:1], HangPhase.TRAINING, timedelta(minutes=30)),
    "steady, learned interval": (POLICY, STEADY, HangPhase.TRAINING, timedelta(seconds=120)),
    "steady, learned below the minimum": (
        POLICY,
        [(0, "LAZARUS step=1"), (1, "LAZARUS step=2")],
        HangPhase.TRAINING,
        timedelta(seconds=60),
    ),
    "steady, learned above the maximum": (
        POLICY,
        [(0, "LAZARUS step=1"), (1000, "LAZARUS step=2")],
        HangPhase.TRAINING,
        timedelta(hours=1),
    ),
    "first save": (POLICY, SAVING, HangPhase.CHECKPOINT, timedelta(minutes=30)),
    "job override longer than the policy's (only tightens)": (
        opted_in(hang_budget=10**7, startup_grace=10**7),
        STEADY[:1],
        HangPhase.TRAINING,
        timedelta(minutes=30),
    ),
    "job override below the minimum": (opted_in(hang_budget=1), STEADY[:1], HangPhase.TRAINING, timedelta(seconds=60)),
    "job start-up override longer than the policy's (only tightens)": (
        opted_in(startup_grace=10**7),
        [],
        HangPhase.STARTUP,
        timedelta(minutes=10),
    ),
    "job override shorter than the policy's": (
        opted_in(hang_budget=300),
        STEADY[:1],
        HangPhase.TRAINING,
        timedelta(minutes=5),
    ),
    "job start-up override below the minimum": (
        opted_in(startup_grace=1),
        [],
        HangPhase.STARTUP,
        timedelta(seconds=60),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_learner_and_watchdog_agree_on_budget_and_deadline(name):
    policy, lines, phase, expected = CASES[name]
    hang = learner(policy, lines)
    assert hang.phase is phase and hang.budget() == expected
    for with_budget in (True, False):
        attempt = heard(hang, with_budget)
        assert timers.hang_budget(policy, attempt) == expected
        assert timers.hang_deadline(policy, attempt) == (hang.last_progress_at or T0) + expected


def test_a_later_save_is_allowed_the_multiple_of_the_slowest_one_telemetry_timed():
    hang = learner(POLICY, SECOND_SAVE)
    assert hang.budget() == timedelta(seconds=3200)  # 8 x 400 s
    assert timers.hang_deadline(POLICY, heard(hang, with_budget=True)) == T0 + timedelta(seconds=530 + 3200)


def test_a_learned_budget_out_of_bounds_is_clamped_again_by_the_watchdog():
    attempt = heard(learner(POLICY, STEADY), with_budget=True)
    assert timers.hang_budget(POLICY, attempt.model_copy(update={"hang_budget": timedelta(days=1)})) == timedelta(
        hours=1
    )
    assert timers.hang_budget(POLICY, attempt.model_copy(update={"hang_budget": timedelta(seconds=1)})) == timedelta(
        seconds=60
    )


def test_one_clamp_is_used_by_the_opt_in_the_learner_and_the_watchdog(monkeypatch):
    calls: list[HangPhase] = []
    clamp = Policy.clamp_hang_budget

    def spy(self: Policy, value: timedelta, phase: HangPhase = HangPhase.TRAINING) -> timedelta:
        calls.append(phase)
        return clamp(self, value, phase)

    monkeypatch.setattr(Policy, "clamp_hang_budget", spy)
    opted_in(hang_budget=600, startup_grace=60)
    assert calls == [HangPhase.TRAINING, HangPhase.STARTUP]
    hang = learner(POLICY, SAVING)
    calls.clear()
    hang.budget()
    assert calls == [HangPhase.CHECKPOINT]
    for attempt in (heard(hang, with_budget=True), heard(hang, with_budget=False)):
        calls.clear()
        timers.hang_budget(POLICY, attempt)
        assert calls == [HangPhase.CHECKPOINT]
