"""`lazarus show` says when Lazarus was blind to an attempt, for how long and why."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.cli.timeline import render_timeline
from lazarus.models.policy import Mode
from lazarus.models.recovery import Attempt, BlindSpell, JobStatus, RecoveryState

T0 = datetime(2026, 11, 29, 12, tzinfo=UTC)


def status(*spells: BlindSpell) -> JobStatus:
    attempt = Attempt(index=0, nodes=["node1"], started_at=T0, blind_spells=list(spells))
    return JobStatus(
        cluster="c",
        job_id=7,
        state=RecoveryState.WATCHING,
        mode=Mode.ACT,
        policy_name="default",
        attempts=[attempt],
        advice=None,
        advice_history=[],
    )


def test_an_ended_spell_shows_its_span_and_reason():
    spell = BlindSpell(
        since=T0,
        until=T0 + timedelta(seconds=42),
        checked_at=T0 + timedelta(seconds=30),
        reason="the scheduler could not be queried",
        checks=3,
    )
    out = render_timeline(status(spell), "link")
    assert "    blind 12:00:00-12:00:42 (42 s, 3 hang check(s) waited): the scheduler could not be queried" in out


def test_a_spell_still_open_ends_now():
    spell = BlindSpell(since=T0, checked_at=T0 + timedelta(seconds=10), reason="telemetry unreachable")
    assert "blind 12:00:00-now (10 s" in render_timeline(status(spell), "link")
