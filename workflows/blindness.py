"""Blind spells: a hang is missing progress that Lazarus could have seen (pure rules, no clock, no I/O).

When the hang watchdog is due and telemetry says it cannot see the attempt (the scheduler unreachable, the
log unreadable, telemetry lagging) or cannot be asked at all (the telemetry worker down), the watchdog does
not decide: the attempt records a blind spell (since when Lazarus was blind, why, how many checks found it
so) and the watchdog checks again a little later. The first fresh observation heard afterwards (a progress
digest's heartbeat, or a check that finds telemetry's view fresh) ends the spell; only then can silence be
a hang.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from lazarus.models.recovery import MAX_BLIND_SPELLS, Attempt, BlindSpell

MIN_RECHECK = timedelta(seconds=5)


def recheck_after(budget: timedelta) -> timedelta:
    """While blind, the watchdog checks again after a quarter of the hang budget (at least 5 s): soon enough
    that a job that really hangs is caught shortly after sight returns, rare enough that an outage of the
    scheduler costs few checks per job."""
    return max(budget / 4, MIN_RECHECK)


def open_spell(attempt: Attempt) -> BlindSpell | None:
    """The attempt's blind spell that has not ended yet, if any."""
    spell = attempt.blind_spells[-1] if attempt.blind_spells else None
    return spell if spell is not None and spell.until is None else None


def last_seen(attempt: Attempt, reported: datetime | None, now: datetime) -> datetime:
    """The last time Lazarus is known to have seen the attempt: the newest of telemetry's word, its heartbeat,
    the attempt's last progress and its start (``now`` when none is known)."""
    return max(
        (t for t in (reported, attempt.observed_at, attempt.last_progress_at, attempt.started_at) if t), default=now
    )


def went_blind(attempt: Attempt, since: datetime, reason: str, now: datetime) -> BlindSpell:
    """Record that a hang check at ``now`` found Lazarus blind since ``since``: extend the open spell, or open
    one (after the first ``MAX_BLIND_SPELLS``, the last one is reopened and counts the checks)."""
    reason = reason[:500]
    spell = open_spell(attempt)
    if spell is None and len(attempt.blind_spells) >= MAX_BLIND_SPELLS:
        spell = attempt.blind_spells[-1]
        spell.until = None
    if spell is None:
        spell = BlindSpell(since=since, checked_at=now, reason=reason)
        attempt.blind_spells.append(spell)
        return spell
    spell.checked_at, spell.reason, spell.checks = now, reason, spell.checks + 1
    return spell


def observed(attempt: Attempt, at: datetime | None) -> BlindSpell | None:
    """Telemetry saw the attempt at ``at``: keep the newest heartbeat, and end an open spell that began before
    it. Returns the spell that ended, if any."""
    if at is None:
        return None
    if attempt.observed_at is None or at > attempt.observed_at:
        attempt.observed_at = at
    spell = open_spell(attempt)
    if spell is None or at <= spell.since:
        return None
    spell.until = at
    return spell


def recheck_deadline(attempt: Attempt, budget: timedelta) -> datetime | None:
    """While a spell is open, the watchdog fires no earlier than this (None: no spell, the hang deadline rules)."""
    spell = open_spell(attempt)
    return spell.checked_at + recheck_after(budget) if spell else None
