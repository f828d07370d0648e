"""Telemetry knows when it last saw each job (a fresh scheduler row and its logs read): its progress view says
when it is blind to a job, and its digests carry the last sighting as a heartbeat, sent at once when sight
comes back after a blind gap."""

from __future__ import annotations

from datetime import timedelta

from lazarus.telemetry.tracker import JobTracker
from tests.telemetry.test_tracker import T0, snap

WINDOW = timedelta(seconds=15)


def running() -> JobTracker:
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    t.saw(T0, WINDOW)
    return t


def test_a_job_seen_within_the_window_is_not_blind():
    t = running()
    view = t.progress_view(0, T0 + WINDOW, WINDOW)
    assert view.known and view.observed_at == T0 and view.blind is None


def test_a_job_not_seen_for_longer_than_the_window_is_blind_and_the_view_says_why():
    t = running()
    t.missed("the scheduler could not be queried (squeue timed out)")
    assert t.progress_view(0, T0 + timedelta(seconds=5), WINDOW).blind is None  # a short miss is no blind spell
    view = t.progress_view(0, T0 + timedelta(seconds=16), WINDOW)
    assert view.blind == (
        "telemetry has not seen the job since 12:00:00: the scheduler could not be queried (squeue timed out)"
    )


def test_a_job_never_seen_is_blind_and_a_stale_tracker_is_lagging():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    assert "has not seen the job yet" in t.progress_view(0, T0, WINDOW).blind
    t.saw(T0, WINDOW)
    assert t.progress_view(0, T0 + timedelta(minutes=1), WINDOW).blind.endswith("telemetry is lagging")


def test_progress_read_while_blind_is_in_the_view():
    t = running()
    t.missed("the scheduler has not answered for 20 s")
    t.feed("out", 1, "LAZARUS step=9", T0 + timedelta(seconds=20))
    view = t.progress_view(0, T0 + timedelta(seconds=20), WINDOW)
    assert view.step == 9 and view.blind is not None and view.observed_at == T0


def test_digests_carry_the_heartbeat():
    t = running()
    t.feed("out", 1, "LAZARUS step=1", T0)
    [digest] = t.digest_events(T0, timedelta(seconds=10))
    assert digest.observed_at == T0


def test_sight_back_after_a_blind_gap_makes_a_digest_due_at_once():
    t = running()
    t.feed("out", 1, "LAZARUS step=1", T0)
    t.digest_events(T0, timedelta(minutes=5))
    back = T0 + timedelta(seconds=40)
    t.missed("log unreadable: train.out cannot be opened")
    assert t.digest_events(back, timedelta(minutes=5)) == []  # no new step, not seen: nothing to say
    t.saw(back, WINDOW)
    [heartbeat] = t.digest_events(back, timedelta(minutes=5))
    assert heartbeat.observed_at == back and heartbeat.step == 1
    assert t.digest_events(back, timedelta(minutes=5)) == []  # once


def test_a_short_miss_sends_no_extra_digest():
    t = running()
    t.feed("out", 1, "LAZARUS step=1", T0)
    t.digest_events(T0, timedelta(minutes=5))
    t.missed("a read did not return within 2 s")
    t.saw(T0 + timedelta(seconds=3), WINDOW)
    assert t.digest_events(T0 + timedelta(seconds=3), timedelta(minutes=5)) == []
