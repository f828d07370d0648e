"""A blind spell is not a hang (the pure event path): when the hang watchdog is due and telemetry says it
cannot see the attempt, or cannot be asked at all, the attempt records a blind spell and the watchdog checks
again later; only a fresh observation without progress is a hang."""

from __future__ import annotations

from datetime import timedelta

from lazarus.models.recovery import MAX_BLIND_SPELLS, ProgressView
from lazarus.models.recovery import RecoveryState as S
from lazarus.models.slurm import JobState
from tests.workflows.harness import T0, ended, job_input, progress, started
from tests.workflows.test_transitions import feed, kinds
from workflows.blindness import MIN_RECHECK, recheck_after
from workflows.effects import ProgressChecked, WatchdogFired
from workflows.transitions import watchdog_deadline

BUDGET = timedelta(minutes=4)
BLIND = "telemetry has not seen the job since 12:00:30: the scheduler could not be queried (squeue timed out)"


def due():
    """Attempt 0 with progress at T0, at the moment its hang watchdog fires (it asks telemetry first)."""
    state, _ = feed(job_input(hang_budget=BUDGET), started(0), progress(0, 10, T0))
    deadline, _ = watchdog_deadline(state)
    state, effects = feed(state, WatchdogFired(), now=deadline)
    assert kinds(effects) == ["CheckProgress"]
    return state, deadline


def blind_view(seen_at=T0 + timedelta(seconds=30), **progress) -> ProgressView:
    return ProgressView(known=True, observed_at=seen_at, blind=BLIND, **progress)


def test_a_blind_telemetry_view_records_a_blind_spell_and_decides_nothing():
    state, now = due()
    state, effects = feed(state, ProgressChecked(0, blind_view()), now=now)
    attempt = state.attempts[0]
    assert state.state == S.WATCHING and attempt.anomaly is None and state.advice_history == []
    assert "Warn" in kinds(effects) and "Decide" not in kinds(effects)
    [spell] = attempt.blind_spells
    assert spell.since == T0 + timedelta(seconds=30) and spell.until is None and spell.reason == BLIND
    assert spell.seconds == (now - spell.since).total_seconds()


def test_the_watchdog_checks_again_after_a_quarter_of_the_budget_while_blind():
    state, now = due()
    state, _ = feed(state, ProgressChecked(0, blind_view()), now=now)
    assert watchdog_deadline(state)[0] == now + BUDGET / 4
    assert recheck_after(timedelta(seconds=8)) == MIN_RECHECK  # never a busy loop


def test_telemetry_that_cannot_be_asked_is_blindness_not_a_hang():
    state, now = due()
    state, effects = feed(
        state, ProgressChecked(0, ProgressView(known=False), unreachable="activity timed out"), now=now
    )
    [spell] = state.attempts[0].blind_spells
    assert state.attempts[0].anomaly is None and "Decide" not in kinds(effects)
    assert spell.reason == "telemetry unreachable (activity timed out)"
    assert spell.since == T0  # the last progress the workflow heard: nothing later is known


def test_later_blind_checks_extend_one_spell():
    state, now = due()
    state, _ = feed(state, ProgressChecked(0, blind_view()), now=now)
    later, _ = watchdog_deadline(state)
    state, _ = feed(state, WatchdogFired(), ProgressChecked(0, blind_view()), now=later)
    [spell] = state.attempts[0].blind_spells
    assert spell.checks == 2 and spell.checked_at == later and spell.since == T0 + timedelta(seconds=30)


def test_a_heartbeat_ends_the_spell_and_silence_seen_afterwards_is_a_hang():
    state, now = due()
    state, _ = feed(state, ProgressChecked(0, blind_view()), now=now)
    back = now + timedelta(seconds=20)
    heartbeat = progress(0, 10, T0).model_copy(update={"observed_at": back})  # seen again, no new step
    state, _ = feed(state, heartbeat, now=back)
    [spell] = state.attempts[0].blind_spells
    assert spell.until == back and spell.seconds == (back - spell.since).total_seconds()
    recheck, _ = watchdog_deadline(state)
    assert recheck < back  # no spell open: the hang deadline rules again, and it has passed
    state, _ = feed(state, WatchdogFired(), ProgressChecked(0, ProgressView(known=True, observed_at=back)), now=back)
    assert state.attempts[0].anomaly.source == "hang-watchdog"


def test_progress_read_while_blind_counts_and_the_spell_is_recorded():
    state, now = due()
    state, _ = feed(state, ProgressChecked(0, blind_view(step=42, last_progress_at=now)), now=now)
    attempt = state.attempts[0]
    assert attempt.last_step == 42 and attempt.anomaly is None and len(attempt.blind_spells) == 1
    assert watchdog_deadline(state)[0] == now + BUDGET


def test_the_end_of_the_attempt_ends_an_open_spell():
    state, now = due()
    state, _ = feed(state, ProgressChecked(0, blind_view()), now=now)
    state, _ = feed(state, ended(0, JobState.COMPLETED, 0), now=now + timedelta(seconds=40))
    assert state.state == S.COMPLETED
    assert state.attempts[0].blind_spells[0].until == now + timedelta(seconds=40)


def test_blind_spells_are_bounded_per_attempt():
    state, now = due()
    for _ in range(MAX_BLIND_SPELLS + 3):
        state, _ = feed(state, ProgressChecked(0, blind_view(seen_at=now)), now=now)
        now += timedelta(minutes=1)
        state, _ = feed(state, progress(0, 10, T0).model_copy(update={"observed_at": now}), now=now)
        now += timedelta(minutes=1)
    spells = state.attempts[0].blind_spells
    assert len(spells) == MAX_BLIND_SPELLS and spells[-1].checks == 4


def test_a_view_that_says_nothing_about_sight_is_fresh_as_before():
    """Telemetry older than blind spells sends neither field: its view decides as it always did."""
    state, now = due()
    state, _ = feed(state, ProgressChecked(0, ProgressView(known=True)), now=now)
    assert state.attempts[0].anomaly.source == "hang-watchdog" and state.attempts[0].blind_spells == []
