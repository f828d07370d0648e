"""A telemetry restart does not reset the hang clock: the term that hands over the lease hands over, with each
log offset, the job's last progress as it read it (attempt, step, read time), and the next term's clock runs on
from there. A hang that began just before telemetry was killed is still rung one budget after its last
progress; the new term never reads that progress line, since it reads on from the handed-over offsets.

Found by the 3-minute chaos soak (seed 1): a hang job went silent, telemetry was killed 8 s later, and the new
holder, whose clock started only at a first progress line of its own, never rang.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.detection.tail import FileTail
from lazarus.models.policy import Policy
from lazarus.models.recovery import ProgressDigest
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.telemetry.handover import progress_marks, saved
from lazarus.telemetry.tracker import JobTracker

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)
BLIND_AFTER = timedelta(seconds=10)
POLICY = Policy(hang_budget=timedelta(seconds=30), hang_budget_min=timedelta(seconds=10))
LOG = "/logs/7.out"


def running(restarts: int = 0) -> JobSnapshot:
    return JobSnapshot(job_id=7, state=JobState.RUNNING, nodes=["node1"], start_time=T0, restarts=restarts)


def old_term_tracker() -> JobTracker:
    """The term before: it read steps 1-5, one a second, then the job went silent."""
    t = JobTracker(job_id=7, layout_nodes=["node1"], policy=POLICY, log_paths=[LOG])
    t.observe(running(), T0)
    for step in range(1, 6):
        t.feed(LOG, step, f"LAZARUS step={step} loss=1.0", T0 + timedelta(seconds=step))
    return t


def silent_digests(t: JobTracker, start: datetime, seconds: int) -> list[ProgressDigest]:
    sent = []
    for s in range(seconds):
        now = start + timedelta(seconds=s)
        t.saw(now, BLIND_AFTER)
        sent += [e for e in t.digest_events(now, t.digest_interval()) if isinstance(e, ProgressDigest) and e.silent]
    return sent


def test_the_handed_over_offset_carries_the_jobs_last_progress():
    offset = saved(FileTail(offset=120, line_no=5), old_term_tracker())
    assert (offset.attempt, offset.step, offset.last_progress_at) == (0, 5, T0 + timedelta(seconds=5))
    assert progress_marks({LOG: offset}) == {LOG: offset}


def test_an_offset_of_a_job_without_progress_carries_none_and_starts_no_clock():
    t = JobTracker(job_id=7, layout_nodes=["node1"], policy=POLICY, log_paths=[LOG])
    t.observe(running(), T0)  # started, still loading: no progress line yet
    offset = saved(FileTail(offset=40, line_no=2), t)
    assert offset.last_progress_at is None and progress_marks({LOG: offset}) == {}


def test_the_new_terms_clock_runs_on_from_the_old_terms_last_progress():
    mark = saved(FileTail(offset=120, line_no=5), old_term_tracker())
    new = JobTracker(job_id=7, layout_nodes=["node1"], policy=POLICY, log_paths=[LOG])  # after the restart
    killed_at = T0 + timedelta(seconds=13)
    new.observe(running(), killed_at + timedelta(seconds=4))
    assert new.resume_progress(0, mark.last_progress_at, mark.step)
    rung = silent_digests(new, killed_at + timedelta(seconds=4), 60)
    assert len(rung) == 1  # once per silence
    budget = new.attempt.hang.budget()
    assert rung[0].last_progress_at == T0 + timedelta(seconds=5) and rung[0].step == 5
    assert budget <= POLICY.hang_budget  # no steps learned by this term: at most the policy's budget


def test_without_the_handover_the_new_term_never_rings():
    new = JobTracker(job_id=7, layout_nodes=["node1"], policy=POLICY, log_paths=[LOG])
    new.observe(running(), T0 + timedelta(seconds=17))
    assert silent_digests(new, T0 + timedelta(seconds=17), 120) == []


def test_a_mark_of_another_attempt_or_after_own_progress_is_not_taken():
    mark = saved(FileTail(offset=120, line_no=5), old_term_tracker())
    requeued = JobTracker(job_id=7, layout_nodes=["node1"], policy=POLICY, log_paths=[LOG])
    requeued.observe(running(restarts=1), T0 + timedelta(seconds=30))  # attempt 1, starting up
    assert not requeued.resume_progress(0, mark.last_progress_at, mark.step)
    assert silent_digests(requeued, T0 + timedelta(seconds=30), 120) == []  # start-up is the start-up watchdog's

    fresh = JobTracker(job_id=7, layout_nodes=["node1"], policy=POLICY, log_paths=[LOG])
    fresh.observe(running(), T0 + timedelta(seconds=20))
    fresh.feed(LOG, 9, "LAZARUS step=9 loss=1.0", T0 + timedelta(seconds=20))
    assert not fresh.resume_progress(0, mark.last_progress_at, mark.step)  # its own reading is newer
