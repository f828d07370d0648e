"""Telemetry keeps the hang clock: a watched job is signalled only when something the workflow needs happened.

The tracker reads every line every cycle, so the workflow need not hear each step: a digest goes out for the
first progress, a new checkpoint, a phase or budget change, sight regained, a keep-alive every ``KEEP_ALIVE``
while the job steps, and once (marked ``silent``) when the silence reaches the hang budget. Every digest says
that telemetry keeps the clock (``hang_clock``), so the workflow's own timer can be a backstop.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from lazarus.models.policy import Policy
from lazarus.models.recovery import ProgressDigest
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.telemetry.tracker import KEEP_ALIVE, JobTracker

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)
STEP = timedelta(seconds=10)
BLIND_AFTER = timedelta(seconds=10)
POLICY = Policy(hang_budget_min=timedelta(minutes=2))  # 8 x 10 s steps = 80 s, raised to 2 min


def snap(state: JobState = JobState.RUNNING) -> JobSnapshot:
    return JobSnapshot(job_id=7, state=state, nodes=["node1"], start_time=T0)


def stepping(minutes: float, step_every: timedelta = STEP) -> tuple[JobTracker, list[ProgressDigest], datetime]:
    """A tracker fed a step every ``step_every`` for ``minutes``, one cycle a second; the digests it sent."""
    t = JobTracker(job_id=7, layout_nodes=["node1"], policy=POLICY)
    t.observe(snap(), T0)
    sent: list[ProgressDigest] = []
    now, step = T0, 0
    while now < T0 + timedelta(minutes=minutes):
        if (now - T0) % step_every == timedelta(0):
            step += 1
            t.feed("out", step, f"LAZARUS step={step} loss=1.0", now)
        t.saw(now, BLIND_AFTER)
        sent += [e for e in t.digest_events(now, t.digest_interval()) if isinstance(e, ProgressDigest)]
        now += timedelta(seconds=1)
    return t, sent, now


def cycles(t: JobTracker, start: datetime, seconds: int, seen: bool = True) -> list[ProgressDigest]:
    sent: list[ProgressDigest] = []
    for s in range(seconds):
        now = start + timedelta(seconds=s)
        t.saw(now, BLIND_AFTER) if seen else t.missed("the scheduler could not be queried")
        sent += [e for e in t.digest_events(now, t.digest_interval()) if isinstance(e, ProgressDigest)]
    return sent


def test_a_job_stepping_every_10_s_is_signalled_a_few_times_an_hour_not_every_budget():
    _, sent, _ = stepping(minutes=120)
    # the first progress, the learned budget (once, then steady), then a keep-alive every 25 minutes
    assert 5 <= len(sent) <= 8, [d.last_progress_at for d in sent]
    assert all(d.hang_clock and not d.silent for d in sent)
    later = [d for d in sent if d.last_progress_at > T0 + timedelta(minutes=5)]
    gaps = [b.last_progress_at - a.last_progress_at for a, b in itertools.pairwise(later)]
    assert gaps and all(KEEP_ALIVE - STEP <= g <= KEEP_ALIVE + STEP for g in gaps)


def test_a_silence_that_reaches_the_budget_is_signalled_once_within_a_cycle():
    t, _, now = stepping(minutes=10)
    budget = t.attempt.hang.budget()
    last = t.attempt.last_progress_at
    sent = cycles(t, now, int((last + budget - now).total_seconds()) + 60)
    [digest] = [d for d in sent if d.silent]
    assert digest.last_progress_at == last and digest.hang_budget == budget
    assert t.attempt.silence_reported_for == last


def test_the_silent_digest_goes_out_at_the_first_cycle_past_the_budget():
    t, _, now = stepping(minutes=10)
    budget, last = t.attempt.hang.budget(), t.attempt.last_progress_at
    before = cycles(t, now, int((last + budget - now).total_seconds()))  # up to just before the budget
    assert not any(d.silent for d in before)
    [digest] = t.digest_events(last + budget, t.digest_interval())
    assert digest.silent


def test_progress_after_a_silence_restarts_the_clock_and_a_second_silence_is_signalled_again():
    t, _, now = stepping(minutes=10)
    budget = t.attempt.hang.budget()
    first = cycles(t, now, int(budget.total_seconds()) + 5)
    resume = now + budget + timedelta(seconds=5)
    t.feed("out", 999, "LAZARUS step=999 loss=1.0", resume)
    longer = t.attempt.hang.budget()  # learned again: the silence was the slowest step so far
    second = cycles(t, resume, int(longer.total_seconds()) + 5)
    assert sum(d.silent for d in first) == 1 and sum(d.silent for d in second) == 1
    assert [d.last_progress_at for d in second if d.silent] == [resume]


def test_a_checkpoint_is_signalled_at_once():
    t, _, now = stepping(minutes=10)
    t.feed("out", 500, "LAZARUS step=61 checkpoint=60", now)
    [digest] = t.digest_events(now, t.digest_interval())
    assert digest.checkpoint == 60 and not digest.silent


def test_telemetry_blind_for_a_budget_signals_so_that_the_workflow_records_a_blind_spell():
    """The logs keep growing but the scheduler is not answering: telemetry cannot vouch for the job, so after a
    budget without sight it says so (the workflow's check then records a blind spell, never a hang)."""
    t, _, now = stepping(minutes=10)
    budget = t.attempt.hang.budget()
    sent = []
    for s in range(int(budget.total_seconds()) + 5):
        at = now + timedelta(seconds=s)
        if s % 10 == 0:
            t.feed("out", 1000 + s, f"LAZARUS step={1000 + s} loss=1.0", at)
        t.missed("the scheduler could not be queried")
        sent += t.digest_events(at, t.digest_interval())
    assert sum(d.silent for d in sent) == 1
    assert t.blindness(now + budget, BLIND_AFTER) is not None  # what the workflow's check will hear
    back = cycles(t, now + budget + timedelta(seconds=10), 2)  # seen again: the heartbeat, no silence
    assert back and not back[0].silent and back[0].observed_at == now + budget + timedelta(seconds=10)


def test_no_silence_is_signalled_while_slurm_holds_the_attempt_suspended_and_a_resume_restarts_the_clock():
    t, _, now = stepping(minutes=10)
    budget = t.attempt.hang.budget()
    t.observe(snap(JobState.SUSPENDED), now)
    assert not any(d.silent for d in cycles(t, now, int(budget.total_seconds()) * 3))
    resumed = now + budget * 3
    t.observe(snap(), resumed)
    after = cycles(t, resumed, int(budget.total_seconds()) + 1)
    assert [d.last_progress_at for d in after if d.silent] == [t.attempt.last_progress_at]
    assert t.attempt.silence_reported_for == resumed


def test_before_the_first_progress_line_telemetry_keeps_no_clock():
    """The workflow has heard nothing from telemetry's clock yet: its own start-up watchdog rules."""
    t = JobTracker(job_id=7, layout_nodes=["node1"], policy=POLICY)
    t.observe(snap(), T0)
    assert cycles(t, T0, 3600 // 4) == [] and t.silence(T0 + timedelta(hours=1)) is None


def test_a_short_blindness_is_no_silence_even_past_a_short_budget():
    """The progress view calls telemetry blind only after ``blind_after``: before that the workflow's check would
    find the silence vouched for, so a blind clock must not ring sooner (a healthy job would be called hung)."""
    fast = Policy(hang_budget=timedelta(seconds=8), hang_budget_min=timedelta(seconds=4))
    t = JobTracker(job_id=7, layout_nodes=["node1"], policy=fast)
    t.observe(snap(), T0)
    for s in range(20):  # a step every 0.5 s, seen every second
        t.feed("out", s, f"LAZARUS step={s} loss=1.0", T0 + timedelta(seconds=s / 2))
    t.saw(T0 + timedelta(seconds=10), timedelta(seconds=15))
    assert t.attempt.hang.budget() == timedelta(seconds=4)
    sent = []
    for s in range(1, 20):  # the scheduler stops answering; the logs still grow
        at = T0 + timedelta(seconds=10 + s)
        t.feed("out", 100 + s, f"LAZARUS step={100 + s} loss=1.0", at)
        t.missed("the scheduler has not answered for 1 s")
        sent += [(s, d.silent) for d in t.digest_events(at, t.digest_interval())]
    assert [s for s, silent in sent if silent] == [16]  # blind for longer than 15 s: only now
